import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Labeler, type LabelModel, type ModelRequest } from "../../src/labeler/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// The labeler's budget per conversation: model requests sent and characters read.
const policy = loadPolicy(travelPolicyFile);

class CountingModel implements LabelModel {
  readonly name = "counting";
  requests = 0;
  async complete(_request: ModelRequest): Promise<string> {
    this.requests++;
    return JSON.stringify([
      {
        name: "request_travel",
        arguments: {
          origin: "Toronto",
          destination: "Chicago",
          urgent: false,
          mode: "train",
          travel_class: "any",
        },
      },
    ]);
  }
}

/** User messages the travel patterns do not ground (lower case), so each goes to the model; all differ. */
const unmatched = (count: number) =>
  Array.from({ length: count }, (_, index) => ({
    role: "user",
    content: `please get me from toronto to chicago, request ${index}`,
  }));

describe("the labeler's budget", () => {
  it("sends at most maxModelRequests to the model and notes every message it did not ask about", async () => {
    const model = new CountingModel();
    const labeler = new Labeler(policy, { model, limits: { maxModelRequests: 3 } });
    const { notes } = await labeler.ground(unmatched(10));
    assert.equal(model.requests, 3);
    const refused = notes.filter((note) => note.error?.includes("model requests"));
    assert.equal(refused.length, 7);
    assert.ok(refused.every((note) => note.value === undefined));
  });

  it("reads at most maxCharacters of text and grounds nothing past them", async () => {
    const labeler = new Labeler(policy, { limits: { maxCharacters: 100 } });
    const messages = Array.from({ length: 5 }, () => ({
      role: "user",
      content: "Book a train from Toronto to Chicago.",
    }));
    const grounding = await labeler.ground(messages);
    const read = grounding.notes.filter((note) => note.error === undefined);
    assert.equal(read.length, 2);
    assert.match(grounding.notes[2]?.error ?? "", /100 characters/);
  });

  it("stops with the signal's reason when the request is aborted", async () => {
    const labeler = new Labeler(policy);
    const controller = new AbortController();
    controller.abort(new Error("timed out"));
    const messages = [{ role: "user", content: "Book a train from Toronto to Chicago." }];
    await assert.rejects(labeler.ground(messages, controller.signal), /timed out/);
  });
});
