import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// tau2-retail's shape: the request to change an order's items and the order itself are two
// entities, both named by the order id. A modification of the order is an event of the order's
// rule (modify only once the order is seen pending) whichever of the two the game aims it at, as
// `decide` reads the call. Before, the game's candidate aimed at the request escaped the order's
// rule: the modification counted as one call from the goal although `decide` blocks it, the
// duty's next call was that blocked modification, and a blocked modification was advised itself
// (tau2-retail tasks 0–5 at f28ffc2).
const shop = parsePolicy(
  `policy: shop
manual:
  PENDING: An order's items are modified only after the order is seen pending.
  CHANGE: Change the items of the order the user asks to change.
tools:
  get_order: {parameters: {order_id: string}}
  modify_items: {parameters: {order_id: string, items: array}}
task:
  request_change: {parameters: {order_id: string}}
  name_order: {parameters: {order_id: string}}
entities:
  order: {from: {name_order: {oid: order_id}}}
  change: {from: {request_change: {co: order_id}}}
propositions:
  seen_pending(order): {tool: get_order, when: "a.order_id == oid", outcome: "o.status == 'pending'"}
  modifies(order): {tool: modify_items, when: "a.order_id == oid"}
  modified(change): {tool: modify_items, when: "a.order_id == co", outcome: "o.error == null"}
rules:
  - {id: PENDING, ltl: "G(modifies(order) -> O seen_pending(order))"}
  - {id: CHANGE, ltl: "F modified(change)", applies_to: requested}
`,
  "shop.yaml",
);

const asked = () =>
  new Conversation([
    { name: "name_order", arguments: { order_id: "#1" } },
    { name: "request_change", arguments: { order_id: "#1" } },
  ]);
const modify = { name: "modify_items", arguments: { order_id: "#1", items: ["a"] } };

describe("a call aimed at a request is an event of the rules of the order it names", () => {
  test("before the order is seen pending the modification is unsafe and the lookup is the duty's next call", () => {
    const evaluator = new Evaluator(shop);
    assert.equal(evaluator.decide(asked().messages, modify).verdict, "block");
    const next = evaluator.next(asked().messages);
    assert.deepEqual(
      next.calls.filter((verdict) => verdict.call.name === "modify_items").map((verdict) => verdict.class),
      ["unsafe"],
    );
    assert.equal(next.tools.find((tool) => tool.name === "get_order")?.class, "progressing");
    assert.deepEqual(next.openDuties[0]?.fulfil, { name: "get_order", arguments: { order_id: "#1" } });
  });

  test("the blocked modification is advised the lookup, never itself", () => {
    const decision = new Evaluator(shop).decide(asked().messages, modify);
    assert.equal(decision.advice?.kind, "prerequisite");
    assert.deepEqual(decision.advice?.call, { name: "get_order", arguments: { order_id: "#1" } });
  });

  test("once the order is seen pending the modification progresses", () => {
    const seen = asked().call("get_order", { order_id: "#1" }, { json: { status: "pending" } });
    const next = new Evaluator(shop).next(seen.messages);
    assert.equal(next.tools.find((tool) => tool.name === "modify_items")?.class, "progressing");
  });
});
