import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { EngineGenerator, givenGrounding, runTurn, type TurnResult } from "../../src/agent/index.js";
import { MentorError } from "../../src/errors/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { Engine } from "../../src/llm/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { makeTravelModel, travelMessages, travelPolicyFile, travelTools } from "../support/tiny-travel.js";

// The usage a turn reports against max_tokens: the answer's generation within the cap, the whole
// turn (every regeneration) in mentor.usage.
const evaluator = new Evaluator(loadPolicy(travelPolicyFile));
const directory = mkdtempSync(join(tmpdir(), "mentor-max-tokens-turn-"));
after(() => rmSync(directory, { recursive: true, force: true }));

function assertUsage(result: TurnResult, maxTokens: number, where: string): void {
  const attempts = result.mentor.attempts;
  for (const attempt of attempts)
    assert.ok(attempt.usage.completionTokens <= maxTokens, `${where}: ${JSON.stringify(attempt.usage)}`);
  assert.ok(result.usage.completionTokens <= maxTokens, `${where}: ${JSON.stringify(result.usage)}`);
  assert.deepEqual(result.usage, attempts.at(-1)?.usage, where);
  assert.deepEqual(
    result.mentor.usage,
    {
      promptTokens: attempts.reduce((sum, attempt) => sum + attempt.usage.promptTokens, 0),
      completionTokens: attempts.reduce((sum, attempt) => sum + attempt.usage.completionTokens, 0),
    },
    where,
  );
}

describe("max_tokens in a shielded turn on a tiny model (travel policy)", () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.load({
      modelPath: await makeTravelModel(join(directory, "llama.gguf")),
      contextSize: 1024,
    });
  });
  after(async () => {
    await engine?.dispose();
  });

  it("no turn reports more completion tokens than max_tokens, whatever the shield regenerates or forces", async () => {
    const generator = new EngineGenerator(engine);
    const seen = { calls: 0, cut: 0, regenerated: 0 };
    let run = 0;
    for (const mode of ["token", "prompt", "none"] as const)
      for (const toolChoice of ["auto", "required"] as const)
        for (const maxTokens of [4, 16, 32, 48]) {
          run++;
          const where = `${mode}, ${toolChoice}, max_tokens ${maxTokens}`;
          let result: TurnResult;
          try {
            result = await runTurn({
              messages: travelMessages,
              tools: travelTools,
              toolChoice,
              mode,
              evaluator,
              grounder: givenGrounding,
              generator,
              seed: run,
              maxTokens,
            });
          } catch (error) {
            // A turn may be refused (nothing allowed), never answered over the cap.
            assert.ok(
              error instanceof MentorError && error.code === "MNT_ERR_NOTHING_ALLOWED",
              `${where}: ${error}`,
            );
            continue;
          }
          assertUsage(result, maxTokens, where);
          if (result.mentor.attempts.length > 1) seen.regenerated++;
          if (result.finishReason === "tool_calls") seen.calls++;
          if (result.finishReason === "length") {
            seen.cut++;
            assert.equal(result.mentor.attempts.at(-1)?.finishReason, "length", where);
          }
        }
    console.log(`# ${run} turns: ${JSON.stringify(seen)}`);
    assert.ok(seen.calls > 0 && seen.cut > 0 && seen.regenerated > 0, JSON.stringify(seen));
  });
});

describe("the usage of a turn with regenerations (scripted generator)", () => {
  const bookTrain = { name: "book_train", arguments: { origin: "Toronto", destination: "Chicago" } };
  const checkDistance = { name: "check_distance", arguments: { origin: "Toronto", destination: "Chicago" } };
  const turn = (steps: ConstructorParameters<typeof ScriptedGenerator>[0], maxRegenerations = 4) =>
    runTurn({
      messages: travelMessages,
      tools: travelTools,
      mode: "prompt",
      evaluator,
      grounder: givenGrounding,
      generator: new ScriptedGenerator(steps),
      maxRegenerations,
    });

  it("is the returned generation's; mentor.usage sums every generation", async () => {
    // A booking before its check is blocked; the check is returned (10 prompt, 5 completion tokens each).
    const result = await turn([{ calls: [bookTrain] }, { calls: [checkDistance] }]);
    assert.equal(result.message.tool_calls?.[0]?.function.name, "check_distance");
    assert.deepEqual(result.usage, { promptTokens: 10, completionTokens: 5 });
    assert.deepEqual(result.mentor.usage, { promptTokens: 20, completionTokens: 10 });
  });

  it("of a turn whose regenerations ran out is the last generation's", async () => {
    const result = await turn([{ calls: [bookTrain] }], 2);
    assert.equal(result.mentor.exhausted, true);
    assert.deepEqual(result.usage, { promptTokens: 10, completionTokens: 5 });
    assert.deepEqual(result.mentor.usage, { promptTokens: 30, completionTokens: 15 });
  });
});
