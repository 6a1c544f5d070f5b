import { brokenRules, Evaluator, verifyConversation } from "../evaluator/index.js";
import { Labeler, type LabelModel } from "../labeler/index.js";
import { type ChatMessage, systemText } from "../openai/index.js";
import { type Policy, policyForSystem } from "../policy/index.js";
import type { Label, TestConversation } from "./conversation.js";
import { type ManualSentence, sentencesOfPolicy } from "./manual.js";

/** The policy's verdict on one test conversation. */
export interface Verdict {
  compliant: boolean;
  /** The rules and constraints it breaks. */
  rules: string[];
  /** The manual sentences those rules formalize (a rule whose sentence is not found: its id). */
  sentences: string[];
  /** Why the conversation could not be judged (it then counts as a disagreement). */
  error?: string;
  /** Messages the labeler could not ground (the request, a text output), and why. */
  ungrounded?: string[];
}

/** A conversation where the policy and the label disagree. */
export interface Disagreement {
  conversation: string;
  expected: Label;
  got: Verdict;
  /**
   * `verdict`: one says compliant, the other not; `sentence`: both say not compliant but the
   * policy breaks no rule of the labelled sentence; `error`: the conversation could not be judged.
   */
  kind: "verdict" | "sentence" | "error";
}

export interface CheckResult {
  verdicts: Map<string, Verdict>;
  disagreements: Disagreement[];
}

export interface CheckOptions {
  /** Asked where the policy lets a model ground (`llm: true`); without one only the policy's rules ground. */
  labelModel?: LabelModel;
}

/**
 * The deterministic conflict checker: judges each conversation with the policy, as
 * `mentor verify` does (grounding by the policy's labeler first), and compares the verdict with
 * the conversation's label. Given the grounding, the same policy and suite give the same result.
 */
export async function checkSuite(
  policy: Policy,
  conversations: readonly TestConversation[],
  sentences: readonly ManualSentence[],
  options: CheckOptions = {},
): Promise<CheckResult> {
  // A conversation is judged by the policy its system prompt sets (its settings), each with its own evaluator.
  const judges = new Map<Policy, { evaluator: Evaluator; labeler: Labeler }>();
  const ruleSentences = sentencesOfPolicy(policy, sentences);
  const verdicts = new Map<string, Verdict>();
  const disagreements: Disagreement[] = [];
  for (const conversation of conversations) {
    const variant = policyForSystem(policy, systemText(conversation.messages as unknown as ChatMessage[]));
    let parts = judges.get(variant);
    if (!parts) {
      parts = {
        evaluator: new Evaluator(variant),
        labeler: new Labeler(variant, options.labelModel ? { model: options.labelModel } : {}),
      };
      judges.set(variant, parts);
    }
    const got = await judge(variant, parts.evaluator, parts.labeler, ruleSentences, conversation);
    verdicts.set(conversation.id, got);
    const kind = disagreement(conversation.expected, got);
    if (kind)
      disagreements.push({ conversation: conversation.id, expected: conversation.expected, got, kind });
  }
  return { verdicts, disagreements };
}

async function judge(
  policy: Policy,
  evaluator: Evaluator,
  labeler: Labeler,
  ruleSentences: ReadonlyMap<string, string>,
  conversation: TestConversation,
): Promise<Verdict> {
  try {
    const { messages, notes } = await labeler.ground(conversation.messages);
    const ungrounded = notes.flatMap((note) =>
      note.error === undefined ? [] : [`message ${note.message} (${note.kind}): ${note.error}`],
    );
    const verification = verifyConversation(policy, evaluator, messages);
    const rules = brokenRules(verification);
    const sentences = [...new Set(rules.map((rule) => ruleSentences.get(rule) ?? rule))];
    return {
      compliant: !verification.violated,
      rules,
      sentences,
      ...(ungrounded.length > 0 ? { ungrounded } : {}),
    };
  } catch (error) {
    return { compliant: false, rules: [], sentences: [], error: (error as Error).message };
  }
}

function disagreement(expected: Label, got: Verdict): Disagreement["kind"] | undefined {
  if (got.error !== undefined) return "error";
  if (expected.compliant !== got.compliant) return "verdict";
  if (!expected.compliant && expected.sentence !== undefined && !got.sentences.includes(expected.sentence))
    return "sentence";
  return undefined;
}

/** A disagreement in one line: `c3: expected violation of P2, got compliant`. */
export function disagreementText(entry: Disagreement): string {
  const expected = entry.expected.compliant ? "compliant" : `violation of ${entry.expected.sentence}`;
  const got =
    entry.got.error !== undefined
      ? `an error: ${entry.got.error}`
      : entry.got.compliant
        ? "compliant"
        : `violation of ${entry.got.sentences.join(", ")} (rules ${entry.got.rules.join(", ")})`;
  return `${entry.conversation}: expected ${expected}, the policy says ${got}`;
}
