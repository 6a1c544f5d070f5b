import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Engine } from "../../src/llm/index.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import type { GenerateOptions } from "../../src/shield/token/index.js";
import { travelTools } from "../support/tiny-travel.js";

const directory = mkdtempSync(join(tmpdir(), "mentor-concurrency-"));
after(() => rmSync(directory, { recursive: true, force: true }));

const request = (seed: number, content: string): GenerateOptions => ({
  messages: [{ role: "user", content }],
  tools: travelTools,
  seed,
  maxTokens: 40,
});

// Overlapping generations do not equal their serial results on a tiny model: llama.cpp evaluates
// two prompts in one batch (or the rest of a cached prefix) with other kernel shapes, the logits
// differ in the last bits, and random weights turn that into other text within a few tokens
// (measured: the first 3 tokens agree). So these tests check what must hold instead.
describe("engine with two sequences", () => {
  let engine: Engine;
  before(async () => {
    const path = join(directory, "qwen.gguf");
    await makeTinyModel({ family: "qwen3", outputPath: path, seed: 5 });
    engine = await Engine.load({ modelPath: path, contextSize: 1024, sequences: 2 });
  });
  after(async () => {
    await engine?.dispose();
  });

  it("runs generations at once: a short one started second finishes first", async () => {
    assert.equal(engine.sequences, 2);
    const finished: string[] = [];
    const long = engine
      .generate({ ...request(1, "Tell me a long story."), toolChoice: "none", maxTokens: 200 })
      .then((result) => {
        finished.push("long");
        return result;
      });
    const short = engine
      .generate({ ...request(2, "Hi"), toolChoice: "none", maxTokens: 3 })
      .then((result) => {
        finished.push("short");
        return result;
      });
    const results = await Promise.all([long, short]);
    assert.deepEqual(finished, ["short", "long"]);
    assert.deepEqual(
      results.map((result) => [result.stats.sampled, result.finishReason]),
      [
        [200, "length"],
        [3, "length"],
      ],
    );
  });

  it("keeps the token shield exact with four generations in flight", async () => {
    const names = travelTools.map((tool) => tool.function.name);
    const results = await Promise.all(
      [0, 1, 2, 3].map((seed) =>
        engine.generate({
          ...request(seed, "Book it."),
          toolChoice: "required",
          shield: { mode: "token", sets: { unsafeTools: [names[seed % 2] as string] } },
        }),
      ),
    );
    results.forEach((result, seed) => {
      const call = result.toolCalls[0];
      assert.ok(call, JSON.stringify(result));
      assert.equal(call.name, names[(seed + 1) % 2]);
      assert.deepEqual(Object.keys(call.arguments), ["origin", "destination"]);
    });
  });

  it("gives a follow-up turn the sequence that holds its conversation", async () => {
    const first = request(3, "Plan a trip from Toronto to Chicago, please.");
    const cold = await engine.generate(first);
    await engine.generate(request(4, "Something else entirely."));
    const followUp = {
      ...first,
      messages: [
        ...first.messages,
        { role: "assistant" as const, content: "Sure." },
        { role: "user" as const, content: "Go." },
      ],
    };
    const warm = await engine.generate(followUp);
    // The other sequence shares only the template's opening with it.
    assert.ok(
      warm.stats.reusedTokens > cold.stats.promptTokens / 2,
      `reused ${warm.stats.reusedTokens} of ${warm.stats.promptTokens} tokens`,
    );
  });
});
