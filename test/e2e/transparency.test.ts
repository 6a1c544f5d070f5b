import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { travel } from "../../bench/domains/travel/index.js";
import { Engine, type GenerateOptions } from "../../src/llm/index.js";
import { loadRegistry, resolveModel } from "../../src/models/index.js";

// The token shield on the real default model (`.ci/run` pulls it): where it masks nothing (empty
// sets: nothing unsafe, nothing progressing, done allowed) it generates exactly the tokens of
// none mode, in free text and in calls, whether the model writes its calls as text or the call
// is required. A few generations: each costs seconds on two cores.
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

  /** What a generation gives: its tokens, calls and text, or its error (a call cut by max_tokens). */
  async function outcome(options: GenerateOptions) {
    try {
      const { tokens, toolCalls, content } = await engine.generate(options);
      return { tokens, toolCalls, content };
    } catch (error) {
      return (error as Error).message;
    }
  }

  for (const toolChoice of ["auto", "required"] as const)
    it(`token mode with empty sets writes none mode's tokens (tool_choice ${toolChoice})`, async () => {
      let calls = 0;
      for (const request of requests) {
        const common: GenerateOptions = {
          messages: [
            { role: "system", content: travel.manual("") },
            { role: "user", content: request },
          ],
          tools: travel.tools(""),
          toolChoice,
          maxTokens: 128,
        };
        // Both generations of a pair then find the whole prompt cached and evaluate its last token alone.
        await engine.generate({ ...common, maxTokens: 1, toolChoice: "none" });
        for (const seed of [1, 2]) {
          const plain = await outcome({ ...common, seed, shield: { mode: "none" } });
          const shielded = await outcome({ ...common, seed, shield: { mode: "token", sets: {}, eta: 2 } });
          assert.deepEqual(shielded, plain, `${request} (seed ${seed})`);
          calls += typeof plain === "string" ? 0 : plain.toolCalls.length;
        }
      }
      if (toolChoice === "required") assert.ok(calls >= requests.length * 2, `${calls} calls`);
      console.log(
        `# tool_choice ${toolChoice}: ${calls} calls in ${requests.length * 2} generations, equal in both modes`,
      );
    });
});
