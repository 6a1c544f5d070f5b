import { MentorError } from "../errors/index.js";
import { declareTemplates } from "./declare.js";
import { and, binary, eventually, FALSE, type Formula, next, not, or, TRUE, unary } from "./formula.js";

/** The comparisons of AgentLTL's `CalledNTimes` (`called_n`). */
export type CountComparison = "==" | ">=" | "<=" | ">" | "<";
export const countComparisons: readonly CountComparison[] = ["==", ">=", "<=", ">", "<"];

/**
 * AgentLTL's catalogue (agentltl 0.2.1, `_evaluator.py`) as LTLf formulas read at the first
 * position of a finished trace, with its meaning: the orderings compare FIRST occurrences and fail
 * when either side never occurs (`before(a, b)` is not DECLARE's precedence, which holds when `b`
 * never occurs). The arguments are formulas (in a policy: propositions, e.g. one per tool).
 */
export const agentltlTemplates = {
  /** `Called(t)`: t occurs at least once. */
  Called: (a: Formula): Formula => eventually(a),
  /** `CalledWith(t, args)`: `Called` of an atom that holds for t's calls with those arguments. */
  CalledWith: (a: Formula): Formula => eventually(a),
  /** `CalledWithResult(t, result)`: `Called` of an atom that holds for t's calls with that result. */
  CalledWithResult: (a: Formula): Formula => eventually(a),
  /** `CalledNTimes(t, n, op)`: the number of t's compared with n. */
  CalledNTimes: (a: Formula, n: number, op: CountComparison): Formula => {
    checkCount(n, 0, "n");
    switch (op) {
      case "==":
        return declareTemplates.exactly(a, n);
      case ">=":
        return declareTemplates.existence(a, n);
      case ">":
        return declareTemplates.existence(a, n + 1);
      case "<=":
        return declareTemplates.absence(a, n);
      case "<":
        return n === 0 ? FALSE : declareTemplates.absence(a, n - 1);
    }
  },
  /** `Before(a, b)`: first(a) < first(b), and both occur. */
  Before: (a: Formula, b: Formula): Formula => and([firstBefore(a, b), eventually(b)]),
  /** `After(a, b)`: first(a) > first(b), and both occur. */
  After: (a: Formula, b: Formula): Formula => and([firstBefore(b, a), eventually(a)]),
  /** `AllBefore(tools, gate)`: the gate occurs, and every tool's first occurrence precedes its first. */
  AllBefore: (tools: readonly Formula[], gate: Formula): Formula =>
    and([eventually(gate), ...tools.map((tool) => firstBefore(tool, gate))]),
  /** `BranchCalled(correct, wrong)`: the correct branch occurs and the wrong one (if given) never does. */
  BranchCalled: (correct: Formula, wrong?: Formula): Formula =>
    wrong === undefined ? eventually(correct) : and([eventually(correct), not(eventually(wrong))]),
  /** `CalledInOrder(tools)`: the tools occur as a subsequence (each match at a later position). */
  CalledInOrder: (tools: readonly Formula[]): Formula =>
    tools.reduceRight<Formula | undefined>(
      (rest, tool) => eventually(rest === undefined ? tool : and([tool, next(rest)])),
      undefined,
    ) ?? TRUE,
  /** `InstanceBefore(a, n, b, m)`: the n-th a precedes the m-th b (1-based), and both occur. */
  InstanceBefore: (a: Formula, n: number, b: Formula, m: number): Formula => {
    checkCount(n, 1, "n");
    checkCount(m, 1, "m");
    // Some position has seen n a's but fewer than m b's, and m b's occur in all.
    return and([
      eventually(and([atLeastSoFar(a, n), not(atLeastSoFar(b, m))])),
      declareTemplates.existence(b, m),
    ]);
  },
  /** `WithinSteps(a, b, n)`: b occurs at most n positions after the first a (at it included). */
  WithinSteps: (a: Formula, b: Formula, n: number): Formula => {
    checkCount(n, 0, "n");
    let within = b;
    for (let step = 0; step < n; step++) within = or([b, next(within)]);
    return binary("until", not(a), and([a, within]));
  },
} as const;

export type AgentltlTemplate = keyof typeof agentltlTemplates;

/** a occurs, with no b up to and including its first occurrence. */
function firstBefore(a: Formula, b: Formula): Formula {
  return binary("until", not(b), and([a, not(b)]));
}

/** At least `count` positions up to this one satisfy `a` (past operators: it holds from then on). */
function atLeastSoFar(a: Formula, count: number): Formula {
  let formula = unary("once", a);
  for (let seen = 1; seen < count; seen++) formula = unary("once", and([a, unary("yesterday", formula)]));
  return formula;
}

function checkCount(value: number, minimum: number, name: string): void {
  if (!Number.isInteger(value) || value < minimum)
    throw new MentorError("MNT_ERR_BAD_INPUT", `${name} must be a whole number ≥ ${minimum}, got ${value}`);
}
