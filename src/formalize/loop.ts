import type { LabelModel } from "../labeler/index.js";
import type { ChatTool } from "../openai/index.js";
import type { Policy } from "../policy/index.js";
import { policyJsonSchema } from "../policy/index.js";
import type { SolverClient } from "../smt/index.js";
import { type Contest, jsonValue, policyText, contests as readContests } from "./answers.js";
import { checkCandidate } from "./candidate.js";
import { type CheckResult, checkSuite, type Disagreement } from "./checker.js";
import { type Label, labelText, readConversations, type TestConversation } from "./conversation.js";
import type { AgentEndpoint } from "./endpoint.js";
import { type ManualSentence, manualText, quotesManual, splitManual, toolsSection } from "./manual.js";
import {
  contestsSchema,
  conversationsSchema,
  evaluatorPrompt,
  orchestratorPrompt,
  rulingSchema,
  translatorDisagreements,
  translatorFirst,
  translatorRepair,
  translatorRules,
} from "./prompts.js";
import { type ReviewEntry, reviewPolicy } from "./review.js";
import { declaredAtoms, loadedDeclarations, rulesSchema, withRules } from "./rules-step.js";

export interface FormalizeOptions {
  /** The manual's text (Markdown or plain). */
  manual: string;
  /** The agent's tools (OpenAI tool definitions). */
  tools: readonly ChatTool[];
  /** What the agent's users ask for, in a sentence (helps the translator write `task:`). */
  taskDescription?: string;
  /** The endpoint all three agents run on. */
  endpoint: AgentEndpoint;
  /** Rounds of translate → check → contest. Default 3. */
  iterations?: number;
  /** Translator answers per round to make a candidate load and lint clean. Default 3. */
  repairs?: number;
  /** Conversations the evaluator is asked for. Default 8. */
  conversations?: number;
  /** The file name candidates are loaded under (it prefixes every load error). Default `policy.yaml`. */
  file?: string;
  /** Paraphrase each rule of the final policy back and judge it against its sentence. Default false. */
  review?: boolean;
  /** Grounds what the policy lets a model ground (`llm: true`) in the checker; without one, rules only. */
  labelModel?: LabelModel;
  /** For linting constraints (they are not linted by the solver without one). */
  solver?: SolverClient;
  /** Progress, one line at a time. */
  onProgress?: (line: string) => void;
}

/** A contested label and how it was decided. */
export interface Ruling {
  round: number;
  conversation: string;
  evaluator: Label;
  translator: Label;
  quote: string;
  reason: string;
  /** Who decided: the orchestrator, or the checker (a quote not found in the manual, an unknown conversation). */
  by: "orchestrator" | "checker";
  winner: "evaluator" | "translator";
  why: string;
}

export interface RoundRecord {
  round: number;
  /**
   * Each translator answer of the round: whether it loads (`parsePolicy`, before lint), and its
   * load and lint problems (none: it loaded clean).
   */
  candidates: { problems: string[]; loaded: boolean }[];
  /** Did a candidate of this round load clean? (If not, the last clean one was checked.) */
  loaded: boolean;
  /** Disagreements of the policy checked in this round (none checked: no policy yet). */
  disagreements: Disagreement[];
  checked: boolean;
  contests: number;
}

export interface FormalizeResult {
  /**
   * `agreed`: a policy loads, lints clean and agrees with every conversation; `disagreements`:
   * a policy loads but disagreements remain after the last round; `no-suite`: a policy loads but
   * the evaluator wrote no usable conversation; `no-policy`: no candidate loaded clean.
   */
  outcome: "agreed" | "disagreements" | "no-suite" | "no-policy";
  /** The manual's sentences, with the ids the agents used. */
  sentences: ManualSentence[];
  /** The last candidate that loaded and linted clean. */
  policyText?: string;
  policy?: Policy;
  /** The lint warnings of that candidate. */
  warnings: string[];
  /** The test conversations with their final labels. */
  suite: TestConversation[];
  /** The final check of `policy` on `suite`. */
  final?: CheckResult;
  rounds: RoundRecord[];
  rulings: Ruling[];
  /** Problems with the evaluator's answers (conversations skipped). */
  suiteProblems: string[];
  review?: ReviewEntry[];
  /** Wall time, and per agent the requests and seconds. */
  seconds: number;
  agents: Record<string, { requests: number; seconds: number }>;
}

/**
 * The autoformalization loop: the translator writes a policy (every candidate loaded and linted,
 * its problems sent back verbatim until it loads clean), the evaluator writes labelled test
 * conversations, the conflict checker runs `verify` on each and lists the disagreements; the
 * translator fixes the policy or contests a label with a quoted sentence, which the orchestrator
 * decides by the manual. Stops on agreement or after `iterations` rounds.
 */
export async function formalize(options: FormalizeOptions): Promise<FormalizeResult> {
  const started = performance.now();
  const endpoint = options.endpoint;
  const progress = options.onProgress ?? (() => {});
  const iterations = options.iterations ?? 3;
  const repairs = options.repairs ?? 3;
  const file = options.file ?? "policy.yaml";
  const sentences = splitManual(options.manual);
  const manual = manualText(sentences);
  const sentenceIds = new Set(sentences.map((sentence) => sentence.id));
  const tools = toolsSection(options.tools);
  const task = options.taskDescription;

  let good: { text: string; policy: Policy; warnings: string[] } | undefined;
  let suite: TestConversation[] | undefined;
  const suiteProblems: string[] = [];
  const rounds: RoundRecord[] = [];
  const rulings: Ruling[] = [];
  let last: CheckResult | undefined;

  for (let round = 1; round <= iterations; round++) {
    progress(`round ${round}: translator`);
    const record: RoundRecord = {
      round,
      candidates: [],
      loaded: false,
      disagreements: [],
      checked: false,
      contests: 0,
    };
    rounds.push(record);
    // Where the endpoint takes a schema, the translator answers under the policy's (docs/formalize.md).
    const json = endpoint.structured;
    const contesting = good !== undefined && last !== undefined && suite !== undefined;
    let answer = await endpoint.ask(
      "translator",
      good && last && suite
        ? translatorDisagreements({
            manual,
            candidate: good.text,
            disagreements: last.disagreements,
            conversations: new Map(suite.map((conversation) => [conversation.id, conversation])),
            json,
          })
        : translatorFirst({ manual, tools, ...(task !== undefined ? { task } : {}), json }),
      contesting ? { anyOf: [policyJsonSchema(), contestsSchema] } : policyJsonSchema(),
    );
    // Contests come with the answer to the disagreements; they are decided before the new check.
    let contested: Contest[] = [];
    if (good && suite) {
      contested = readContests(answer);
      record.contests = contested.length;
      for (const contest of contested)
        rulings.push(await rule(contest, round, suite, manual, sentenceIds, endpoint));
    }
    for (let attempt = 0; ; attempt++) {
      // An answer that only contests keeps the policy as it was.
      const text = policyText(answer) ?? (attempt === 0 && contested.length > 0 ? good?.text : undefined);
      const check =
        text === undefined
          ? { problems: ["the answer has no ```yaml block with the policy"], warnings: [], loaded: false }
          : await checkCandidate(text, file, options.solver);
      record.candidates.push({ problems: check.problems, loaded: check.loaded });
      if (text !== undefined && check.policy) {
        good = { text, policy: check.policy, warnings: check.warnings };
        record.loaded = true;
        progress(`round ${round}: candidate ${attempt + 1} loads clean`);
        break;
      }
      progress(`round ${round}: candidate ${attempt + 1}: ${check.problems.length} problem(s)`);
      if (attempt >= repairs) break;
      // Declarations that load, rules that do not: the rules again under the declarations' grammar.
      const declared = endpoint.structured && text !== undefined ? loadedDeclarations(text, file) : undefined;
      if (declared) {
        const rules = await endpoint.ask(
          "translator",
          translatorRules({
            manual,
            candidate: text as string,
            problems: check.problems,
            atoms: declared.declarations.atoms,
          }),
          rulesSchema(declared.declarations),
        );
        const merged = withRules(declared.policy, jsonValue(rules));
        answer = merged ? JSON.stringify(merged, null, 2) : rules;
        continue;
      }
      answer = await endpoint.ask(
        "translator",
        translatorRepair({
          manual,
          candidate: text ?? answer,
          problems: check.problems,
          atoms: text === undefined ? [] : declaredAtoms(text),
          json: endpoint.structured,
        }),
        policyJsonSchema(),
      );
    }
    if (!good) continue;
    if (suite === undefined) {
      progress(`round ${round}: evaluator`);
      suite = await writeSuite(
        endpoint,
        { manual, tools, task, count: options.conversations ?? 8, sentenceIds },
        suiteProblems,
      );
    }
    if (suite.length === 0) break;
    progress(`round ${round}: conflict checker on ${suite.length} conversation(s)`);
    last = await checkSuite(
      good.policy,
      suite,
      sentences,
      options.labelModel ? { labelModel: options.labelModel } : {},
    );
    record.checked = true;
    record.disagreements = last.disagreements;
    progress(`round ${round}: ${last.disagreements.length} disagreement(s)`);
    if (last.disagreements.length === 0) break;
  }

  // The labels rulings changed after the last check: check once more so the result is current.
  if (good && suite && suite.length > 0 && rulings.some((ruling) => ruling.round === rounds.length)) {
    last = await checkSuite(
      good.policy,
      suite,
      sentences,
      options.labelModel ? { labelModel: options.labelModel } : {},
    );
  }
  const outcome: FormalizeResult["outcome"] = !good
    ? "no-policy"
    : !suite || suite.length === 0
      ? "no-suite"
      : last && last.disagreements.length === 0
        ? "agreed"
        : "disagreements";
  let review: ReviewEntry[] | undefined;
  if (options.review && good) {
    progress("review: paraphrasing the rules");
    review = await reviewPolicy(good.policy, endpoint);
  }
  const agents: FormalizeResult["agents"] = {};
  for (const exchange of endpoint.exchanges) {
    const entry = agents[exchange.agent] ?? { requests: 0, seconds: 0 };
    agents[exchange.agent] = entry;
    entry.requests++;
    entry.seconds += exchange.ms / 1000;
  }
  return {
    outcome,
    sentences,
    ...(good ? { policyText: good.text, policy: good.policy } : {}),
    warnings: good?.warnings ?? [],
    suite: suite ?? [],
    ...(last ? { final: last } : {}),
    rounds,
    rulings,
    suiteProblems,
    ...(review ? { review } : {}),
    seconds: (performance.now() - started) / 1000,
    agents,
  };
}

/** The evaluator's suite; an answer without usable conversations is asked once more, with the problems. */
async function writeSuite(
  endpoint: AgentEndpoint,
  input: {
    manual: string;
    tools: string;
    task: string | undefined;
    count: number;
    sentenceIds: ReadonlySet<string>;
  },
  problems: string[],
): Promise<TestConversation[]> {
  const prompt = evaluatorPrompt({
    manual: input.manual,
    tools: input.tools,
    ...(input.task !== undefined ? { task: input.task } : {}),
    count: input.count,
  });
  for (let attempt = 0; attempt < 2; attempt++) {
    const answer = await endpoint.ask("evaluator", prompt, conversationsSchema);
    const value = jsonValue(answer);
    const read =
      value === undefined
        ? { conversations: [], problems: ["the answer is not JSON"] }
        : readConversations(value, input.sentenceIds);
    problems.push(...read.problems);
    if (read.conversations.length > 0) return read.conversations;
    prompt.messages.push(
      { role: "assistant", content: answer },
      {
        role: "user",
        content: `No usable conversation: ${read.problems.slice(0, 5).join("; ")}. Answer with the JSON only.`,
      },
    );
  }
  return [];
}

/** Decides a contest: the checker rejects a quote that is not in the manual; the orchestrator rules on the rest. */
async function rule(
  contest: Contest,
  round: number,
  suite: TestConversation[],
  manual: string,
  sentenceIds: ReadonlySet<string>,
  endpoint: AgentEndpoint,
): Promise<Ruling> {
  const index = suite.findIndex((conversation) => conversation.id === contest.conversation);
  const conversation = suite[index];
  const translator: Label = contest.compliant
    ? { compliant: true }
    : {
        compliant: false,
        ...(contest.sentence !== undefined && sentenceIds.has(contest.sentence)
          ? { sentence: contest.sentence }
          : {}),
      };
  const base = {
    round,
    conversation: contest.conversation,
    translator,
    quote: contest.quote,
    reason: contest.reason,
  };
  if (!conversation)
    return {
      ...base,
      evaluator: { compliant: true },
      by: "checker",
      winner: "evaluator",
      why: `no conversation ${contest.conversation}`,
    };
  if (!quotesManual(contest.quote, manual))
    return {
      ...base,
      evaluator: conversation.expected,
      by: "checker",
      winner: "evaluator",
      why: "the quote is not a passage of the manual",
    };
  const answer = await endpoint.ask(
    "orchestrator",
    orchestratorPrompt({
      manual,
      conversation,
      proposed: labelText(translator),
      quote: contest.quote,
      reason: contest.reason,
    }),
    rulingSchema,
  );
  const value = jsonValue(answer) as { winner?: unknown; reason?: unknown } | undefined;
  const winner = value?.winner === "translator" ? "translator" : "evaluator";
  const why =
    typeof value?.reason === "string"
      ? value.reason
      : value?.winner === undefined
        ? "the orchestrator's answer did not parse; the label stands"
        : "";
  const ruling: Ruling = { ...base, evaluator: conversation.expected, by: "orchestrator", winner, why };
  if (winner === "translator") suite[index] = { ...conversation, expected: translator, source: "ruling" };
  return ruling;
}
