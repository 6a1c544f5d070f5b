import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { givenGrounding, runTurn } from "../../src/agent/index.js";
import { MentorError } from "../../src/errors/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import type { ChatTool } from "../../src/openai/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { withDoneTool } from "../../src/shield/token/index.js";
import { Conversation } from "../support/conversation.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { travelPolicyFile, travelTools } from "../support/tiny-travel.js";

// `done.tool`: a call of that tool is the end of the run (SOPBench's exit_conversation), judged as
// `done` (refused while duties are open, up to done.max_refusals), never decided as a tool call.
const travelText = readFileSync(travelPolicyFile, "utf8");
const endTool = "  end_conversation:\n    description: Ends the conversation.\n    parameters: {}\n";
const withDoneTool_ = (tool: string) =>
  parsePolicy(
    travelText
      .replace("tools:\n", `tools:\n${endTool}`)
      .replace("max_refusals: 3", `max_refusals: 2\n  tool: ${tool}`),
    travelPolicyFile,
  );
const end: ChatTool = {
  type: "function",
  function: { name: "end_conversation", parameters: { type: "object", properties: {} } },
};
const endCall = { calls: [{ name: "end_conversation", arguments: {} }] };
/** A flight asked for: the duty to book it is open, so `done` is not allowed. */
const openDuty = () =>
  new Conversation(
    [
      {
        name: "request_travel",
        arguments: {
          origin: "Toronto",
          destination: "Chicago",
          urgent: false,
          mode: "flight",
          travel_class: "any",
        },
      },
    ],
    "Fly me from Toronto to Chicago.",
  ).messages;

function turn(mode: "none" | "prompt", messages: unknown[], generator: ScriptedGenerator) {
  return runTurn({
    messages: messages as never,
    tools: [...travelTools, end],
    mode,
    evaluator: new Evaluator(withDoneTool_("end_conversation")),
    grounder: givenGrounding,
    generator,
  });
}

describe("done.tool", () => {
  it("must name a declared tool", () => {
    assert.equal(withDoneTool_("end_conversation").doneTool, "end_conversation");
    assert.throws(
      () => withDoneTool_("exit_conversation"),
      (error: unknown) =>
        error instanceof MentorError &&
        /done\.tool exit_conversation is not a declared tool/.test(error.message),
    );
  });

  it("while duties are open, its call is refused as an end up to done.max_refusals, then returned", async () => {
    const generator = new ScriptedGenerator([endCall]);
    const result = await turn("prompt", openDuty(), generator);
    assert.equal(result.mentor.doneRefusals, 2);
    assert.equal(result.mentor.blocked, 0, "not blocked as a call");
    assert.deepEqual(
      result.mentor.attempts.map((attempt) => attempt.done?.refused),
      [true, true, false],
    );
    assert.equal(result.message.tool_calls?.[0]?.function.name, "end_conversation");
    // The model saw its end refused as the call's result, with the open duty.
    const seen = generator.requests[1]?.messages.at(-1);
    assert.equal(seen?.role, "tool");
    assert.match(String(seen?.content), /book|flight/i);
  });

  it("is returned at once, undecided by the monitor, where done is allowed, and unshielded", async () => {
    const allowed = await turn(
      "prompt",
      new Conversation([], "Hello.").messages,
      new ScriptedGenerator([endCall]),
    );
    assert.equal(allowed.mentor.doneRefusals, 0);
    assert.deepEqual(allowed.mentor.attempts[0]?.done, { allowed: true, refused: false });
    assert.equal(allowed.message.tool_calls?.[0]?.function.name, "end_conversation");
    const unshielded = await turn("none", openDuty(), new ScriptedGenerator([endCall]));
    assert.deepEqual(unshielded.mentor.attempts[0]?.done, { allowed: false, refused: false });
    assert.equal(unshielded.message.tool_calls?.[0]?.function.name, "end_conversation");
  });

  it("the token shield masks it while done is not allowed, steers it like an end, boosts it where ending progresses", () => {
    const forced = withDoneTool(
      {
        unsafeTools: ["book_flight"],
        progressingTools: ["end_conversation", "check_distance"],
        doneAllowed: false,
        doneRedirect: { to: "check_distance", arguments: { origin: "Toronto" } },
      },
      "end_conversation",
    );
    assert.deepEqual(forced.unsafeTools, ["book_flight", "end_conversation"]);
    assert.deepEqual(forced.progressingTools, ["check_distance"]);
    assert.deepEqual(forced.redirects, [
      { tool: "end_conversation", to: "check_distance", arguments: { origin: "Toronto" } },
    ]);
    const ending = withDoneTool(
      { unsafeTools: ["end_conversation"], doneAllowed: true, doneProgressing: true },
      "end_conversation",
    );
    assert.deepEqual(ending.unsafeTools, []);
    assert.deepEqual(ending.progressingTools, ["end_conversation"]);
    const allowed = withDoneTool(
      { progressingTools: ["end_conversation"], doneAllowed: true },
      "end_conversation",
    );
    assert.deepEqual(allowed.progressingTools, []);
    assert.equal(allowed.redirects, undefined);
  });
});
