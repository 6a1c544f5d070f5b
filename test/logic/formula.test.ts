import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  and,
  atom,
  atomsOf,
  END,
  FALSE,
  formatFormula,
  holds,
  not,
  or,
  parseFormula,
  TRUE,
  toNegationNormalForm,
  visit,
} from "../../src/logic/index.js";
import { formulaArbitrary, traceArbitrary } from "../support/random-formulas.js";

const a = atom("a");
const b = atom("b");
const c = atom("c");

describe("formulas", () => {
  test("are hash-consed: equal structure is the same object", () => {
    assert.equal(parseFormula("G(a -> F b)"), parseFormula("G (a->F(b))"));
    assert.notEqual(parseFormula("G a"), parseFormula("F a"));
  });

  test("normalize conjunctions and disjunctions", () => {
    assert.equal(and([a, and([b, c])]), and([c, b, a]));
    assert.equal(and([a, a, TRUE]), a);
    assert.equal(and([a, FALSE]), FALSE);
    assert.equal(or([a, TRUE]), TRUE);
    assert.equal(or([]), FALSE);
    assert.equal(and([]), TRUE);
    assert.equal(and([a, not(a)]), FALSE);
    assert.equal(or([END, not(END)]), TRUE);
    assert.equal(not(not(a)), a);
  });

  test("negation normal form pushes negation to atoms and past subformulas", () => {
    const cases: [string, string][] = [
      ["!X a", "WX !a"],
      ["!WX a", "X !a"],
      ["!(a U b)", "!a R !b"],
      ["!(a R b)", "!a U !b"],
      ["!F a", "G !a"],
      ["!G(a & b)", "F(!a | !b)"],
      ["!O a", "!O a"],
      ["!(a S b)", "!(a S b)"],
      ["!(H a & X b)", "!H a | WX !b"],
    ];
    for (const [input, expected] of cases) {
      assert.equal(toNegationNormalForm(parseFormula(input)), parseFormula(expected), input);
    }
  });

  test("negation normal form preserves the meaning", () => {
    fc.assert(
      fc.property(formulaArbitrary(["a", "b", "c"]), traceArbitrary(["a", "b", "c"]), (formula, trace) => {
        const letters = trace.map((letter) => new Set(letter));
        assert.equal(
          holds(toNegationNormalForm(formula), letters),
          holds(formula, letters),
          formatFormula(formula),
        );
      }),
      { numRuns: 3000 },
    );
  });

  test("atomsOf lists each atom once, sorted by key", () => {
    assert.deepEqual(
      atomsOf(parseFormula("G(c -> O(b S c)) & p(x) & a")).map((found) => found.key),
      ["a", "b", "c", "p(x)"],
    );
  });

  test("visit sees children before parents, each once", () => {
    const seen: string[] = [];
    visit(parseFormula("(a U b) & F(a U b)"), (node) => seen.push(formatFormula(node)));
    assert.deepEqual(seen, ["a", "b", "a U b", "F(a U b)", "F(a U b) & a U b"]);
  });
});
