import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { seededRandom } from "../../src/base/random.js";
import { MentorError } from "../../src/errors/index.js";
import { Engine, type GenerationResult } from "../../src/llm/index.js";
import { tinyModelFamilies } from "../../src/models/family-tokenizer.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import type { ChatTool, ParameterSchema } from "../../src/openai/index.js";
import type { GenerateOptions } from "../../src/shield/token/index.js";

// Needs a model: writes tiny ones (random weights, real tokenizers), the smallest shape.
// max_tokens counts every token of the answer, forced structure included: a property over seeds,
// caps and the ways the shield forces tokens (a turn that must start in a call, the calls a turn
// must hold, the advised call an end token or spent free text becomes).
const seeds = Number(process.env.MENTOR_MAX_TOKENS_SEEDS ?? 80);
const directory = mkdtempSync(join(tmpdir(), "mentor-max-tokens-"));
after(() => rmSync(directory, { recursive: true, force: true }));

function tool(name: string, properties: Record<string, ParameterSchema>): ChatTool {
  return {
    type: "function",
    function: { name, description: `The ${name} tool.`, parameters: { type: "object", properties } },
  };
}

const tools = ["check_distance", "book_train", "cancel"].map((name) =>
  tool(name, {
    city: { enum: ["Oslo", "Rome", "Lima"] },
    origin: { type: "string" },
    seats: { type: "integer" },
  }),
);
const messages = [{ role: "user" as const, content: "Book me a trip from Toronto to Chicago." }];
// Up to 144: two calls of the Hermes syntax (qwen3) need more than 89 tokens.
const caps = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144];

/** The ways a generation is asked for, by what the shield forces. */
const shapes: Record<string, (parallel: boolean) => Partial<GenerateOptions>> = {
  "free text or a call (none mode)": () => ({ toolChoice: "auto", shield: { mode: "none" } }),
  "a required call (the turn starts in its prefix)": () => ({ toolChoice: "required" }),
  "two calls the turn must hold": (parallel) =>
    parallel ? { toolChoice: "required", minToolCalls: 2 } : { toolChoice: "required" },
  "a turn that may not end: its end becomes the advised call": () => ({
    toolChoice: "auto",
    shield: {
      mode: "token",
      sets: {
        doneAllowed: false,
        unsafeTools: ["book_train"],
        doneRedirect: { to: "check_distance", arguments: { city: "Rome", origin: "Toronto" } },
      },
    },
  }),
};

describe("max_tokens caps the answer's tokens, forced ones included", { concurrency: true }, () => {
  for (const family of tinyModelFamilies) {
    describe(`on a tiny ${family} model`, () => {
      let engine: Engine;
      before(async () => {
        const path = join(directory, `${family}.gguf`);
        await makeTinyModel({
          family,
          outputPath: path,
          seed: 7,
          layers: 1,
          embeddingLength: 16,
          matrixType: "f32",
        });
        engine = await Engine.load({ modelPath: path, contextSize: 1024 });
      });
      after(async () => {
        await engine?.dispose();
      });

      it(`no generation goes past max_tokens; a call that does not fit is cut (${seeds} seeds)`, async () => {
        const random = seededRandom(31);
        const parallel = engine.syntax.betweenCalls !== undefined;
        const outcomes = new Map<string, { calls: number; texts: number; cut: number; redirected: number }>();
        for (let run = 0; run < seeds; run++) {
          const name = Object.keys(shapes)[run % Object.keys(shapes).length] as string;
          const maxTokens = caps[Math.floor(random() * caps.length)] as number;
          const options: GenerateOptions = {
            messages,
            tools,
            seed: run,
            maxTokens,
            maxStringTokens: 4,
            shield: { mode: "token" },
            ...(shapes[name] as (parallel: boolean) => Partial<GenerateOptions>)(parallel),
          };
          const outcome = outcomes.get(name) ?? { calls: 0, texts: 0, cut: 0, redirected: 0 };
          outcomes.set(name, outcome);
          let result: GenerationResult;
          try {
            result = await engine.generate(options);
          } catch (error) {
            assert.ok(
              error instanceof MentorError && error.code === "MNT_ERR_ENGINE_CALL_INCOMPLETE",
              `${name}, seed ${run}: ${error}`,
            );
            outcome.cut++;
            continue;
          }
          const where = `${name}, seed ${run}, max_tokens ${maxTokens}`;
          assert.ok(result.tokens.length <= maxTokens, `${where}: ${result.tokens.length} tokens`);
          assert.ok(
            result.stats.completionTokens >= result.tokens.length &&
              result.stats.completionTokens <= maxTokens,
            `${where}: ${result.stats.completionTokens} completion tokens`,
          );
          if (result.toolCalls.length > 0) {
            outcome.calls++;
            if (result.stats.redirected > 0) outcome.redirected++;
          } else {
            outcome.texts++;
            if (result.finishReason === "length") outcome.cut++;
          }
        }
        console.log(`# ${family}: ${JSON.stringify(Object.fromEntries(outcomes))}`);
        // Every shape both fits and is cut somewhere, and the advised call is written within the cap.
        for (const [name, outcome] of outcomes) {
          assert.ok(outcome.cut > 0, `${name}: ${JSON.stringify(outcome)}`);
          if (name !== "free text or a call (none mode)")
            assert.ok(outcome.calls > 0, `${name}: ${JSON.stringify(outcome)}`);
        }
        assert.ok(
          (outcomes.get("a turn that may not end: its end becomes the advised call")?.redirected ?? 0) > 0,
        );
      });

      it("the advised call of a turn that may not end fits: its text stops in time", async () => {
        const forced = shapes["a turn that may not end: its end becomes the advised call"]?.(false) ?? {};
        for (const maxTokens of [55])
          for (let seed = 0; seed < 8; seed++) {
            const result = await engine.generate({
              messages,
              tools,
              seed,
              maxTokens,
              maxStringTokens: 4,
              ...forced,
            });
            assert.equal(
              result.toolCalls[0]?.name,
              "check_distance",
              `max_tokens ${maxTokens}, seed ${seed}`,
            );
            assert.ok(result.stats.completionTokens <= maxTokens);
          }
      });
    });
  }
});
