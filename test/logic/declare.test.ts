import assert from "node:assert/strict";
import { test } from "node:test";
import { atom, declareTemplates, holds } from "../../src/logic/index.js";

// Every DECLARE template against a direct definition, on every one-hot trace of length ≤ 6
// over {a, b, c}.
const a = atom("a");
const b = atom("b");

function allTraces(maxLength: number): string[][] {
  const traces: string[][] = [[]];
  for (let index = 0; index < traces.length; index++) {
    const trace = traces[index] as string[];
    if (trace.length < maxLength) for (const letter of ["a", "b", "c"]) traces.push([...trace, letter]);
  }
  return traces;
}

const count = (trace: string[], letter: string): number => trace.filter((item) => item === letter).length;
const positions = (trace: string[], letter: string): number[] =>
  trace.flatMap((item, index) => (item === letter ? [index] : []));

const definitions: [
  string,
  ReturnType<typeof atom> | ReturnType<typeof declareTemplates.response>,
  (trace: string[]) => boolean,
][] = [
  ["existence", declareTemplates.existence(a), (trace) => count(trace, "a") >= 1],
  ["existence 3", declareTemplates.existence(a, 3), (trace) => count(trace, "a") >= 3],
  ["absence", declareTemplates.absence(a), (trace) => count(trace, "a") === 0],
  ["absence 2", declareTemplates.absence(a, 2), (trace) => count(trace, "a") <= 2],
  ["exactly 2", declareTemplates.exactly(a, 2), (trace) => count(trace, "a") === 2],
  ["init", declareTemplates.init(a), (trace) => trace[0] === "a"],
  [
    "response",
    declareTemplates.response(a, b),
    (trace) => positions(trace, "a").every((i) => positions(trace, "b").some((j) => j > i)),
  ],
  [
    "precedence",
    declareTemplates.precedence(a, b),
    (trace) => positions(trace, "b").every((j) => positions(trace, "a").some((i) => i < j)),
  ],
  [
    "succession",
    declareTemplates.succession(a, b),
    (trace) =>
      positions(trace, "a").every((i) => positions(trace, "b").some((j) => j > i)) &&
      positions(trace, "b").every((j) => positions(trace, "a").some((i) => i < j)),
  ],
  [
    "chain response",
    declareTemplates.chainResponse(a, b),
    (trace) => positions(trace, "a").every((i) => trace[i + 1] === "b"),
  ],
  [
    "chain precedence",
    declareTemplates.chainPrecedence(a, b),
    (trace) => positions(trace, "b").every((j) => j > 0 && trace[j - 1] === "a"),
  ],
  [
    "alternate response",
    declareTemplates.alternateResponse(a, b),
    (trace) =>
      positions(trace, "a").every((i) => {
        const nextB = positions(trace, "b").find((j) => j > i);
        return nextB !== undefined && !positions(trace, "a").some((k) => k > i && k < nextB);
      }),
  ],
  [
    "not succession",
    declareTemplates.notSuccession(a, b),
    (trace) => positions(trace, "a").every((i) => !positions(trace, "b").some((j) => j > i)),
  ],
  [
    "responded existence",
    declareTemplates.respondedExistence(a, b),
    (trace) => count(trace, "a") === 0 || count(trace, "b") > 0,
  ],
  [
    "co-existence",
    declareTemplates.coExistence(a, b),
    (trace) => count(trace, "a") > 0 === count(trace, "b") > 0,
  ],
  [
    "not co-existence",
    declareTemplates.notCoExistence(a, b),
    (trace) => !(count(trace, "a") > 0 && count(trace, "b") > 0),
  ],
  ["choice", declareTemplates.choice(a, b), (trace) => count(trace, "a") > 0 || count(trace, "b") > 0],
  [
    "exclusive choice",
    declareTemplates.exclusiveChoice(a, b),
    (trace) => count(trace, "a") > 0 !== count(trace, "b") > 0,
  ],
];

for (const [name, formula, definition] of definitions) {
  test(`DECLARE ${name} means what it says`, () => {
    for (const trace of allTraces(6)) {
      const letters = trace.map((letter) => new Set([letter]));
      assert.equal(holds(formula, letters), definition(trace), `${name} on ${trace.join(" ") || "ε"}`);
    }
  });
}

test("occurrence counts must be whole numbers", () => {
  assert.throws(() => declareTemplates.existence(a, -1), /whole number/);
  assert.throws(() => declareTemplates.absence(a, 1.5), /whole number/);
});
