import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Run, traceFromMessages } from "../../src/run/index.js";
import { Conversation } from "../support/conversation.js";

// `applies_to` on a rule over several entities is read per entity (docs/policy.md, "Rules"): an
// instance is requested when a task call introduced one of its bindings and every binding of an
// entity that task call names is its own; entities it does not name are not restricted.

const pharmacy = parsePolicy(`
policy: allergy_desk
manual:
  A1: Record an allergy the patient reports before dispensing anything.
  A2: Dispense the prescription asked for.
tools:
  record_allergy: {parameters: {allergy: string}}
  dispense: {parameters: {rx_id: string}}
task:
  request_refill: {parameters: {rx_id: string}}
  report_allergy: {parameters: {allergy: string}}
entities:
  rx: {from: {request_refill: {r: rx_id}}}
  allergy: {from: {report_allergy: {g: allergy}}}
propositions:
  recorded(allergy): {tool: record_allergy, when: "a.allergy == g"}
  dispensed(rx): {tool: dispense, when: "a.rx_id == r"}
rules:
  - {id: A1, ltl: "G(dispensed(rx) -> O recorded(allergy))", applies_to: requested}
  - {id: A2, ltl: "F dispensed(rx)", applies_to: requested}
`);

const refunds = parsePolicy(`
policy: refunds_two_entities
manual:
  R1: Refund the order the customer asks about.
  R2: Refund no order the customer did not ask about.
tools:
  refund: {parameters: {customer_id: string, order_id: string}}
task:
  request_refund: {parameters: {customer_id: string, order_id: string}}
entities:
  customer: {from: {request_refund: {cid: customer_id}}}
  order: {from: {request_refund: {oid: order_id}}}
propositions:
  refunded(customer, order): {tool: refund, when: "a.customer_id == cid && a.order_id == oid"}
rules:
  - {id: R1, ltl: "F refunded(customer, order)", applies_to: requested}
  - {id: R2, ltl: "G !refunded(customer, order)", applies_to: unrequested}
`);

const refill = { name: "request_refill", arguments: { rx_id: "RX1" } };
const sulfa = { name: "report_allergy", arguments: { allergy: "sulfa" } };

function instances(policy: typeof pharmacy, conversation: Conversation): string[] {
  const run = Run.fromTrace(policy, traceFromMessages(conversation.messages, policy));
  return run.instances.map(
    (instance) =>
      `${instance.rule.id} ${instance.bindings.map((binding) => Object.values(binding.values)[0]).join(",")}`,
  );
}

describe("applies_to per entity", () => {
  test("a requested allergy's rule holds for a prescription nobody asked for", () => {
    const evaluator = new Evaluator(pharmacy);
    const asked = new Conversation([refill, sulfa]);
    const decision = evaluator.decide(asked.messages, { name: "dispense", arguments: { rx_id: "RX2" } });
    assert.equal(decision.verdict, "block");
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["A1"],
    );
    asked.call("record_allergy", { allergy: "sulfa" });
    assert.equal(
      evaluator.decide(asked.messages, { name: "dispense", arguments: { rx_id: "RX2" } }).verdict,
      "allow",
    );
  });

  test("a prescription not asked for becomes no duty; the refill request names no allergy, so its rule takes any", () => {
    const conversation = new Conversation([refill, sulfa])
      .call("record_allergy", { allergy: "peanut" })
      .call("dispense", { rx_id: "RX2" });
    // (RX2, peanut): neither was asked for. (RX1, peanut): the refill request names no allergy.
    assert.deepEqual(instances(pharmacy, conversation).sort(), [
      "A1 RX1,peanut",
      "A1 RX1,sulfa",
      "A1 RX2,sulfa",
      "A2 RX1",
    ]);
  });

  test("a duty over two entities of one request: neither another order nor a pair across requests is a duty", () => {
    const conversation = new Conversation([
      { name: "request_refund", arguments: { customer_id: "c1", order_id: "o1" } },
      { name: "request_refund", arguments: { customer_id: "c2", order_id: "o2" } },
    ]).call("refund", { customer_id: "c1", order_id: "o3" });
    const found = instances(refunds, conversation);
    assert.deepEqual(found.filter((entry) => entry.startsWith("R1")).sort(), ["R1 c1,o1", "R1 c2,o2"]);
    // Everything else is unrequested: the refund of o3, and c1 with c2's order.
    assert.ok(found.includes("R2 c1,o3"), found.join("; "));
    assert.ok(found.includes("R2 c1,o2"), found.join("; "));
    assert.ok(!found.includes("R2 c1,o1"), found.join("; "));
  });

  test("an unrequested order of a requested customer is refused under R2", () => {
    const evaluator = new Evaluator(refunds);
    const conversation = new Conversation([
      { name: "request_refund", arguments: { customer_id: "c1", order_id: "o1" } },
    ]);
    const decision = evaluator.decide(conversation.messages, {
      name: "refund",
      arguments: { customer_id: "c1", order_id: "o3" },
    });
    assert.deepEqual(
      [decision.verdict, decision.violations.map((finding) => finding.rule)],
      ["block", ["R2"]],
    );
    assert.equal(
      evaluator.decide(conversation.messages, {
        name: "refund",
        arguments: { customer_id: "c1", order_id: "o1" },
      }).verdict,
      "allow",
    );
  });
});
