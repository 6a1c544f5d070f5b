import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { shieldSetsFor, turnSets } from "../../src/shield/token/index.js";
import { Conversation } from "../support/conversation.js";

// tau2-retail's shape: the items of an order the user asks to change can only be changed once
// the order is seen pending. Once it is seen delivered (a fact: the lookup is not volatile), no
// call can meet the duty. Before, the run still had to wait for done.stuck_after calls: every call
// was unsafe and ending was refused, so the token shield had nothing to allow and the server
// refused the turn (422 "the policy allows none of the offered tools now and the turn may not end
// yet", tau2-retail task 2). Every call is no worse than the run then, so only the calls that break
// a rule for good are unsafe (the change of the delivered order), not the lookup.
const shop = (done = "") =>
  parsePolicy(
    `policy: shop
manual:
  PENDING: An order's items are changed only after the order is seen pending.
  CHANGE: Change the items of the order the user asks to change.
tools:
  get_order: {parameters: {order_id: string}}
  change_items: {parameters: {order_id: string, items: array}}
task:
  request_change: {parameters: {order_id: string}}
entities:
  order: {from: {request_change: {oid: order_id}}}
propositions:
  seen_pending(order): {tool: get_order, when: "a.order_id == oid", outcome: "o.status == 'pending'"}
  changes(order): {tool: change_items, when: "a.order_id == oid"}
  changed(order): {tool: change_items, when: "a.order_id == oid", outcome: "o.error == null"}
rules:
  - {id: PENDING, ltl: "G(changes(order) -> O seen_pending(order))"}
  - {id: CHANGE, ltl: "F changed(order)", applies_to: requested}
${done}`,
    "shop.yaml",
  );

const seen = (status: string) =>
  new Conversation([{ name: "request_change", arguments: { order_id: "#1" } }]).call(
    "get_order",
    { order_id: "#1" },
    { json: { status } },
  );

describe("a run whose duties no call can meet any more", () => {
  test("may end now, as the progressing move, and says why; the duty stays listed", () => {
    const evaluator = new Evaluator(shop());
    assert.deepEqual(evaluator.next(seen("pending").messages).done, { allowed: false, progressing: false });
    const next = evaluator.next(seen("delivered").messages);
    assert.equal(next.done.allowed, true);
    assert.equal(next.done.progressing, true);
    assert.match(next.done.stuck ?? "", /no calls can meet them any more/);
    assert.equal(next.openDuties[0]?.rule, "CHANGE");
  });

  test("the token shield lets the turn end instead of refusing it", () => {
    const sets = shieldSetsFor(new Evaluator(shop()), seen("delivered").messages);
    assert.equal(sets.doneAllowed, true);
    assert.equal(sets.doneProgressing, true);
    const turn = turnSets({ tools: ["get_order", "change_items"], toolChoice: "auto", sets });
    assert.deepEqual(turn.allowed, ["get_order"]);
    assert.equal(turn.endAllowed, true);
    assert.equal(turn.refusal, undefined);
  });

  test("decide blocks only the calls that break a rule for good, and blames that rule", () => {
    const evaluator = new Evaluator(shop());
    const delivered = seen("delivered").messages;
    assert.equal(
      evaluator.decide(delivered, { name: "get_order", arguments: { order_id: "#1" } }).verdict,
      "allow",
    );
    const change = evaluator.decide(delivered, {
      name: "change_items",
      arguments: { order_id: "#1", items: [] },
    });
    assert.deepEqual(
      change.violations.map((finding) => finding.rule),
      ["PENDING"],
    );
  });

  test("done.stuck_after: 0 never lets a run with open duties end", () => {
    const next = new Evaluator(shop("done: {stuck_after: 0}\n")).next(seen("delivered").messages);
    assert.deepEqual(next.done, { allowed: false, progressing: false });
  });
});
