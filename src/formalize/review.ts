import { formatFormula } from "../logic/index.js";
import type { Policy, PropositionSpec } from "../policy/index.js";
import { jsonValue } from "./answers.js";
import type { AgentEndpoint } from "./endpoint.js";
import { judgePrompt, judgeSchema, paraphrasePrompt } from "./prompts.js";

/** One rule or constraint beside its sentence, paraphrased back by the model without seeing it. */
export interface ReviewEntry {
  rule: string;
  sentence: string;
  paraphrase: string;
  /**
   * The judge's verdict (the model asked whether sentence and paraphrase require and forbid the
   * same calls): `same`, `different` (flagged), or `unjudged` when its answer did not parse.
   */
  verdict: "same" | "different" | "unjudged";
  difference?: string;
}

function propositionText(proposition: PropositionSpec): string {
  const parts = [`tool ${proposition.tool}`];
  if (proposition.whenText) parts.push(`when ${proposition.whenText}`);
  if (proposition.outcomeText) parts.push(`outcome ${proposition.outcomeText}`);
  return `${proposition.key}: a call of ${parts.join(", ")}`;
}

/** What the paraphraser sees of a rule or constraint: its formula and propositions, never its sentence. */
export function ruleForReview(policy: Policy, id: string): string | undefined {
  const rule = policy.rules.find((entry) => entry.id === id);
  if (rule) {
    const scope = rule.appliesTo === "all" ? "" : ` (applies to ${rule.appliesTo} bindings)`;
    return [
      `Rule: ${formatFormula(rule.formula)}${scope}`,
      "Propositions:",
      ...rule.propositions.map((proposition) => `- ${propositionText(proposition)}`),
    ].join("\n");
  }
  const constraint = policy.constraints.find((entry) => entry.id === id);
  if (constraint)
    return [
      `Constraint: every call matching ${constraint.on.key} must satisfy ${constraint.requireText}`,
      `- ${propositionText(constraint.on)}`,
    ].join("\n");
  return undefined;
}

/**
 * The human review step: each rule and constraint paraphrased by the model from its formula alone,
 * then a judge (the same model, a second question) compares paraphrase and sentence; a
 * `different` verdict flags the rule for a human to read.
 */
export async function reviewPolicy(policy: Policy, endpoint: AgentEndpoint): Promise<ReviewEntry[]> {
  const entries: ReviewEntry[] = [];
  for (const item of [...policy.rules, ...policy.constraints]) {
    const text = ruleForReview(policy, item.id);
    if (text === undefined) continue;
    const paraphrase = (await endpoint.ask("reviewer", paraphrasePrompt(text))).trim().split("\n")[0] ?? "";
    const judged = jsonValue(
      await endpoint.ask("reviewer", judgePrompt({ sentence: item.sentence, paraphrase }), judgeSchema),
    ) as { same?: unknown; difference?: unknown } | undefined;
    const verdict =
      typeof judged?.same === "boolean" ? (judged.same ? "same" : "different") : ("unjudged" as const);
    entries.push({
      rule: item.id,
      sentence: item.sentence,
      paraphrase,
      verdict,
      ...(typeof judged?.difference === "string" && judged.difference !== ""
        ? { difference: judged.difference }
        : {}),
    });
  }
  return entries;
}
