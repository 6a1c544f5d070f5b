import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { travel } from "../../bench/domains/travel/index.js";
import { Engine } from "../../src/llm/index.js";
import { loadRegistry, resolveModel } from "../../src/models/index.js";
import type { GenerateOptions } from "../../src/shield/token/index.js";

// The token shield on the real default model (`.ci/run` pulls it): where it masks nothing (empty
// sets: nothing unsafe, nothing progressing, done allowed) it generates exactly the tokens of
// none mode, in free text and in calls, whether the model writes its calls as text or the call
// is required. Both modes must succeed (an error, such as a call cut by max_tokens, fails the
// test rather than comparing equal), and calls must be generated: every generation under
// tool_choice required, at least one under auto (these requests get a call written as text),
// else the test would compare free text only. A few generations: each costs seconds on two cores.
// 512 tokens: on some machines' builds of llama.cpp the model writes several calls for one request
// under auto (9 calls in 4 generations), past 256 tokens, in both modes alike.
const requests = [
  "Book a flight from Toronto to Chicago for me, business class please.",
  "Please book me a flight from Ottawa to Montreal tomorrow morning.",
];

describe("transparency on the default model", { timeout: 20 * 60 * 1000 }, () => {
  let engine: Engine;
  before(async () => {
    engine = await Engine.load({ modelPath: await resolveModel(loadRegistry().default, { pull: true }) });
  });
  after(async () => {
    await engine?.dispose();
  });

  /** What a generation gives: its tokens, calls, text and why it ended. */
  async function outcome(options: GenerateOptions) {
    const { tokens, toolCalls, content, finishReason } = await engine.generate(options);
    return { tokens, toolCalls, content, finishReason };
  }

  for (const toolChoice of ["auto", "required"] as const)
    it(`token mode with empty sets writes none mode's tokens (tool_choice ${toolChoice})`, async () => {
      const callsPerGeneration: number[] = [];
      for (const request of requests) {
        const common: GenerateOptions = {
          messages: [
            { role: "system", content: travel.manual("") },
            { role: "user", content: request },
          ],
          tools: travel.tools(""),
          toolChoice,
          maxTokens: 512,
        };
        // Both generations of a pair then find the whole prompt cached and evaluate its last token alone.
        await engine.generate({ ...common, maxTokens: 1, toolChoice: "none" });
        for (const seed of [1, 2]) {
          const plain = await outcome({ ...common, seed, shield: { mode: "none" } });
          const shielded = await outcome({ ...common, seed, shield: { mode: "token", sets: {}, eta: 2 } });
          assert.deepEqual(shielded, plain, `${request} (seed ${seed})`);
          callsPerGeneration.push(plain.toolCalls.length);
        }
      }
      const calls = callsPerGeneration.reduce((sum, count) => sum + count, 0);
      if (toolChoice === "required")
        assert.ok(
          callsPerGeneration.every((count) => count >= 1),
          `a generation without a call: ${callsPerGeneration}`,
        );
      else assert.ok(calls >= 1, "no generation made a call: only free text was compared");
      console.log(
        `# tool_choice ${toolChoice}: ${calls} calls in ${callsPerGeneration.length} generations, equal in both modes`,
      );
    });
});
