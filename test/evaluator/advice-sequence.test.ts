import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// A chain of order rules (A before B before C before D): no single allowed call unblocks C or D,
// so the advice is the first call of the shortest sequence that does.
const chain = parsePolicy(
  `
policy: chain
manual:
  R1: A before B.
  R2: B before C.
  R3: C before D.
tools:
  step_a: {parameters: {}}
  step_b: {parameters: {}}
  step_c: {parameters: {}}
  step_d: {parameters: {}}
  other: {parameters: {}}
propositions:
  a: {tool: step_a}
  b: {tool: step_b}
  c: {tool: step_c}
  d: {tool: step_d}
rules:
  - {id: R1, ltl: "G(b -> O a)"}
  - {id: R2, ltl: "G(c -> O b)"}
  - {id: R3, ltl: "G(d -> O c)"}
`,
  "chain.yaml",
);
const call = (name: string) => ({ name, arguments: {} });

describe("advice: the first step of the shortest sequence", () => {
  const evaluator = new Evaluator(chain);
  const start = new Conversation([], "Go.");

  test("C with neither A nor B made: A, the first of two steps", () => {
    const decision = evaluator.decide(start.messages, call("step_c"));
    assert.equal(decision.verdict, "block");
    assert.deepEqual(decision.advice, {
      kind: "prerequisite",
      call: call("step_a"),
      unblocks: true,
      steps: 2,
    });
    assert.equal(decision.searchStopped, undefined);
  });

  test("D with nothing made: A, the first of three steps; after A, B the first of two", () => {
    assert.deepEqual(evaluator.decide(start.messages, call("step_d")).advice, {
      kind: "prerequisite",
      call: call("step_a"),
      unblocks: true,
      steps: 3,
    });
    const afterA = new Conversation([], "Go.").call("step_a", {}, { text: "ok" });
    assert.deepEqual(evaluator.decide(afterA.messages, call("step_d")).advice, {
      kind: "prerequisite",
      call: call("step_b"),
      unblocks: true,
      steps: 2,
    });
  });

  test("a budget too small for the sequence: no advice, and the decision says the search stopped", () => {
    const small = new Evaluator(chain, { search: { maxDecisions: 3 } });
    const decision = small.decide(start.messages, call("step_d"));
    assert.equal(decision.verdict, "block");
    assert.equal(decision.advice, undefined);
    assert.match(decision.searchStopped ?? "", /stopped/);
  });
});
