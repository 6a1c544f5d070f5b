import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ToolChoice } from "../../../src/openai/index.js";
import { turnSets, unknownChoiceTool } from "../../../src/shield/token/index.js";

const tools = ["check_distance", "check_seats", "book_train"];
const named = (name: string) => ({ type: "function" as const, function: { name } });
const allowedTools = (mode: "auto" | "required", ...names: string[]): ToolChoice => ({
  type: "allowed_tools",
  allowed_tools: { mode, tools: names.map(named) },
});
// At the start of a travel run: bookings are unsafe and the turn may not end (a duty is open).
const start = { unsafeTools: ["book_train"], doneAllowed: false };

describe("turnSets: tool_choice in every form, intersected with the shield's sets", () => {
  it("offers what tool_choice names, and allows the offered tools the shield does not ban", () => {
    const cases: [ToolChoice, string[], string[], boolean][] = [
      ["auto", tools, ["check_distance", "check_seats"], false],
      ["required", tools, ["check_distance", "check_seats"], true],
      ["none", [], [], false],
      [named("check_seats"), ["check_seats"], ["check_seats"], true],
      [
        allowedTools("auto", "book_train", "check_seats"),
        ["check_seats", "book_train"],
        ["check_seats"],
        false,
      ],
      [allowedTools("required", "check_distance"), ["check_distance"], ["check_distance"], true],
    ];
    for (const [toolChoice, offered, allowed, callRequired] of cases) {
      const turn = turnSets({ tools, toolChoice, sets: start });
      const name = JSON.stringify(toolChoice);
      assert.deepEqual(turn.offered, offered, name);
      assert.deepEqual(turn.allowed, allowed, name);
      assert.equal(turn.callRequired, callRequired, name);
      assert.equal(turn.refusal, undefined, name);
    }
  });

  it("lets a turn end where the shield allows it, the client asks for text, or there are no tools", () => {
    assert.equal(turnSets({ tools, toolChoice: "auto", sets: start }).endAllowed, false);
    assert.equal(turnSets({ tools, toolChoice: "auto", sets: { doneAllowed: true } }).endAllowed, true);
    assert.equal(turnSets({ tools, toolChoice: "none", sets: start }).endAllowed, true);
    assert.equal(turnSets({ tools: [], sets: start }).endAllowed, true);
  });

  it("refuses where a call is required, or the turn may not end, and nothing offered is allowed", () => {
    const refusal = (toolChoice: ToolChoice, sets = start) => turnSets({ tools, toolChoice, sets }).refusal;
    assert.match(refusal(named("book_train")) ?? "", /names book_train, which the policy does not allow/);
    assert.match(refusal(allowedTools("required", "book_train")) ?? "", /required.*\(book_train\)/);
    assert.match(refusal(allowedTools("auto", "book_train")) ?? "", /nothing is allowed/);
    assert.match(refusal("auto", { ...start, unsafeTools: tools }) ?? "", /nothing is allowed/);
    // Text may end the turn: nothing to refuse.
    assert.equal(refusal(allowedTools("auto", "book_train"), { ...start, doneAllowed: true }), undefined);
    assert.equal(refusal("none"), undefined);
  });

  it("allows one call per turn with parallel_tool_calls false", () => {
    assert.equal(turnSets({ tools, parallelToolCalls: false }).maxCalls, 1);
    assert.equal(turnSets({ tools }).maxCalls, Number.POSITIVE_INFINITY);
  });

  it("names the path of a tool_choice entry that is not among the tools", () => {
    assert.deepEqual(unknownChoiceTool(tools, allowedTools("auto", "check_seats", "fly")), {
      path: ["allowed_tools", "tools", 1, "function", "name"],
      name: "fly",
    });
    assert.deepEqual(unknownChoiceTool(tools, named("fly")), { path: ["function", "name"], name: "fly" });
    assert.equal(unknownChoiceTool(tools, allowedTools("required", "book_train")), undefined);
  });
});
