import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { MentorError } from "../../src/errors/index.js";
import { Automaton, formatFormula, holds, parseFormula } from "../../src/logic/index.js";
import { formulaArbitrary, traceArbitrary } from "../support/random-formulas.js";

const atoms = ["a", "b", "c"];

function errorCode(body: () => unknown): string {
  try {
    body();
  } catch (error) {
    assert.ok(error instanceof MentorError, String(error));
    return error.code;
  }
  assert.fail("expected a MentorError");
}

describe("Automaton", () => {
  test("accepts exactly the traces on which the formula holds (reference semantics)", () => {
    fc.assert(
      fc.property(
        formulaArbitrary(atoms),
        fc.array(traceArbitrary(atoms, 8), { maxLength: 8 }),
        (formula, traces) => {
          const automaton = new Automaton(formula);
          for (const trace of traces) {
            const expected = holds(
              formula,
              trace.map((letter) => new Set(letter)),
            );
            assert.equal(
              automaton.isAccepting(automaton.run(trace)),
              expected,
              `${formatFormula(formula)} on ${JSON.stringify(trace)}`,
            );
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("colours agree with acceptance and are closed under continuation", () => {
    fc.assert(
      fc.property(formulaArbitrary(atoms), (formula) => {
        const automaton = new Automaton(formula);
        const compiled = automaton.compile();
        for (let state = 0; state < compiled.stateCount; state++) {
          const colour = compiled.colours[state];
          const accepting = compiled.accepting[state] === 1;
          if (colour === "PERM_SAT" || colour === "CURR_SAT") assert.ok(accepting);
          else assert.ok(!accepting);
          const successors = compiled.letters.map(
            (_, letter) => compiled.colours[compiled.step(state, letter)],
          );
          if (colour === "PERM_SAT") assert.ok(successors.every((next) => next === "PERM_SAT"));
          if (colour === "PERM_VIOL") assert.ok(successors.every((next) => next === "PERM_VIOL"));
          if (colour === "CURR_SAT" || colour === "CURR_VIOL") {
            // Some continuation leads to the other verdict, so some successor is not permanent
            // in the colour's own direction.
            assert.ok(successors.some((next) => next !== (colour === "CURR_SAT" ? "PERM_SAT" : "PERM_VIOL")));
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  test("the compiled tables agree with the lazy automaton", () => {
    fc.assert(
      fc.property(formulaArbitrary(atoms), traceArbitrary(atoms, 10), (formula, trace) => {
        const lazy = new Automaton(formula);
        const compiled = new Automaton(formula).compile();
        let lazyState = lazy.initial;
        let compiledState = compiled.initial;
        for (const letter of trace) {
          lazyState = lazy.step(lazyState, lazy.letterMask(letter));
          compiledState = compiled.step(compiledState, compiled.letters.indexOf(lazy.letterMask(letter)));
          assert.equal(compiled.accepting[compiledState] === 1, lazy.isAccepting(lazyState));
          assert.equal(compiled.colours[compiledState], lazy.colour(lazyState));
        }
      }),
      { numRuns: 500 },
    );
  });

  test("the alphabet decides which continuations count", () => {
    const formula = parseFormula("F(a & b)");
    const powerset = new Automaton(formula);
    assert.equal(powerset.colour(powerset.initial), "CURR_VIOL");
    // With one tool call per position, a and b never hold together.
    const oneHot = new Automaton(formula, { alphabet: [["a"], ["b"], []] });
    assert.equal(oneHot.colour(oneHot.initial), "PERM_VIOL");
  });

  test("letters ignore atoms the formula does not mention, and match parameterized atoms by key", () => {
    const automaton = new Automaton(parseFormula("G(booked(x, y) -> O checked(x))"));
    assert.deepEqual(
      automaton.atoms.map((atom) => atom.key),
      ["booked(x,y)", "checked(x)"],
    );
    assert.equal(automaton.letterMask(["checked(x)", "unrelated", "booked(x,y)"]), 0b11);
    assert.equal(automaton.colour(automaton.run([["booked(x,y)"]])), "PERM_VIOL");
    assert.equal(automaton.colour(automaton.run([["checked(x)"], ["booked(x,y)"]])), "PERM_SAT");
  });

  test("past operators see the whole history", () => {
    const automaton = new Automaton(parseFormula("G(push -> Y(!edit S test))"));
    const verdicts = [
      [["push"]],
      [["test"], ["push"]],
      [["test"], ["push"], ["edit"], ["push"]],
      [["test"], ["edit"], ["test"], ["push"]],
    ].map((trace) => automaton.isAccepting(automaton.run(trace)));
    assert.deepEqual(verdicts, [false, true, false, true]);
  });

  test("rejects future operators inside past operators", () => {
    assert.equal(
      errorCode(() => new Automaton(parseFormula("G(a -> O F b)"))),
      "MNT_ERR_FORMULA_UNSUPPORTED",
    );
  });

  test("enforces the state limit", () => {
    const formula = parseFormula("G(a -> F(b & F(c & F(d & F e))))");
    assert.equal(
      errorCode(() => new Automaton(formula, { maxStates: 3 }).compile()),
      "MNT_ERR_AUTOMATON_LIMIT",
    );
  });

  test("a state limit error names the formula's source and location when given", () => {
    const formula = parseFormula("G(a -> F(b & F(c & F(d & F e))))");
    const location = { file: "policy.yaml", line: 12, column: 9, path: "rules[3].ltl" };
    const automaton = new Automaton(formula, { maxStates: 3, source: { name: "rule P4", location } });
    assert.throws(
      () => automaton.compile(),
      (error: unknown) =>
        error instanceof MentorError &&
        error.code === "MNT_ERR_AUTOMATON_LIMIT" &&
        error.location === location &&
        error.message === "policy.yaml:12:9 (rules[3].ltl): the automaton of rule P4 exceeds 3 states",
    );
  });

  test("refuses to explore the powerset of too many atoms without an explicit alphabet", () => {
    const formula = parseFormula(Array.from({ length: 17 }, (_, index) => `F p${index}`).join(" & "));
    assert.equal(
      errorCode(() => new Automaton(formula)),
      "MNT_ERR_FORMULA_TOO_LARGE",
    );
    const automaton = new Automaton(formula, { alphabet: [["p0"], ["p1"]] });
    assert.equal(automaton.colour(automaton.initial), "PERM_VIOL");
  });

  test("states are residual formulas", () => {
    const automaton = new Automaton(parseFormula("G(a -> X b)"));
    const state = automaton.run([["a"]]);
    assert.equal(automaton.describeState(state), "!END & G(!a | X b) & b");
  });
});
