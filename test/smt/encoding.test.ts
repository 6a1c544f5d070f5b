/**
 * The encoding agrees with the evaluator: for random expressions and random concrete argument
 * values, Z3 finds the constraint satisfiable with the arguments fixed to those values exactly
 * when `holdsIn` says it holds. Numbers are small integers and dyadic fractions, so that
 * JavaScript's doubles compute them exactly (Z3 reals are exact rationals).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import fc from "fast-check";
import {
  type BinaryOperator,
  type Expression,
  formatExpression,
  type HistoryFunctions,
  holdsIn,
  type Value,
} from "../../src/expression/index.js";
import { type SolverBackend, SolverClient, type SolverTool } from "../../src/smt/index.js";
import { findZ3Binary } from "../../src/smt/native.js";

// Both builds: the WASM one always, the native binary where it is installed.
const backends: SolverBackend[] = ["wasm", ...(findZ3Binary() === undefined ? [] : ["native" as const])];
const clients = backends.map((backend) => new SolverClient({ timeoutMs: 5000, backend }));
after(() => Promise.all(clients.map((client) => client.close())));

const tool: SolverTool = {
  name: "t",
  parameters: [
    { name: "s", type: "string" },
    { name: "u", type: "string" },
    { name: "n", type: "integer" },
    { name: "m", type: "integer" },
    { name: "r", type: "number" },
    { name: "b", type: "boolean" },
    { name: "e", type: { enum: ["economy", "business"] } },
    { name: "k", type: { enum: [1, 2, 3] } },
  ],
};

const task = { c: { f: 2, g: "ab", h: true, l: ["a", 1, null], x: 1.5, z: null } };
const history: HistoryFunctions = {
  last: (name) => (name === "v" ? { status: "ab", amount: 2.5 } : null),
  outcomes: () => [],
  held: (name) => name === "p",
  count: (name) => (name === "v" ? 2 : 0),
  values: (name, argument) => (name === "v" && argument === "s" ? ["a", "ab", ""] : []),
};

const span = { offset: 0, length: 0 };
const strings = ["", "a", "b", "ab", "ba", "é", "a\\b", "😀", "economy", "business"];
const integers = [-3, -1, 0, 1, 2, 3, 5];
const reals = [-2.5, -0.5, 0.25, 1.5, 2.5];

const literal: fc.Arbitrary<Expression> = fc
  .oneof(
    fc.constant(null),
    fc.boolean(),
    fc.constantFrom(...integers),
    fc.constantFrom(...reals),
    fc.constantFrom(...strings),
  )
  .map((value): Expression => ({ kind: "literal", value, ...span }));

const argument: fc.Arbitrary<Expression> = fc
  .oneof(
    { weight: 8, arbitrary: fc.constantFrom("s", "u", "n", "m", "r", "b", "e", "k").map((name) => [name]) },
    { weight: 1, arbitrary: fc.constantFrom(["missing"], ["s", "x"], ["n", 0]) },
  )
  .map((path): Expression => ({ kind: "reference", root: "arguments", path: [...path], ...span }));

const constant: fc.Arbitrary<Expression> = fc.oneof(
  fc
    .constantFrom(["c", "f"], ["c", "g"], ["c", "h"], ["c", "l"], ["c", "x"], ["c", "z"], ["c", "nope"])
    .map((path): Expression => ({ kind: "reference", root: "task", path: [...path], ...span })),
  fc.constantFrom<Expression>(
    {
      kind: "member",
      object: { kind: "call", name: "last", arguments: [{ kind: "literal", value: "v", ...span }], ...span },
      key: "status",
      ...span,
    },
    { kind: "call", name: "count", arguments: [{ kind: "literal", value: "v", ...span }], ...span },
    { kind: "call", name: "held", arguments: [{ kind: "literal", value: "p", ...span }], ...span },
    {
      kind: "call",
      name: "values",
      arguments: [
        { kind: "literal", value: "v", ...span },
        { kind: "literal", value: "s", ...span },
      ],
      ...span,
    },
  ),
);

const operators: BinaryOperator[] = ["||", "&&", "==", "!=", "<", "<=", ">", ">=", "in", "+", "-", "*", "/"];

const { expression } = fc.letrec<{ expression: Expression }>((tie) => ({
  expression: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: argument },
    { weight: 2, arbitrary: literal },
    { weight: 1, arbitrary: constant },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom(...operators), tie("expression"), tie("expression"))
        .map(([operator, left, right]): Expression => {
          // Divide by constants only (division by an argument is not encoded).
          if (operator === "/")
            right = { kind: "literal", value: [2, 4, 0.5, 0][left.offset % 4] ?? 2, ...span };
          return { kind: "binary", operator, left, right, ...span };
        }),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(tie("expression"), fc.array(tie("expression"), { maxLength: 3 })).map(
        ([left, elements]): Expression => ({
          kind: "binary",
          operator: "in",
          left,
          right: { kind: "list", elements, ...span },
          ...span,
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom<"!" | "-">("!", "-"), tie("expression"))
        .map(([operator, operand]): Expression => ({ kind: "unary", operator, operand, ...span })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom("contains", "startsWith", "endsWith" as const),
          tie("expression"),
          tie("expression"),
        )
        .map(
          ([name, target, argument]): Expression => ({
            kind: "method",
            name,
            target,
            arguments: [argument],
            ...span,
          }),
        ),
    },
    {
      weight: 1,
      arbitrary: tie("expression").map(
        (operand): Expression => ({ kind: "call", name: "len", arguments: [operand], ...span }),
      ),
    },
  ),
}));

const maybe = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: arbitrary });

const values = fc.record({
  s: maybe(fc.constantFrom(...strings)),
  u: maybe(fc.constantFrom(...strings)),
  n: maybe(fc.constantFrom(...integers)),
  m: maybe(fc.constantFrom(...integers)),
  r: maybe(fc.constantFrom(...reals, ...integers)),
  b: maybe(fc.boolean()),
  e: maybe(fc.constantFrom("economy", "business")),
  k: maybe(fc.constantFrom(1, 2, 3)),
});

const runs = Number(process.env.MENTOR_SMT_RUNS ?? 400);

for (const client of clients) {
  test(`encoding on ${client.backend} agrees with the evaluator on ${runs} random expressions and argument values`, async () => {
    let compared = 0;
    let unsupported = 0;
    let held = 0;
    await fc.assert(
      fc.asyncProperty(expression, values, async (constraint, fixed) => {
        const args: Record<string, Value> = {};
        for (const [name, value] of Object.entries(fixed)) if (value !== null) args[name] = value;
        const expected = holdsIn(constraint, { arguments: args, task, history });
        const result = await client.satisfiable({
          tool,
          constraints: [constraint],
          scope: { task, history },
          fixed,
          directFirst: false,
        });
        if (result.status === "unsupported") {
          unsupported++;
          return;
        }
        compared++;
        if (expected) held++;
        assert.equal(
          result.status,
          expected ? "sat" : "unsat",
          `${formatExpression(constraint)} with ${JSON.stringify(fixed)}`,
        );
      }),
      { numRuns: runs },
    );
    const summary = `compared ${compared} (${held} hold), unsupported ${unsupported}`;
    console.log(summary);
    assert.ok(compared >= runs * 0.8, summary);
    assert.ok(held >= compared * 0.05 && held <= compared * 0.95, summary);
  });
}
