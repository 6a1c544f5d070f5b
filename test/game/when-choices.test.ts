import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { StrategyTemplate } from "../../src/game/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Run } from "../../src/run/index.js";

// Three kinds of request, each its own entity (own variable), all observed through one lookup
// tool: each kind's `when` names its own binding only.
const policy = parsePolicy(
  `
policy: requests
manual:
  D: Do what the user asks, unless the lookup shows it is not possible.
tools:
  lookup: {parameters: {id: string}}
  cancel: {parameters: {id: string}}
  refund: {parameters: {id: string}}
  reship: {parameters: {id: string}}
task:
  ask_cancel: {parameters: {id: string}}
  ask_refund: {parameters: {id: string}}
  ask_reship: {parameters: {id: string}}
entities:
  cancellation: {from: {ask_cancel: {c: id}}}
  refund_request: {from: {ask_refund: {r: id}}}
  reship_request: {from: {ask_reship: {s: id}}}
propositions:
  c_lookup(cancellation): {tool: lookup, when: "a.id == c"}
  c_open(cancellation): {tool: lookup, when: "a.id == c", outcome: "o.open == true"}
  c_done(cancellation): {tool: cancel, when: "a.id == c", outcome: "o.error == null"}
  r_lookup(refund_request): {tool: lookup, when: "a.id == r"}
  r_paid(refund_request): {tool: lookup, when: "a.id == r", outcome: "o.paid == true"}
  r_done(refund_request): {tool: refund, when: "a.id == r", outcome: "o.error == null"}
  s_lookup(reship_request): {tool: lookup, when: "a.id == s"}
  s_done(reship_request): {tool: reship, when: "a.id == s", outcome: "o.error == null"}
rules:
  - {id: D1, ltl: "F(c_done(cancellation) | (c_lookup(cancellation) & !c_open(cancellation)))", applies_to: requested, sentence: D}
  - {id: D2, ltl: "F(r_done(refund_request) | (r_lookup(refund_request) & !r_paid(refund_request)))", applies_to: requested, sentence: D}
  - {id: D3, ltl: "F(s_done(reship_request))", applies_to: requested, sentence: D}
`,
  "requests.yaml",
);

const task = [
  { name: "ask_cancel", arguments: { id: "A" } },
  { name: "ask_refund", arguments: { id: "B" } },
  { name: "ask_reship", arguments: { id: "C" } },
];

describe("the game's candidate calls", () => {
  test("a call aimed at one binding does not branch on the `when`s of other entities' propositions", () => {
    const template = new StrategyTemplate(Run.start(policy, task));
    const lookups = template.candidates.filter((candidate) => candidate.tool === "lookup");
    // One candidate per binding its rules observe through the lookup: its own `when` holds; the
    // others' are no events of its instances (before: every combination of the other two
    // entities' `when`s, 4 per binding). No rule of C reads a lookup.
    assert.deepEqual(
      lookups.map((candidate) => [candidate.arguments, [...(candidate.whenTrue ?? [])].sort()]),
      [
        [{ id: "A" }, ["a.id == c"]],
        [{ id: "B" }, ["a.id == r"]],
      ],
    );
    // Each keeps every outcome of the tool's outcome predicates.
    for (const candidate of lookups) assert.equal(candidate.cases.length, 4);
  });

  test("the duties and the calls that progress them are unchanged", () => {
    const evaluator = new Evaluator(policy);
    const start = { task, calls: [] };
    const next = evaluator.next(start);
    assert.equal(next.done.allowed, false);
    assert.deepEqual(next.openDuties.map((duty) => [duty.rule, duty.binding]).sort(), [
      ["D1", 'cancellation(c="A")'],
      ["D2", 'refund_request(r="B")'],
      ["D3", 'reship_request(s="C")'],
    ]);
    const progressing = next.calls
      .filter((entry) => entry.class === "progressing")
      .map((entry) => entry.call);
    assert.deepEqual(progressing.map((call) => `${call.name}(${call.arguments.id})`).sort(), [
      "cancel(A)",
      "lookup(A)",
      "lookup(B)",
      "refund(B)",
      "reship(C)",
    ]);
    // A lookup showing the order closed exempts D1 only.
    const closed = {
      task,
      calls: [
        {
          id: "1",
          name: "lookup",
          arguments: { id: "A" },
          outcome: { kind: "json" as const, value: { open: false } },
        },
      ],
    };
    assert.deepEqual(
      evaluator
        .next(closed)
        .openDuties.map((duty) => duty.rule)
        .sort(),
      ["D2", "D3"],
    );
  });
});
