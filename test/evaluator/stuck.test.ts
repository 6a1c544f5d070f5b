import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { givenGrounding, runTurn } from "../../src/agent/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { shieldSetsFor } from "../../src/shield/token/index.js";
import { Conversation } from "../support/conversation.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// A run that cannot progress ends honestly: after the policy's done.stuck_after calls with
// duties still open, ending is allowed (and the progressing move) instead of forcing a call.
const withStuckAfter = (bound: number) =>
  parsePolicy(
    readFileSync(travelPolicyFile, "utf8").replace(
      "max_refusals: 3",
      `max_refusals: 3\n  stuck_after: ${bound}`,
    ),
    travelPolicyFile,
  );

/** A flight asked for, and the distance checked again and again: the duty to book stays open. */
function checkedTimes(times: number): Conversation {
  const conversation = new Conversation(
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
  );
  for (let index = 0; index < times; index++)
    conversation.call(
      "check_distance",
      { origin: "Toronto", destination: "Chicago" },
      { text: "720 km", label: "long" },
    );
  return conversation;
}

describe("done.stuck_after", () => {
  it("defaults to 25 (the MENTOR paper's bound)", () => {
    assert.equal(loadPolicy(travelPolicyFile).stuckAfter, 25);
  });

  it("allows ending, as the progressing move, once the run has made that many calls with duties open", () => {
    const evaluator = new Evaluator(withStuckAfter(3));
    const before = evaluator.next(checkedTimes(2).messages);
    assert.deepEqual(before.done, { allowed: false, progressing: false });
    const after = evaluator.next(checkedTimes(3).messages);
    assert.equal(after.done.allowed, true);
    assert.equal(after.done.progressing, true);
    assert.match(after.done.stuck ?? "", /3 calls made and duties still open/);
    assert.ok(after.openDuties.length > 0, "the duties are still reported");
    // The token shield stops forcing a call: the end is allowed and boosted, not redirected.
    const forced = shieldSetsFor(evaluator, checkedTimes(2).messages);
    assert.equal(forced.doneAllowed, false);
    const sets = shieldSetsFor(evaluator, checkedTimes(3).messages);
    assert.equal(sets.doneAllowed, true);
    assert.equal(sets.doneProgressing, true);
    assert.equal(sets.doneRedirect, undefined);
  });

  it("0 never lets a run with open duties end", () => {
    const evaluator = new Evaluator(withStuckAfter(0));
    assert.equal(evaluator.next(checkedTimes(30).messages).done.allowed, false);
  });

  it("a stuck turn's answer is not refused, the model is told it may stop, and the response says stuck", async () => {
    const evaluator = new Evaluator(withStuckAfter(3));
    const generator = new ScriptedGenerator(["I cannot book this flight: the route needs a seat check."]);
    const turn = (messages: unknown[]) =>
      runTurn({
        messages: messages as never,
        tools: [],
        toolChoice: "auto",
        mode: "prompt",
        evaluator,
        grounder: givenGrounding,
        generator,
      });
    const forced = await turn(checkedTimes(2).messages);
    assert.ok(forced.mentor.doneRefusals > 0);
    assert.equal(forced.mentor.stuck, undefined);
    const stuck = await turn(checkedTimes(3).messages);
    assert.equal(stuck.mentor.doneRefusals, 0);
    assert.match(stuck.mentor.stuck ?? "", /done\.stuck_after: 3/);
    assert.equal(stuck.message.content, "I cannot book this flight: the route needs a seat check.");
    const seen = JSON.stringify(generator.requests.at(-1)?.messages);
    assert.match(seen, /stop and tell the user what blocks them/);
  });
});
