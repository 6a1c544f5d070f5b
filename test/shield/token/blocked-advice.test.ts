import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type GenerationRequest, givenGrounding, runTurn } from "../../../src/agent/index.js";
import { Evaluator } from "../../../src/evaluator/index.js";
import type { ChatMessage, ChatTool } from "../../../src/openai/index.js";
import { retailPolicy, twoItemChanges } from "../../support/retail-orders.js";
import { ScriptedGenerator } from "../../support/scripted-generator.js";

// A blocked call whose advice is a step of another tool to make first: the turn generates again
// with the blocked tool's name steered to that step (tau2-retail task 0: the exchange written five
// times before its items' product lookup, the advice in view each time).

const tool = (name: string, properties: Record<string, { type: string }>): ChatTool => ({
  type: "function",
  function: { name, parameters: { type: "object", properties } },
});
const tools = [
  tool("modify_pending_order_items", {
    order_id: { type: "string" },
    item_ids: { type: "array" },
    new_item_ids: { type: "array" },
    payment_method_id: { type: "string" },
  }),
  tool("get_product_details", { product_id: { type: "string" } }),
  tool("get_order_details", { order_id: { type: "string" } }),
];
const modify = {
  name: "modify_pending_order_items",
  arguments: {
    order_id: "#W6247578",
    item_ids: ["3799046073"],
    new_item_ids: ["3799046074"],
    payment_method_id: "credit_card_1",
  },
};

describe("a blocked call's prerequisite in token mode", () => {
  const evaluator = new Evaluator(retailPolicy());
  const turn = async (intent?: boolean) => {
    const scripted = new ScriptedGenerator([
      { calls: [modify] },
      { calls: [{ name: "get_product_details", arguments: { product_id: "9523456873" } }] },
    ]);
    const result = await runTurn({
      messages: twoItemChanges().messages as ChatMessage[],
      tools,
      evaluator,
      grounder: givenGrounding,
      generator: { tokenShield: true, generate: (request: GenerationRequest) => scripted.generate(request) },
      mode: "token",
      ...(intent !== undefined ? { intent } : {}),
    });
    return { result, requests: scripted.requests };
  };

  it("steers the regeneration's blocked tool to the advised step, with its advised values", async () => {
    const { result, requests } = await turn();
    const blocked = result.mentor.attempts[0]?.calls[0];
    assert.equal(blocked?.verdict, "block");
    assert.deepEqual(blocked?.advice?.call, {
      name: "get_product_details",
      arguments: { product_id: "9523456873" },
    });
    assert.equal(requests[0]?.tokenShield?.sets.unsafeTools?.includes("modify_pending_order_items"), false);
    const again = requests[1]?.tokenShield?.sets;
    assert.ok(again?.unsafeTools?.includes("modify_pending_order_items"));
    assert.deepEqual(
      again?.redirects?.find((redirect) => redirect.tool === "modify_pending_order_items"),
      {
        tool: "modify_pending_order_items",
        to: "get_product_details",
        arguments: { product_id: "9523456873" },
      },
    );
    assert.equal(result.message.tool_calls?.[0]?.function.name, "get_product_details");
  });

  it("leaves the regeneration's sets as they were with mentor.intent false", async () => {
    const { requests } = await turn(false);
    assert.deepEqual(requests[1]?.tokenShield?.sets, requests[0]?.tokenShield?.sets);
  });
});
