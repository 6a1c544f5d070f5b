import type { Policy } from "../policy/index.js";

/** AgentLTL's compliance label of a score: FULL at 1, VIOLATION at 0, PARTIAL between. */
export type ComplianceLabel = "FULL" | "PARTIAL" | "VIOLATION";

/** AgentLTL's weighted compliance of a finished run (`verify_trace`'s score and label). */
export interface Compliance {
  /** 1 − (the weights of the rules and constraints not met) / (all their weights), to 6 places; 0 if they weigh nothing. */
  score: number;
  label: ComplianceLabel;
  /** The rules and constraints not met, in the policy's order, with their weights. */
  violated: { id: string; weight: number }[];
}

/**
 * The weighted score of a run, as AgentLTL computes it: every rule and constraint counts with its
 * `weight` (severity plays no part); a rule is met when the whole run satisfies it (every
 * binding), a constraint when no call broke it.
 */
export function complianceOf(policy: Policy, unmet: ReadonlySet<string>): Compliance {
  const items = [...policy.rules, ...policy.constraints];
  const total = items.reduce((sum, item) => sum + item.weight, 0);
  const violated = items.filter((item) => unmet.has(item.id)).map(({ id, weight }) => ({ id, weight }));
  const lost = violated.reduce((sum, item) => sum + item.weight, 0);
  const score = total === 0 ? 0 : Math.round((1 - lost / total) * 1e6) / 1e6;
  return { score, label: score === 1 ? "FULL" : score === 0 ? "VIOLATION" : "PARTIAL", violated };
}
