import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Labeler, type LabelModel, type ModelRequest } from "../../src/labeler/index.js";
import type { ToolSpec } from "../../src/policy/index.js";
import { travelWithSeatsLlm } from "../support/travel-llm.js";

// No model: a scripted LabelModel answers by the text it is asked about and counts the requests.
const travel = travelWithSeatsLlm();
const seats = travel.tools.get("check_seats") as ToolSpec;

class ScriptedModel implements LabelModel {
  readonly name = "scripted";
  readonly asked: string[] = [];
  async complete(request: ModelRequest): Promise<string> {
    this.asked.push(request.user);
    if (request.user.includes("Maybe, ask the desk.")) return "available";
    return request.user.includes("Plenty of room.") ? "available" : "none";
  }
}

describe("the labeler's answer cache", () => {
  it("asks once per text, keeps the least recently used out first, and caches a none answer", async () => {
    const model = new ScriptedModel();
    const labeler = new Labeler(travel, { model, cacheSize: 2 });
    const label = (text: string) => labeler.labelOutput(seats, {}, text);
    assert.deepEqual(await label("Plenty of room."), { value: "available", source: "llm" });
    assert.deepEqual(await label("Plenty of room."), { value: "available", source: "cache" });
    assert.deepEqual(await label("Nothing known."), { value: null, source: "llm" });
    assert.deepEqual(
      await label("Nothing known."),
      { value: null, source: "cache" },
      "none is an answer too",
    );
    assert.equal(model.asked.length, 2);
    // "Plenty of room." was used before "Nothing known.": a third text drops it.
    await label("Plenty of room.");
    assert.equal(model.asked.length, 2, "a hit makes it the most recently used");
    assert.deepEqual(await label("Maybe, ask the desk."), { value: "available", source: "llm" });
    assert.equal((await label("Plenty of room.")).source, "cache");
    assert.equal((await label("Nothing known.")).source, "llm", "the least recently used was dropped");
    assert.equal(model.asked.length, 4);
  });

  it("cacheSize 0 keeps nothing", async () => {
    const model = new ScriptedModel();
    const labeler = new Labeler(travel, { model, cacheSize: 0 });
    await labeler.labelOutput(seats, {}, "Plenty of room.");
    assert.equal((await labeler.labelOutput(seats, {}, "Plenty of room.")).source, "llm");
    assert.equal(model.asked.length, 2);
  });
});
