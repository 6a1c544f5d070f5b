import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  type CheckEnvironment,
  checkExpression,
  type Expression,
  evaluateExpression,
  type FieldType,
  parseExpression,
  type Scope,
  type Value,
  valuesEqual,
} from "../../src/expression/index.js";

/**
 * The checker's type problems are claims about every run: "never equal", "always false",
 * "gives null", "not one of the values". This property evaluates each flagged node in random
 * scopes whose values conform to the declarations (or are absent) and checks the claim.
 */

const argumentTypes: Record<string, FieldType> = {
  origin: "string",
  seats: "integer",
  price: "number",
  direct: "boolean",
  travel_class: { enum: ["economy", "business"] },
  passengers: "array",
  options: "object",
  extra: "any",
};
const environment: CheckEnvironment = {
  arguments: argumentTypes,
  outcome: { label: { enum: ["short", "long"] }, km: "number" },
  variables: { x: "string", n: "integer" },
  task: { request_travel: { urgent: "boolean", origin: "string" } },
  tools: { book_flight: { arguments: { seat: "string" } } },
  propositions: ["checked"],
};

const operands = [
  "a.origin",
  "a.seats",
  "a.price",
  "a.direct",
  "a.travel_class",
  "a.passengers",
  "a.options",
  "a.extra",
  "o.label",
  "o.km",
  "x",
  "n",
  "task.request_travel.urgent",
  "count('book_flight')",
  "held('checked')",
  "len(a.origin)",
  "pluck(a.passengers, 'a')",
  "subset(a.passengers, values('book_flight', 'seat'))",
  "where(a.passengers, 'a', values('book_flight', 'seat'))",
  "flat(a.passengers)",
  "except(a.passengers, values('book_flight', 'seat'))",
  "outcomes('book_flight')",
  "values('book_flight', 'seat')",
  "last('book_flight')",
  "a.origin.lower()",
  "a.origin.contains('a')",
  "'economy'",
  "'short'",
  "'first'",
  "''",
  "0",
  "2.5",
  "-1",
  "true",
  "false",
  "null",
  "[]",
  "['economy', 'first', 1]",
  "[1, 'a', null]",
];
const operators = ["==", "!=", "<", "<=", ">", ">=", "in", "+", "-", "*", "/", "%"];

const text = fc.constantFrom("", "a", "economy", "short", "first", "Paris");
function conformingValue(type: FieldType): fc.Arbitrary<Value> {
  switch (type) {
    case "string":
      return text;
    case "integer":
      return fc.integer({ min: -5, max: 5 });
    case "number":
      return fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(fc.oneof(text, fc.integer(), fc.constant(null)), { maxLength: 3 });
    case "object":
      return fc.dictionary(fc.constantFrom("a", "b"), fc.oneof(text, fc.integer()));
    case "any":
      return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Value>;
  }
  return fc.constantFrom(...type.enum);
}

/** An object with each declared field either absent or of its declared type. */
function recordOf(types: Record<string, FieldType>): fc.Arbitrary<Record<string, Value>> {
  const entries = Object.entries(types).map(([name, type]) =>
    fc.option(conformingValue(type), { nil: undefined }).map((value) => [name, value] as const),
  );
  return fc.tuple(...entries).map((pairs) => {
    const record: Record<string, Value> = {};
    for (const [name, value] of pairs) if (value !== undefined) record[name] = value;
    return record;
  });
}

const scopeArbitrary: fc.Arbitrary<Scope> = fc
  .tuple(
    recordOf(argumentTypes),
    recordOf({ label: { enum: ["short", "long"] }, km: "number" }),
    recordOf({ x: "string", n: "integer" }),
    recordOf({ urgent: "boolean", origin: "string" }),
    fc.nat({ max: 3 }),
    fc.boolean(),
    fc.array(text, { maxLength: 3 }),
    fc.jsonValue({ maxDepth: 2 }),
  )
  .map(([args, outcome, variables, request, count, held, values, last]) => ({
    arguments: args,
    outcome,
    variables,
    task: { request_travel: request },
    history: {
      last: () => last as Value,
      outcomes: () => [last as Value],
      held: () => held,
      count: () => count,
      values: () => values,
    },
  }));

function nodeAt(expression: Expression, offset: number, length: number): Expression | undefined {
  if (expression.offset === offset && expression.length === length) return expression;
  if (expression.kind === "binary") {
    return nodeAt(expression.left, offset, length) ?? nodeAt(expression.right, offset, length);
  }
  if (expression.kind === "list") {
    for (const element of expression.elements) {
      const found = nodeAt(element, offset, length);
      if (found) return found;
    }
  }
  return undefined;
}

describe("checkExpression is sound", () => {
  test("every type problem it reports holds in every conforming scope", () => {
    let flagged = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...operands),
        fc.constantFrom(...operators),
        fc.constantFrom(...operands),
        fc.array(scopeArbitrary, { minLength: 5, maxLength: 5 }),
        (left, operator, right, scopes) => {
          const source = `${left} ${operator} ${right}`;
          const expression = parseExpression(source);
          assert.equal(expression.kind, "binary");
          if (expression.kind !== "binary") return;
          for (const problem of checkExpression(expression, environment)) {
            assert.ok(
              ["type-mismatch", "not-a-member"].includes(problem.kind),
              `${source}: ${problem.message}`,
            );
            flagged++;
            const node = nodeAt(expression, problem.offset, problem.length);
            assert.ok(node, `${source}: no node at the problem's span`);
            for (const scope of scopes) {
              if (node === expression) {
                const value = evaluateExpression(expression, scope);
                const claim = /gives null/.test(problem.message)
                  ? null
                  : operator === "!=" && problem.kind === "type-mismatch"
                    ? true
                    : /never equal|always false/.test(problem.message)
                      ? false
                      : undefined;
                assert.notEqual(claim, undefined, problem.message);
                assert.deepEqual(value, claim, `${source} in ${JSON.stringify(scope)}: ${problem.message}`);
              } else {
                // A literal flagged inside the comparison: never equal to the other side's value.
                assert.equal(node.kind, "literal", source);
                if (node.kind !== "literal") return;
                const other = evaluateExpression(
                  expression.left === node ? expression.right : expression.left,
                  scope,
                );
                assert.equal(valuesEqual(other, node.value), false, `${source}: ${problem.message}`);
              }
            }
          }
        },
      ),
      { numRuns: 3000 },
    );
    // The property is not vacuous: the pool of operands produces many flagged comparisons.
    assert.ok(flagged > 500, `only ${flagged} problems were checked`);
  });
});
