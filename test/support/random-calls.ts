import type { ProposedCall } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import type { Policy } from "../../src/policy/index.js";

/** One of the values, drawn by a seeded generator. */
export type Pick = <T>(values: readonly T[]) => T;

/** A policy and the values random conversations over it draw from. */
export interface Domain {
  policy: Policy;
  task: (pick: Pick) => { name: string; arguments: Record<string, Value> }[];
  /** Argument values by parameter name (null for the others). */
  values: Record<string, readonly Value[]>;
  /** Results of JSON tools. */
  results: readonly Value[];
}

/** A call of one of the policy's tools, each argument drawn from the domain's values. */
export function randomCall(domain: Domain, pick: Pick): ProposedCall {
  const tool = pick([...domain.policy.tools.values()]);
  const args: Record<string, Value> = {};
  for (const parameter of tool.parameters)
    args[parameter.name] = pick(domain.values[parameter.name] ?? [null]);
  return { name: tool.name, arguments: args };
}
