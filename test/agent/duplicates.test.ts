import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { givenGrounding, runTurn } from "../../src/agent/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { travelPolicyFile, travelTools } from "../support/tiny-travel.js";

// Qwen2.5-Coder-1.5B writes a check twice in one message (travel at 810ad66: in all 23 runs, one
// run eleven checks of two routes in one message, near its call limit). The same call gets the same
// answer, so a shielded turn makes it once; a volatile tool's calls are all made.
const toronto = { origin: "Toronto", destination: "Chicago" };
const asked = () =>
  new Conversation(
    [
      {
        name: "request_travel",
        arguments: { ...toronto, urgent: false, mode: "any", travel_class: "any" },
      },
    ],
    "Get me from Toronto to Chicago.",
  ).messages;
const travelText = readFileSync(travelPolicyFile, "utf8");
const check = { name: "check_distance", arguments: toronto };
const twice = {
  calls: [check, { name: "check_distance", arguments: { destination: "Chicago", origin: "Toronto" } }],
};

function turn(mode: "none" | "prompt", policyText = travelText) {
  return runTurn({
    messages: asked() as never,
    tools: travelTools,
    mode,
    evaluator: new Evaluator(parsePolicy(policyText, travelPolicyFile)),
    grounder: givenGrounding,
    generator: new ScriptedGenerator([twice]),
  });
}

describe("a call written twice in one message", () => {
  it("is made once under the shield, and twice without it", async () => {
    const shielded = await turn("prompt");
    assert.deepEqual(
      shielded.message.tool_calls?.map((call) => [call.function.name, JSON.parse(call.function.arguments)]),
      [["check_distance", toronto]],
    );
    assert.deepEqual(shielded.mentor.attempts[0]?.duplicates, ["check_distance"]);
    const unshielded = await turn("none");
    assert.equal(unshielded.message.tool_calls?.length, 2);
    assert.equal(unshielded.mentor.attempts[0]?.duplicates, undefined);
  });

  it("is made twice where its tool is volatile", async () => {
    const volatile = travelText.replace(/( {2}check_distance:\n)/, "$1    volatile: true\n");
    assert.notEqual(volatile, travelText);
    const shielded = await turn("prompt", volatile);
    assert.equal(shielded.message.tool_calls?.length, 2);
  });
});
