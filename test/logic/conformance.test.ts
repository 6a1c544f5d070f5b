import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  Automaton,
  type AutomatonOptions,
  atom,
  type Colour,
  declareTemplates,
  type Formula,
  parseFormula,
} from "../../src/logic/index.js";

// Vectors from ../shared/conformance/vectors.md, sections 1, 5 and 6.

/** `abc` → [["a"], ["b"], ["c"]]; digits (argument markers such as `a1b`) are dropped. */
function oneHot(word: string): string[][] {
  return [...word.replace(/[0-9]/g, "")].map((letter) => [letter]);
}

function verdict(
  formula: string,
  trace: string[][],
  options?: AutomatonOptions,
): { accepted: boolean; colour: Colour } {
  const automaton = new Automaton(parseFormula(formula), options);
  const state = automaton.run(trace);
  return { accepted: automaton.isAccepting(state), colour: automaton.colour(state) };
}

describe("conformance §1: plain LTLf with strong X on finished traces", () => {
  const words = ["a", "a1b", "aaa", "aab", "abab", "abc", "acb", "acca", "b", "bac", "bb", "cab", "cccab"];
  const table: [string, string][] = [
    ["G !a", "FFFFFFFFTFTFF"],
    ["G(a -> X G !a)", "FTFFFTTFTTTTT"],
    ["G(a -> F b)", "FTFTTTTFTFTTT"],
    ["G(a -> X b)", "FTFFTTFFTFTTT"],
    ["F b", "FTFTTTTFTTTTT"],
    ["!G !c", "FFFFFTTTFTFTT"],
    ["!b U a", "TTTTTTTTFFFTT"],
    ["(!b U a) | G !b", "TTTTTTTTFFFTT"],
    ["a R !b", "TTTTTTTTFFFTT"],
  ];
  for (const [formula, expected] of table) {
    test(formula, () => {
      words.forEach((word, index) => {
        assert.equal(
          verdict(formula, oneHot(word)).accepted,
          expected[index] === "T",
          `${formula} on ${word}`,
        );
      });
    });
  }

  test("test_partial_next cases", () => {
    assert.equal(verdict("G(x -> X y)", [["a"], ["x"]]).accepted, false);
    assert.equal(verdict("G(x -> X y)", [["a"], ["x"], ["y"]]).accepted, true);
    assert.equal(verdict("a", [["a"], ["b"]]).accepted, true);
    assert.equal(verdict("b", [["a"], ["b"]]).accepted, false);
    assert.equal(verdict("G(x -> X y)", [["x"], ["y"], ["z"]]).accepted, true);
  });
});

describe("conformance §5: four-colour verdicts of DECLARE templates", () => {
  const { existence, absence, response, precedence, chainResponse, notSuccession, init } = declareTemplates;
  const cases: [string, Formula, string, Colour][] = [
    ["Existence", existence(atom("decide")), "", "CURR_VIOL"],
    ["Existence", existence(atom("decide")), "x y", "CURR_VIOL"],
    ["Existence", existence(atom("decide")), "x decide y", "PERM_SAT"],
    ["Absence n=2", absence(atom("ask"), 2), "ask ask", "CURR_SAT"],
    ["Absence n=2", absence(atom("ask"), 2), "ask x ask ask", "PERM_VIOL"],
    ["Response", response(atom("refund"), atom("audit")), "refund", "CURR_VIOL"],
    ["Response", response(atom("refund"), atom("audit")), "refund x audit", "CURR_SAT"],
    ["Response", response(atom("refund"), atom("audit")), "refund audit refund", "CURR_VIOL"],
    ["Precedence", precedence(atom("verify"), atom("refund")), "refund", "PERM_VIOL"],
    ["Precedence", precedence(atom("verify"), atom("refund")), "refund verify", "PERM_VIOL"],
    ["Precedence", precedence(atom("verify"), atom("refund")), "verify refund", "PERM_SAT"],
    ["ChainResponse", chainResponse(atom("refund"), atom("audit")), "refund audit", "CURR_SAT"],
    ["ChainResponse", chainResponse(atom("refund"), atom("audit")), "refund x", "PERM_VIOL"],
    ["ChainResponse", chainResponse(atom("refund"), atom("audit")), "refund refund", "PERM_VIOL"],
    ["ChainResponse", chainResponse(atom("refund"), atom("audit")), "refund", "CURR_VIOL"],
    ["NotSuccession", notSuccession(atom("escalate"), atom("refund")), "refund escalate", "CURR_SAT"],
    ["NotSuccession", notSuccession(atom("escalate"), atom("refund")), "escalate x refund", "PERM_VIOL"],
    ["Init", init(atom("lookup")), "", "CURR_VIOL"],
    ["Init", init(atom("lookup")), "lookup x", "PERM_SAT"],
    ["Init", init(atom("lookup")), "x", "PERM_VIOL"],
    ["Existence of a choice", parseFormula("F(refund | reject | escalate)"), "reject", "PERM_SAT"],
    ["raw", response(atom("deploy"), atom("smoke_test")), "deploy", "CURR_VIOL"],
    ["raw", response(atom("deploy"), atom("smoke_test")), "deploy smoke_test", "CURR_SAT"],
  ];
  for (const [name, formula, word, colour] of cases) {
    const trace = word === "" ? [] : word.split(" ").map((letter) => [letter]);
    test(`${name} on [${word}] is ${colour}`, () => {
      // The source explores one-hot letters plus "other"; the full powerset must agree here too.
      const atoms = new Automaton(formula).atoms.map((found) => [found.key]);
      for (const options of [{}, { alphabet: [...atoms, []] }]) {
        const automaton = new Automaton(formula, options);
        assert.equal(automaton.colour(automaton.run(trace)), colour);
      }
    });
  }

  test("the templates are the formulas of the source", () => {
    assert.equal(absence(atom("ask"), 2), parseFormula("!F(ask & X F(ask & X F ask))"));
    assert.equal(precedence(atom("verify"), atom("refund")), parseFormula("(!refund U verify) | G !refund"));
    assert.equal(notSuccession(atom("escalate"), atom("refund")), parseFormula("G(escalate -> G !refund)"));
  });
});

describe("conformance §6: empty trace, weak next, end of trace", () => {
  const cases: [string, string[][], boolean][] = [
    ["G a", [], true],
    ["a", [], false],
    ["!a", [], true],
    ["F a", [], false],
    ["X(G a)", [["a"]], false],
    ["WX(a)", [["b"]], true],
    ["WX(false)", [["a"]], true],
    ["G(F x & F !x)", [], true],
    ["!(G(!request | F state_0))", [["request"]], true],
    ["!(G(!request | F state_0))", [["request"], ["state_0"]], false],
    ["!(G(!request | F state_0))", [], false],
  ];
  for (const [formula, trace, accepted] of cases) {
    test(`${formula} on ${JSON.stringify(trace)} is ${accepted ? "accepted" : "rejected"}`, () => {
      assert.equal(verdict(formula, trace).accepted, accepted);
    });
  }

  test("G(F x & F !x) rejects every non-empty trace", () => {
    for (const trace of [[["x"]], [[]], [["x"], []], [[], ["x"]], [["x"], [], ["x"]]]) {
      assert.equal(verdict("G(F x & F !x)", trace).accepted, false, JSON.stringify(trace));
    }
  });

  test("F(WX false) and F(!X(!false)) give the same automaton", () => {
    const left = new Automaton(parseFormula("F(WX false)")).compile();
    const right = new Automaton(parseFormula("F(!X(!false))")).compile();
    assert.equal(left.stateCount, right.stateCount);
    assert.deepEqual([...left.transitions], [...right.transitions]);
    assert.deepEqual([...left.accepting], [...right.accepting]);
  });
});
