import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { jsonSchemaGrammar } from "../../src/base/json-grammar.js";
import { parsePolicy, policyGrammar, policyJsonSchema } from "../../src/policy/index.js";
import { policySchema } from "../../src/policy/schema.js";
import { Gbnf } from "../support/gbnf.js";

// `mentor formalize`'s translator answers under a grammar derived from the loader's zod schema
// (issue 32, item 7): every policy the loader reads is in the grammar's language, and what the
// grammar admits has the loader's shape.
const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const policies = [
  "policies/travel/policy.yaml",
  "policies/tau2-mock/policy.yaml",
  "test/evaluator/fixtures/wire-transfer.yaml",
].map((path) => parse(readFileSync(root(path), "utf8")) as Record<string, unknown>);
const grammar = new Gbnf(policyGrammar());

describe("the policy grammar", () => {
  test("admits the shipped policies written as JSON, compact or indented, and they load", () => {
    for (const policy of policies) {
      for (const text of [JSON.stringify(policy), JSON.stringify(policy, null, 2)]) {
        assert.ok(grammar.matches(text), `${policy.policy} as JSON`);
        parsePolicy(text, "policy.json");
      }
    }
  });

  test("refuses what the loader's schema refuses: an unknown key, a wrong type, a name that is not a name, a missing section", () => {
    const travel = policies[0] as Record<string, unknown>;
    const bad: Record<string, unknown>[] = [
      { ...travel, rulez: [] },
      { ...travel, rules: [{ id: "P1", ltl: "F x", mode: "sometimes" }] },
      { ...travel, rules: [{ id: "P 1", ltl: "F x" }] },
      { ...travel, tools: { "check-distance": {} } },
      { ...travel, done: { max_refusals: "3" } },
      Object.fromEntries(Object.entries(travel).filter(([key]) => key !== "tools")),
    ];
    for (const value of bad) {
      assert.equal(policySchema.safeParse(value).success, false);
      assert.equal(grammar.matches(JSON.stringify(value)), false, JSON.stringify(value).slice(0, 200));
    }
  });

  test("what it admits has the schema's shape (random mutations of the shipped policies)", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const replacements: unknown[] = [null, 1, -2.5, true, "x", "not a name", [], {}, ["a"], { a: 1 }];
    const paths = (value: unknown, path: (string | number)[] = []): (string | number)[][] =>
      typeof value !== "object" || value === null
        ? [path]
        : [
            path,
            ...Object.entries(value).flatMap(([key, entry]) =>
              paths(entry, [...path, Array.isArray(value) ? Number(key) : key]),
            ),
          ];
    let admitted = 0;
    for (let round = 0; round < 300; round++) {
      const policy = structuredClone(policies[random(policies.length)]) as Record<string, unknown>;
      const all = paths(policy).filter((path) => path.length > 0);
      const path = all[random(all.length)] as (string | number)[];
      const parent = path
        .slice(0, -1)
        .reduce<Record<string | number, unknown>>(
          (at, key) => at[key] as Record<string | number, unknown>,
          policy,
        );
      const key = path.at(-1) as string | number;
      if (random(3) === 0 && !Array.isArray(parent)) delete parent[key];
      else parent[key] = replacements[random(replacements.length)];
      if (!grammar.matches(JSON.stringify(policy))) continue;
      admitted++;
      const parsed = policySchema.safeParse(policy);
      // Bounds on numbers and a parameter's `type`-or-`enum` are the loader's to report.
      const grammarGaps = parsed.error?.issues.every(
        (issue) => issue.code === "too_small" || issue.code === "custom",
      );
      assert.ok(parsed.success || grammarGaps, `${path.join(".")}: ${JSON.stringify(parsed.error?.issues)}`);
    }
    assert.ok(admitted > 20, `only ${admitted} mutations were admitted`);
  });

  test("optional properties may be left out, in the schema's order", () => {
    const schema = {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "string" }, c: { type: "boolean" } },
      required: ["b"],
      additionalProperties: false,
    };
    const small = new Gbnf(jsonSchemaGrammar(schema));
    for (const text of [
      '{"b": "x"}',
      '{"a": 1, "b": "x"}',
      '{"b": "x", "c": true}',
      '{"a": 1,"b":"x","c":false}',
    ])
      assert.ok(small.matches(text), text);
    for (const text of [
      "{}",
      '{"a": 1}',
      '{"b": "x", "a": 1}',
      '{"b": 1}',
      '{"b": "x",}',
      '{"b": "x", "d": 1}',
    ])
      assert.equal(small.matches(text), false, text);
    assert.equal(JSON.stringify(policyJsonSchema()).includes("$schema"), false);
  });

  test("a string's pattern: what the grammar admits matches it, and every plain match is admitted", () => {
    const patterns = ["^[a-c]+(?:-[0-9]{2,3})?$", "^(?:ab|c)*d?$", '^[^b"]{1,3}\\.?x?$', "^\\w+ \\d*$"];
    const alphabet = ["a", "b", "c", "d", "-", "1", "23", ".", "x", " ", '"', "\\", "_"];
    let seed = 3;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (const pattern of patterns) {
      const regex = new RegExp(pattern);
      const grammar = new Gbnf(jsonSchemaGrammar({ type: "string", pattern }));
      let admitted = 0;
      for (let round = 0; round < 300; round++) {
        const text = Array.from({ length: random(6) }, () => alphabet[random(alphabet.length)]).join("");
        const admits = grammar.matches(JSON.stringify(text));
        if (admits) admitted++;
        // `"` and `\` only where the pattern writes them as such (a class or `.` leaves them out).
        const writable = !/["\\]/.test(text);
        if (admits || writable)
          assert.equal(admits, regex.test(text), `${pattern} on ${JSON.stringify(text)}`);
      }
      assert.ok(admitted > 0, `${pattern}: nothing admitted`);
    }
    const quoted = new Gbnf(jsonSchemaGrammar({ type: "string", pattern: '^"(?:a|\\\\)"$' }));
    assert.ok(quoted.matches(JSON.stringify('"\\"')) && quoted.matches(JSON.stringify('"a"')));
    // Outside the subset read (a lookahead, an unanchored pattern): any string, as before.
    for (const pattern of ["^(?!a)b$", "ab"])
      assert.ok(new Gbnf(jsonSchemaGrammar({ type: "string", pattern })).matches('"zz"'), pattern);
  });
});
