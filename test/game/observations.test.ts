import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { shieldSetsFor } from "../../src/shield/token/index.js";
import { Conversation } from "../support/conversation.js";

// A replacement desk: an item found damaged is replaced; otherwise a refund, which needs an
// approval first. After an inspection found the item intact, inspecting it again cannot make it
// damaged (an observation is a fact): the way forward is the approval.
function desk(inspect = ""): string {
  return `
policy: desk
manual:
  D1: Replace an item only after an inspection found it damaged.
  D2: Refund only after an approval.
  D3: Every case ends with a replacement or a refund.
tools:
  inspect:
    parameters: {order_id: string}
    output: text
    labels: {damaged: the item is broken, intact: the item works}
    ${inspect}
  replace: {parameters: {order_id: string}}
  approve: {parameters: {order_id: string}}
  refund: {parameters: {order_id: string}}
task:
  open_case: {parameters: {order_id: string}}
entities:
  order: {from: {open_case: {x: order_id}}}
propositions:
  damaged(order): {tool: inspect, when: "a.order_id == x", outcome: "o.label == 'damaged'"}
  replaced(order): {tool: replace, when: "a.order_id == x"}
  approved(order): {tool: approve, when: "a.order_id == x"}
  refunded(order): {tool: refund, when: "a.order_id == x"}
rules:
  - {id: D1, ltl: "G(replaced(order) -> O damaged(order))"}
  - {id: D2, ltl: "G(refunded(order) -> O approved(order))"}
  - {id: D3, ltl: "F(replaced(order) | refunded(order))", applies_to: requested}
`;
}

const order = { order_id: "A1" };
const task = [{ name: "open_case", arguments: order }];
const inspected = (label: string | null, text = ""): Conversation =>
  new Conversation(task, "Order A1 arrived, please help.").call(
    "inspect",
    order,
    label === null ? { text } : { label, text },
  );
const classOf = (evaluator: Evaluator, messages: unknown, tool: string): string | undefined =>
  evaluator.next(messages).calls.find((entry) => entry.call.name === tool)?.class;

describe("observations are facts", () => {
  const evaluator = new Evaluator(parsePolicy(desk(), "desk.yaml"));

  test("a repeat of an observed check is not progressing; the other way is", () => {
    const intact = inspected("intact").messages;
    assert.equal(classOf(evaluator, intact, "inspect"), "neutral");
    assert.equal(classOf(evaluator, intact, "approve"), "progressing");
    assert.deepEqual(
      evaluator
        .next(intact)
        .tools.filter((tool) => tool.class === "progressing")
        .map((tool) => tool.name),
      ["approve"],
    );
  });

  test("a repeat of an observed check is not advice for the call it blocked", () => {
    const decision = evaluator.decide(inspected("intact").messages, { name: "replace", arguments: order });
    assert.equal(decision.verdict, "block");
    assert.deepEqual(decision.advice, { kind: "alternative", call: { name: "approve", arguments: order } });
  });

  test("the token shield does not boost a repeat of an observed check", () => {
    const sets = shieldSetsFor(evaluator, inspected("intact").messages);
    assert.deepEqual(sets.progressingTools, ["approve"]);
  });

  test("an output that could not be read is no fact: checking again may tell", () => {
    const unread = inspected(null, "???").messages;
    assert.deepEqual(evaluator.decide(unread, { name: "replace", arguments: order }).advice, {
      kind: "prerequisite",
      call: { name: "inspect", arguments: order },
      unblocks: true,
    });
  });

  test("a volatile tool's outcome is no fact: checking again may answer differently", () => {
    const volatile = new Evaluator(parsePolicy(desk("volatile: true"), "desk.yaml"));
    const intact = inspected("intact").messages;
    assert.equal(classOf(volatile, intact, "inspect"), "progressing");
    const decision = volatile.decide(intact, { name: "replace", arguments: order });
    assert.deepEqual(decision.advice, {
      kind: "prerequisite",
      call: { name: "inspect", arguments: order },
      unblocks: true,
    });
  });

  test("the same game answers runs with and without the observation apart (its memory is keyed by them)", () => {
    const intact = inspected("intact").messages;
    const damaged = inspected("damaged").messages;
    const fresh = new Conversation(task, "Order A1 arrived, please help.").messages;
    assert.equal(classOf(evaluator, fresh, "inspect"), "progressing");
    assert.equal(classOf(evaluator, intact, "inspect"), "neutral");
    assert.equal(classOf(evaluator, damaged, "replace"), "progressing");
    assert.equal(classOf(evaluator, fresh, "inspect"), "progressing");
  });
});
