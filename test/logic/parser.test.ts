import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { MentorError } from "../../src/errors/index.js";
import {
  and,
  atom,
  binary,
  type Formula,
  formatFormula,
  maxFormulaDepth,
  not,
  or,
  parseFormula,
  TRUE,
  unary,
  weakUntil,
} from "../../src/logic/index.js";
import { formulaArbitrary } from "../support/random-formulas.js";

const a = atom("a");
const b = atom("b");
const c = atom("c");

function syntaxError(text: string): MentorError {
  try {
    parseFormula(text);
  } catch (error) {
    assert.ok(error instanceof MentorError);
    assert.equal(error.code, "MNT_ERR_FORMULA_SYNTAX");
    return error;
  }
  assert.fail(`expected a syntax error for ${JSON.stringify(text)}`);
}

describe("parseFormula", () => {
  test("reads every operator", () => {
    assert.equal(parseFormula("X a"), unary("next", a));
    assert.equal(parseFormula("WX a"), unary("weakNext", a));
    assert.equal(parseFormula("F a"), unary("eventually", a));
    assert.equal(parseFormula("G a"), unary("always", a));
    assert.equal(parseFormula("Y a"), unary("yesterday", a));
    assert.equal(parseFormula("WY a"), unary("weakYesterday", a));
    assert.equal(parseFormula("O a"), unary("once", a));
    assert.equal(parseFormula("H a"), unary("historically", a));
    assert.equal(parseFormula("a U b"), binary("until", a, b));
    assert.equal(parseFormula("a R b"), binary("release", a, b));
    assert.equal(parseFormula("a S b"), binary("since", a, b));
    assert.equal(parseFormula("a W b"), weakUntil(a, b));
    assert.equal(parseFormula("a -> b"), or([not(a), b]));
    assert.equal(parseFormula("a <-> b"), and([or([not(a), b]), or([not(b), a])]));
    assert.equal(parseFormula("true & !false"), TRUE);
  });

  test("binds unary tighter than U, U tighter than &, & tighter than |, | tighter than ->", () => {
    assert.equal(parseFormula("!a U b"), binary("until", not(a), b));
    assert.equal(parseFormula("F a U b"), binary("until", unary("eventually", a), b));
    assert.equal(parseFormula("a & b U c"), and([a, binary("until", b, c)]));
    assert.equal(parseFormula("a | b & c"), or([a, and([b, c])]));
    assert.equal(parseFormula("a | b -> c"), or([not(or([a, b])), c]));
    assert.equal(parseFormula("a U b U c"), binary("until", a, binary("until", b, c)));
    assert.equal(parseFormula("a -> b -> c"), parseFormula("a -> (b -> c)"));
    assert.equal(parseFormula("X X a"), unary("next", unary("next", a)));
  });

  test("accepts the aliases ~ && || => <=>", () => {
    assert.equal(parseFormula("~a && b || c => a <=> b"), parseFormula("!a & b | c -> a <-> b"));
  });

  test("reads atoms with parameters and keys them without spaces", () => {
    const formula = parseFormula("G(booked( x , y ) -> O checked(route))");
    assert.equal(formatFormula(formula), "G(!booked(x,y) | O checked(route))");
    assert.equal(atom("booked", ["x", "y"]).key, "booked(x,y)");
    assert.equal(parseFormula("p(1, 'two')"), atom("p", ["1", "'two'"]));
  });

  test("keeps operator keywords whole: names that start with a keyword are atoms", () => {
    assert.equal(parseFormula("Fa"), atom("Fa"));
    assert.equal(parseFormula("Xray U G go"), binary("until", atom("Xray"), unary("always", atom("go"))));
  });

  test("reports the column and what was expected", () => {
    const cases: [string, number, RegExp][] = [
      ["a &", 4, /expected an atom.*found the end of the formula/],
      ["a b", 3, /expected an operator or the end of the formula, found 'b'/],
      ["(a | b", 7, /expected '\)' to close the '\(' at column 1/],
      ["G(a -> )", 8, /expected an atom.*found '\)'/],
      ["U a", 1, /expected a formula before the binary operator 'U'/],
      ["a # b", 3, /unexpected character '#'/],
      ["p(x,", 5, /expected an argument/],
      ["p(x y)", 5, /expected ',' or '\)' in the argument list/],
      ["p('x)", 3, /unterminated string/],
    ];
    for (const [text, column, message] of cases) {
      const error = syntaxError(text);
      assert.equal(error.location?.column, column, text);
      assert.match(error.message, message, text);
    }
  });

  test("reports the line in multi-line formulas", () => {
    const error = syntaxError("G(a ->\n  F )");
    assert.deepEqual(error.location, { line: 2, column: 5 });
  });

  test("names the source in errors", () => {
    assert.throws(() => parseFormula("a &", { source: "rule P1" }), /rule P1: expected/);
  });

  test("printing and parsing round-trip", () => {
    fc.assert(
      fc.property(formulaArbitrary(["a", "b", "c", "p1"], 5), (formula) => {
        assert.equal(parseFormula(formatFormula(formula)), formula);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("parseFormula: nesting depth", () => {
  function tooLarge(text: string): MentorError {
    try {
      parseFormula(text);
    } catch (error) {
      assert.ok(error instanceof MentorError, String(error));
      assert.equal(error.code, "MNT_ERR_FORMULA_TOO_LARGE");
      return error;
    }
    assert.fail("expected MNT_ERR_FORMULA_TOO_LARGE");
  }

  test("20,000 nested operators are an error at the column where the limit is passed, not a stack overflow", () => {
    const deep = `${"G ".repeat(20_000)}a`;
    // The 257th G, 2 × 256 characters on.
    assert.deepEqual(tooLarge(deep).location, { line: 1, column: 2 * maxFormulaDepth + 1 });
    for (const text of [
      `${"(".repeat(20_000)}a${")".repeat(20_000)}`,
      `${"!".repeat(20_000)}a`,
      `${"a U ".repeat(20_000)}a`,
      `${"a -> ".repeat(20_000)}a`,
      Array.from({ length: 20_001 }, (_, index) => `p${index % 3}`).join(" <-> "),
    ])
      tooLarge(text);
  });

  test(`${maxFormulaDepth} levels parse`, () => {
    let formula: Formula = a;
    for (let level = 0; level < maxFormulaDepth; level++) formula = unary("always", formula);
    assert.equal(parseFormula(`${"G ".repeat(maxFormulaDepth)}a`), formula);
    tooLarge(`${"G ".repeat(maxFormulaDepth + 1)}a`);
  });
});
