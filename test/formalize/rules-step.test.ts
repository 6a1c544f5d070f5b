import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { jsonSchemaGrammar } from "../../src/base/json-grammar.js";
import { declarationsOf, formulaPattern, rulesSchema, withRules } from "../../src/formalize/rules-step.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Gbnf } from "../support/gbnf.js";

// Issue 32 item 7: the translator's rules are written under a grammar built from its own
// declarations, so no answer fails on an undeclared proposition or a duplicate id.
const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
type Raw = Record<string, unknown> & {
  manual: Record<string, string>;
  rules?: Record<string, unknown>[];
  constraints?: Record<string, unknown>[];
};
// The shipped policies a translator could write: those that read settings from the system prompt
// (the SOPBench ones) put `${name}` in their formulas and switch rules with `if:`, which the rules
// step does not offer.
const shipped = readdirSync(root("policies"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => parse(readFileSync(root(`policies/${entry.name}/policy.yaml`), "utf8")) as Raw)
  .filter((policy) => policy.settings === undefined);
const travel = shipped.find((policy) => policy.policy === "travel") as Raw;

/** A policy's rules and constraints as the rules step writes them: under the sentence each formalizes. */
function stepAnswer(policy: Raw): Record<string, Record<string, unknown>[]> {
  const answer: Record<string, Record<string, unknown>[]> = {};
  for (const sentence of Object.keys(policy.manual))
    for (const entry of [...(policy.rules ?? []), ...(policy.constraints ?? [])]) {
      const { id, sentence: _, ...rest } = entry as { id: string; sentence?: string };
      if (id === sentence || (!(id in policy.manual) && id.startsWith(`${sentence}_`)))
        answer[sentence] = [...(answer[sentence] ?? []), rest];
    }
  return answer;
}

function grammarOf(policy: Raw): Gbnf {
  return new Gbnf(jsonSchemaGrammar(rulesSchema(declarationsOf(policy) ?? { sentences: [], atoms: [] })));
}

describe("the rules step", () => {
  test("admits every shipped policy's rules and constraints, and the merged policy loads", () => {
    assert.ok(shipped.length >= 4, "travel and the tau2 policies at least");
    for (const policy of shipped) {
      const answer = stepAnswer(policy);
      const count = Object.values(answer).flat().length;
      assert.ok(count > 0, policy.policy as string);
      const grammar = grammarOf(policy);
      assert.ok(grammar.matches(JSON.stringify(answer)), `${policy.policy}: its rules`);
      const merged = withRules(policy, answer) as Raw;
      assert.equal((merged.rules?.length ?? 0) + (merged.constraints?.length ?? 0), count);
      const loaded = parsePolicy(JSON.stringify(merged), "merged.json");
      assert.equal(loaded.rules.length + loaded.constraints.length, count, policy.policy as string);
    }
  });

  test("refuses an undeclared proposition, a wrong arity, a sentence twice, an unknown sentence", () => {
    const grammar = grammarOf(travel);
    const bad = [
      '{"P1": [{"ltl": "G(book_flight -> O checked(route))"}]}',
      '{"P1": [{"ltl": "G(flight -> O checked(route))"}]}',
      '{"P1": [{"template": "precedence", "a": "checked(route)", "b": "booked(route)"}]}',
      '{"P3": [{"on": "book_flight", "require": "a.travel_class == \'economy\'"}]}',
      '{"P1": [{"ltl": "F checked(route)"}], "P1": [{"ltl": "F long(route)"}]}',
      '{"P2": [{"ltl": "F checked(route)"}], "P1": [{"ltl": "F long(route)"}]}',
      '{"P9": [{"ltl": "F checked(route)"}]}',
      '{"P1": [{"id": "P1", "ltl": "F checked(route)"}]}',
      '{"P1": [{"ltl": "Gchecked(route)"}]}',
      '{"P1": [{"ltl": "checked(route) Ulong(route)"}]}',
      '{"P1": [{"ltl": "G((checked(route)) -> F(long(route)"}]}',
    ];
    for (const text of bad) assert.equal(grammar.matches(text), false, text);
    const good = [
      '{"P1": [{"ltl": "G((flight(route) | train(route)) -> O checked(route))"}, {"ltl": "F true"}]}',
      '{"P1": [{"ltl": "F checked(route)"}], "P2": [{"ltl": "G !flight(route)"}]}',
      '{"P3": [{"on": "flight(route)", "require": "a.travel_class == \'economy\'"}]}',
      '{"P5": [{"template": "precedence", "a": "seats_checked(route)", "b": "flight(route)"}]}',
      '{"P1": [{"ltl": "checked(route) U long(route)", "applies_to": "requested"}]}',
    ];
    for (const text of good) assert.ok(grammar.matches(text), text);
  });

  test("numbers the ids: the sentence's own first, then ID_2, ID_3, with the sentence quoted", () => {
    const merged = withRules(travel, {
      P1: [{ ltl: "F checked(route)" }, { ltl: "F long(route)" }],
      P3: [{ on: "flight(route)", require: "true" }],
    }) as Raw;
    assert.deepEqual(merged.rules, [
      { id: "P1", ltl: "F checked(route)" },
      { id: "P1_2", ltl: "F long(route)", sentence: travel.manual.P1 },
    ]);
    assert.deepEqual(merged.constraints, [{ id: "P3", on: "flight(route)", require: "true" }]);
    assert.equal(withRules(travel, { P9: [{ ltl: "F true" }] }), undefined);
  });

  test("the formula pattern is the grammar's: both agree on random formulas", () => {
    const atoms = ["p", "q(x)", "r(x, y)"];
    const pattern = new RegExp(formulaPattern(atoms, 2));
    const grammar = new Gbnf(jsonSchemaGrammar({ type: "string", pattern: formulaPattern(atoms, 2) }));
    const pieces = [
      "p",
      "q(x)",
      "r(x, y)",
      "s",
      "(",
      ")",
      " ",
      "!",
      "G ",
      "G",
      "X",
      " U ",
      "U",
      " -> ",
      "&",
      "|",
      "true",
    ];
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let admitted = 0;
    for (let round = 0; round < 400; round++) {
      const text = Array.from({ length: 1 + random(7) }, () => pieces[random(pieces.length)]).join("");
      const matches = pattern.test(text);
      if (matches) admitted++;
      assert.equal(grammar.matches(JSON.stringify(text)), matches, text);
    }
    assert.ok(admitted > 10, `only ${admitted} admitted`);
  });
});
