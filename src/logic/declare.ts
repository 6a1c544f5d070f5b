import { MentorError } from "../errors/index.js";
import {
  always,
  and,
  binary,
  eventually,
  type Formula,
  implies,
  next,
  not,
  or,
  TRUE,
  unary,
} from "./formula.js";

/**
 * DECLARE templates as LTLf formulas. `a` and `b` are formulas (usually atoms).
 * Counting templates use `n` as in "at least n" / "at most n" / "exactly n" occurrences.
 */
export const declareTemplates = {
  /** `a` occurs at least `n` times (default once). */
  existence: (a: Formula, n = 1): Formula => atLeast(a, n),
  /** `a` occurs at most `n` times (default never). */
  absence: (a: Formula, n = 0): Formula => not(atLeast(a, n + 1)),
  /** `a` occurs exactly `n` times. */
  exactly: (a: Formula, n: number): Formula => and([atLeast(a, n), not(atLeast(a, n + 1))]),
  /** The trace starts with `a`. */
  init: (a: Formula): Formula => a,
  /** Every `a` is eventually followed by `b`. */
  response: (a: Formula, b: Formula): Formula => always(implies(a, eventually(b))),
  /** `b` does not occur before the first `a`. */
  precedence: (a: Formula, b: Formula): Formula => or([binary("until", not(b), a), always(not(b))]),
  /** Response and precedence together. */
  succession: (a: Formula, b: Formula): Formula =>
    and([declareTemplates.response(a, b), declareTemplates.precedence(a, b)]),
  /** Every `a` is immediately followed by `b`. */
  chainResponse: (a: Formula, b: Formula): Formula => always(implies(a, next(b))),
  /** Every `b` is immediately preceded by `a` (so the trace cannot start with `b`). */
  chainPrecedence: (a: Formula, b: Formula): Formula => always(implies(b, unary("yesterday", a))),
  /** Between two `a`s there is a `b`, and every `a` is followed by `b`. */
  alternateResponse: (a: Formula, b: Formula): Formula =>
    always(implies(a, next(binary("until", not(a), b)))),
  /** No `b` after an `a`. */
  notSuccession: (a: Formula, b: Formula): Formula => always(implies(a, always(not(b)))),
  /** If `a` occurs, `b` occurs too (before or after). */
  respondedExistence: (a: Formula, b: Formula): Formula => implies(eventually(a), eventually(b)),
  /** `a` and `b` both occur or neither does. */
  coExistence: (a: Formula, b: Formula): Formula =>
    and([implies(eventually(a), eventually(b)), implies(eventually(b), eventually(a))]),
  /** Not both `a` and `b` occur. */
  notCoExistence: (a: Formula, b: Formula): Formula => not(and([eventually(a), eventually(b)])),
  /** `a` or `b` occurs. */
  choice: (a: Formula, b: Formula): Formula => or([eventually(a), eventually(b)]),
  /** Exactly one of `a` and `b` occurs. */
  exclusiveChoice: (a: Formula, b: Formula): Formula =>
    and([or([eventually(a), eventually(b)]), not(and([eventually(a), eventually(b)]))]),
} as const;

export type DeclareTemplate = keyof typeof declareTemplates;

function atLeast(a: Formula, n: number): Formula {
  if (!Number.isInteger(n) || n < 0) {
    throw new MentorError("MNT_ERR_BAD_INPUT", `an occurrence count must be a whole number ≥ 0, got ${n}`);
  }
  if (n === 0) return TRUE;
  let formula = eventually(a);
  for (let count = 1; count < n; count++) formula = eventually(and([a, next(formula)]));
  return formula;
}
