import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// A shared tool's calls are in every binding's history (tau2-retail's product lookups: a product's
// details are the same for every order). Task 4 looked the T-shirt up for one order, then wrote a
// change of the other order's T-shirt, blocked five times: the lookup was in no history of that order.

const policy = (shared: boolean) =>
  parsePolicy(
    `
policy: shared_lookups
manual:
  R0: Look up the order before refunding it.
  R1: Refund only an item whose price was looked up.
tools:
  lookup_price: {parameters: {sku: string}, shared: ${shared}}
  get_order: {parameters: {order_id: string}}
  refund: {parameters: {order_id: string, sku: string}}
task:
  request_refund: {parameters: {order_id: string}}
entities:
  order: {from: {request_refund: {x: order_id}}}
propositions:
  looked_up(order): {tool: get_order, when: "a.order_id == x"}
  refunded(order): {tool: refund, when: "a.order_id == x"}
rules:
  - {id: R0, template: precedence, a: "looked_up(order)", b: "refunded(order)"}
constraints:
  - {id: R1, on: refunded(order), require: "a.sku in values('lookup_price', 'sku')"}
`,
    "shared.yaml",
  );

const twoRefunds = () =>
  new Conversation(
    [
      { name: "request_refund", arguments: { order_id: "A1" } },
      { name: "request_refund", arguments: { order_id: "B2" } },
    ],
    "Refund the lamp of A1 and of B2.",
  )
    .call("lookup_price", { sku: "LAMP" }, { json: { price: 20 } })
    .call("get_order", { order_id: "A1" }, { json: { status: "delivered" } });

describe("a shared tool's calls", () => {
  const rulesOf = (shared: boolean, conversation: Conversation, orderId: string, sku: string) =>
    new Evaluator(policy(shared))
      .decide(conversation.messages, { name: "refund", arguments: { order_id: orderId, sku } })
      .violations.map((finding) => finding.rule);

  test("are in the history of every binding, one first named after them included", () => {
    assert.deepEqual(rulesOf(true, twoRefunds(), "A1", "LAMP"), []);
    assert.deepEqual(rulesOf(true, twoRefunds(), "A1", "DESK"), ["R1"]);
    const both = twoRefunds().call("get_order", { order_id: "B2" }, { json: { status: "delivered" } });
    assert.deepEqual(rulesOf(true, both, "B2", "LAMP"), []);
    // A binding no call named yet: its history holds the lookup too (R0 blocks it alone).
    assert.deepEqual(rulesOf(true, twoRefunds(), "C3", "LAMP"), ["R0"]);
  });

  test("are in no binding's history where the tool is not shared", () => {
    assert.deepEqual(rulesOf(false, twoRefunds(), "A1", "LAMP"), ["R1"]);
  });
});
