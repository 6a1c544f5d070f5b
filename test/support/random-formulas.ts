import fc from "fast-check";
import {
  and,
  atom,
  binary,
  FALSE,
  type Formula,
  implies,
  not,
  or,
  TRUE,
  unary,
} from "../../src/logic/index.js";

const pastUnary = ["yesterday", "weakYesterday", "once", "historically"] as const;
const futureUnary = ["next", "weakNext", "eventually", "always"] as const;
const futureBinary = ["until", "release"] as const;

/**
 * Random LTLf formulas with past operators over the given atoms. Past operators only
 * contain past operators, atoms and Boolean connectives (the fragment the engine accepts).
 */
export function formulaArbitrary(atomNames: readonly string[], maxDepth = 4): fc.Arbitrary<Formula> {
  const atoms = fc.constantFrom(...atomNames.map((name) => atom(name)));
  const leaf = fc.oneof(
    { weight: 12, arbitrary: atoms },
    { weight: 1, arbitrary: fc.constantFrom(TRUE, FALSE) },
  );

  const pastOf = (depth: number): fc.Arbitrary<Formula> => {
    if (depth <= 0) return leaf;
    const sub = pastOf(depth - 1);
    return fc.oneof(
      { weight: 3, arbitrary: leaf },
      { weight: 1, arbitrary: sub.map(not) },
      { weight: 1, arbitrary: fc.tuple(sub, sub).map((operands) => and(operands)) },
      { weight: 1, arbitrary: fc.tuple(sub, sub).map((operands) => or(operands)) },
      {
        weight: 4,
        arbitrary: fc
          .tuple(fc.constantFrom(...pastUnary), sub)
          .map(([kind, operand]) => unary(kind, operand)),
      },
      { weight: 2, arbitrary: fc.tuple(sub, sub).map(([left, right]) => binary("since", left, right)) },
    );
  };

  const futureOf = (depth: number): fc.Arbitrary<Formula> => {
    if (depth <= 0) return leaf;
    const sub = futureOf(depth - 1);
    return fc.oneof(
      { weight: 3, arbitrary: leaf },
      { weight: 1, arbitrary: sub.map(not) },
      { weight: 1, arbitrary: fc.tuple(sub, sub).map((operands) => and(operands)) },
      { weight: 1, arbitrary: fc.tuple(sub, sub).map((operands) => or(operands)) },
      { weight: 1, arbitrary: fc.tuple(sub, sub).map(([left, right]) => implies(left, right)) },
      {
        weight: 5,
        arbitrary: fc
          .tuple(fc.constantFrom(...futureUnary), sub)
          .map(([kind, operand]) => unary(kind, operand)),
      },
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.constantFrom(...futureBinary), sub, sub)
          .map(([kind, left, right]) => binary(kind, left, right)),
      },
      { weight: 3, arbitrary: pastOf(depth - 1) },
    );
  };

  return futureOf(maxDepth);
}

/** Random traces: each position is a subset of `atomNames`. */
export function traceArbitrary(atomNames: readonly string[], maxLength = 6): fc.Arbitrary<string[][]> {
  return fc.array(fc.subarray([...atomNames]), { maxLength });
}
