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

// Tests in this file need a model: they write tiny ones (random weights, real tokenizers). The
// smallest shape (one layer, hidden size 16, f32) halves the CPU time per token against the
// default tiny model: most of it goes to the vocabulary-sized output and sampling.
// Shielded generations per family: MENTOR_SHIELD_GENERATIONS (default 1000).
const generations = Number(process.env.MENTOR_SHIELD_GENERATIONS ?? 1000);
/** Seeds of the transparency runs per family (token mode with empty sets against none mode). */
const transparencySeeds = Number(process.env.MENTOR_TRANSPARENCY_SEEDS ?? 200);
/** Every how many seeds the property run also generates unshielded (none mode), on the same seed. */
const unshieldedEvery = 8;

const directory = mkdtempSync(join(tmpdir(), "mentor-engine-"));
after(() => rmSync(directory, { recursive: true, force: true }));

/** Names that tokenize in one piece and in many. */
const toolNames = [
  "check_distance",
  "book_train",
  "book_flight",
  "get_reservation_details_for_customer_account",
  "cancel",
  "transfer_to_human_agents",
  "x",
  "zq_vkw_plxr",
];

function tool(name: string, properties: Record<string, ParameterSchema>): ChatTool {
  return {
    type: "function",
    function: { name, description: `The ${name} tool.`, parameters: { type: "object", properties } },
  };
}

const city = { enum: ["Toronto", "Chicago", "Ottawa"] };
/** Every kind of value slot: a free string, an enum, an integer, a boolean. */
const tools = toolNames.map((name) =>
  tool(name, { origin: { type: "string" }, city, seats: { type: "integer" }, urgent: { type: "boolean" } }),
);
/**
 * The property runs' names: shorter ones (the steps per generation set the run's time), with
 * names that are prefixes of others.
 */
const propertyNames = ["check_distance", "book", "book_train", "book_flight", "cancel", "x", "zq_vkw_plxr"];
/** Without arguments, for the eta run (it looks only at names). */
const nameOnlyTools = propertyNames.map((name) => tool(name, {}));
/** The two shielded kinds of value slot: an enum (allow-list) and a free string (deny-list). */
const propertyTools = propertyNames.map((name) =>
  tool(name, { city: { enum: ["Oslo", "Rome", "Lima"] }, origin: { type: "string" } }),
);

const messages = [{ role: "user" as const, content: "Book me a trip from Toronto to Chicago." }];

function subset<T>(items: readonly T[], random: () => number, probability: number): T[] {
  return items.filter(() => random() < probability);
}

/** The arguments text of a raw call, between the name's terminator and the suffix. */
function rawArguments(engine: Engine, result: GenerationResult, position = 0): string {
  const raw = result.rawCalls[position] as string;
  const call = result.toolCalls[position] as { name: string };
  const start =
    raw.indexOf(call.name + engine.syntax.paramsPrefix) +
    call.name.length +
    engine.syntax.paramsPrefix.length;
  assert.ok(raw.endsWith(engine.syntax.suffix), raw);
  return raw.slice(start, raw.length - engine.syntax.suffix.length);
}

/** Every call of a result parses: its raw arguments are the JSON of its arguments. */
function assertCallsParse(engine: Engine, result: GenerationResult): void {
  assert.ok(result.toolCalls.length > 0, JSON.stringify(result));
  assert.equal(result.rawCalls.length, result.toolCalls.length);
  result.toolCalls.forEach((call, position) => {
    assert.deepEqual(JSON.parse(rawArguments(engine, result, position)), call.arguments);
  });
}

// The three families run at once (one model each): on two cores their evaluation overlaps.
describe("engine on tiny models", { concurrency: true }, () => {
  for (const family of tinyModelFamilies) {
    describe(`engine on a tiny ${family} model`, { concurrency: 1 }, () => {
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
        engine = await Engine.load({ modelPath: path, contextSize: 2048 });
      });
      after(async () => {
        await engine?.dispose();
      });

      it(`never emits an unsafe name or value in token mode; none mode does (${generations} seeds)`, async () => {
        const random = seededRandom(17);
        const parallel = engine.syntax.betweenCalls !== undefined;
        const counts = {
          calls: 0,
          unsafeNames: 0,
          unsafeValues: 0,
          vetoed: 0,
          redirected: 0,
          none: 0,
          unsafeNamesNone: 0,
        };
        let unsafeSecondNamesNone = 0;
        for (let run = 0; run < generations; run++) {
          let unsafe = subset(propertyNames, random, 0.5);
          if (unsafe.length === propertyNames.length) unsafe = unsafe.slice(1);
          const safe = propertyNames.filter((name) => !unsafe.includes(name));
          const unsafeCities = subset(["Oslo", "Rome"], random, 0.5);
          const unsafeOrigins = subset(["O", "Os", "Oslo", "R"], random, 0.5);
          // Every other run redirects each unsafe name to a safe one (intent-keeping).
          const redirects =
            run % 2 === 1
              ? unsafe.map((name, at) => ({ tool: name, to: safe[at % safe.length] as string }))
              : [];
          const sets = {
            unsafeTools: unsafe,
            redirects,
            progressingTools: subset(safe, random, 0.3),
            arguments: safe.flatMap((name) => [
              { tool: name, argument: "city", unsafe: unsafeCities },
              { tool: name, argument: "origin", unsafe: unsafeOrigins },
            ]),
          };
          const common = {
            messages,
            tools: propertyTools,
            toolChoice: "required" as const,
            // Every eighth turn holds two calls where the format allows it: the sets hold for both.
            ...(parallel && run % 8 === 0 ? { minToolCalls: 2 } : {}),
            seed: 1000 + run,
            maxStringTokens: 2,
            // Room for two calls, their forced structure included (max_tokens counts it).
            maxTokens: 128,
          };
          const shielded = await engine.generate({ ...common, shield: { mode: "token", sets } });
          assertCallsParse(engine, shielded);
          for (const call of shielded.toolCalls) {
            counts.calls++;
            if (unsafe.includes(call.name)) counts.unsafeNames++;
            if (unsafeCities.includes(call.arguments.city as string)) counts.unsafeValues++;
            if (unsafeOrigins.includes(call.arguments.origin as string)) counts.unsafeValues++;
          }
          counts.vetoed += shielded.stats.vetoed;
          counts.redirected += shielded.stats.redirected;
          if (run % unshieldedEvery !== 0) continue;
          const plain = await engine.generate({ ...common, shield: { mode: "none" } });
          assertCallsParse(engine, plain);
          counts.none++;
          plain.toolCalls.forEach((call, position) => {
            if (!unsafe.includes(call.name)) return;
            counts.unsafeNamesNone++;
            if (position > 0) unsafeSecondNamesNone++;
          });
        }
        console.log(
          `# ${family}: ${generations} shielded generations (${counts.calls} calls): unsafe names ${counts.unsafeNames}, unsafe values ${counts.unsafeValues}, vetoes ${counts.vetoed}, redirected names ${counts.redirected}; none mode on ${counts.none} of the seeds: unsafe names ${counts.unsafeNamesNone}`,
        );
        assert.equal(counts.unsafeNames, 0);
        assert.equal(counts.unsafeValues, 0);
        if (generations >= 100) assert.ok(counts.redirected > 0, "some unsafe names were redirected");
        assert.ok(counts.unsafeNamesNone > 0, "none mode emits unsafe names on the same seeds");
        if (parallel) assert.ok(unsafeSecondNamesNone > 0, "none mode emits unsafe names in second calls");
      });

      // Every generation of a group finds the whole prompt in the KV cache and evaluates only its
      // last token, as its pair does: batch shapes change llama.cpp's numerics, the shield must not.
      async function warm(common: Parameters<Engine["generate"]>[0]): Promise<void> {
        await engine.generate({ ...common, shield: { mode: "none" } });
      }

      it(`with nothing masked, token mode is none mode token for token (${transparencySeeds} seeds)`, async () => {
        let calls = 0;
        let texts = 0;
        for (const toolChoice of ["required", "auto"] as const) {
          // A required call needs room for its forced structure too (max_tokens counts it).
          const maxTokens = toolChoice === "required" ? 64 : 32;
          const common = { messages, tools: propertyTools, toolChoice, maxStringTokens: 3, maxTokens };
          await warm(common);
          for (let run = 0; run < transparencySeeds / 2; run++) {
            const seeded = { ...common, seed: 5000 + run };
            const plain = await engine.generate({ ...seeded, shield: { mode: "none" } });
            // Empty sets: nothing unsafe, nothing progressing, done allowed; eta has nothing to boost.
            const shielded = await engine.generate({
              ...seeded,
              shield: { mode: "token", sets: {}, eta: 3 },
            });
            assert.deepEqual(shielded.tokens, plain.tokens, `${toolChoice}, seed ${seeded.seed}`);
            assert.deepEqual(shielded.toolCalls, plain.toolCalls);
            assert.equal(shielded.content, plain.content);
            calls += plain.toolCalls.length;
            if (plain.content !== null) texts++;
          }
        }
        console.log(
          `# ${family}: ${transparencySeeds} seeds equal in both modes (${calls} calls, ${texts} texts)`,
        );
        assert.ok(calls > 0 && texts > 0, `${calls} calls, ${texts} texts`);
      });

      it(`with only names masked, the arguments are those of none mode (${transparencySeeds / 2} seeds)`, async () => {
        const random = seededRandom(23);
        const common = {
          messages,
          tools: propertyTools,
          toolChoice: "required" as const,
          parallelToolCalls: false,
          maxStringTokens: 3,
          maxTokens: 64,
        };
        await warm(common);
        let sameName = 0;
        for (let run = 0; run < transparencySeeds / 2; run++) {
          const seeded = { ...common, seed: 7000 + run };
          const plain = await engine.generate({ ...seeded, shield: { mode: "none" } });
          const chosen = plain.toolCalls[0]?.name as string;
          const unsafeTools = subset(propertyNames, random, 0.5).filter((name) => name !== chosen);
          const shielded = await engine.generate({
            ...seeded,
            shield: { mode: "token", sets: { unsafeTools } },
          });
          // Where the two differ, they differ in the name: once the names are written alike, so is the rest.
          const differ = plain.tokens.findIndex((token, at) => shielded.tokens[at] !== token);
          if (differ >= 0) {
            const before = plain.tokens
              .slice(0, differ)
              .map((token) => engine.vocabulary.text(token))
              .join("");
            assert.ok(
              !before.includes(engine.syntax.paramsPrefix),
              `seed ${seeded.seed}: they differ after the name, at ${JSON.stringify(before)}`,
            );
          } else assert.equal(shielded.tokens.length, plain.tokens.length);
          if (shielded.toolCalls[0]?.name === chosen) {
            sameName++;
            if (differ < 0) assert.deepEqual(shielded.toolCalls, plain.toolCalls);
          }
        }
        console.log(`# ${family}: the same name in ${sameName} of ${transparencySeeds / 2} seeds`);
        assert.ok(sameName > 0);
      });

      it("raises the share of progressing names with eta", async () => {
        const count = 60;
        const shares: number[] = [];
        for (const eta of [0, 1, 4]) {
          let progressingCalls = 0;
          for (let run = 0; run < count; run++) {
            const result = await engine.generate({
              messages,
              tools: nameOnlyTools,
              toolChoice: "required",
              parallelToolCalls: false,
              seed: 5000 + run,
              shield: { mode: "token", eta, sets: { progressingTools: ["cancel", "x"] } },
            });
            if (["cancel", "x"].includes(result.toolCalls[0]?.name ?? "")) progressingCalls++;
          }
          shares.push(progressingCalls / count);
        }
        console.log(
          `# ${family}: progressing share at eta 0, 1, 4: ${shares.map((share) => share.toFixed(2)).join(", ")}`,
        );
        assert.ok((shares[2] as number) > (shares[0] as number), `${shares}`);
      });

      it("writes several calls in one turn only where the format allows them", async () => {
        const request = { messages, tools, toolChoice: "required" as const, seed: 11, maxStringTokens: 2 };
        const rejectsBadInput = (error: unknown) =>
          error instanceof MentorError && error.code === "MNT_ERR_BAD_INPUT";
        for (let seed = 0; seed < 10; seed++) {
          const single = await engine.generate({ ...request, seed, parallelToolCalls: false });
          assert.equal(single.toolCalls.length, 1);
        }
        await assert.rejects(
          engine.generate({ ...request, minToolCalls: 2, parallelToolCalls: false }),
          rejectsBadInput,
        );
        if (family !== "qwen3") {
          assert.equal(engine.syntax.betweenCalls, undefined);
          await assert.rejects(engine.generate({ ...request, minToolCalls: 2 }), rejectsBadInput);
          return;
        }
        assert.equal(engine.syntax.betweenCalls, "\n");
        const three = await engine.generate({
          ...request,
          minToolCalls: 3,
          shield: { mode: "token", sets: { unsafeTools: toolNames.slice(1) } },
        });
        assert.deepEqual(
          three.toolCalls.map((call) => call.name),
          ["check_distance", "check_distance", "check_distance"],
        );
        assertCallsParse(engine, three);
        assert.equal(three.finishReason, "tool_calls");
      });

      it("refuses when nothing is allowed, and honours tool_choice", async () => {
        const refused = await engine.generate({
          messages,
          tools,
          toolChoice: "required",
          shield: { mode: "token", sets: { unsafeTools: toolNames } },
        });
        assert.equal(refused.finishReason, "refused");
        assert.ok(refused.refusal);
        const stuck = await engine.generate({
          messages,
          tools,
          shield: { mode: "token", sets: { unsafeTools: toolNames, doneAllowed: false } },
        });
        assert.equal(stuck.finishReason, "refused");
        const named = await engine.generate({
          messages,
          tools,
          seed: 3,
          maxStringTokens: 2,
          toolChoice: { type: "function", function: { name: "zq_vkw_plxr" } },
        });
        assert.equal(named.toolCalls[0]?.name, "zq_vkw_plxr");
        const none = await engine.generate({ messages, tools, toolChoice: "none", seed: 3, maxTokens: 20 });
        assert.equal(none.toolCalls.length, 0);
        assert.equal(none.finishReason, "length");
        // The turn may not end while done is unsafe: a call is forced.
        const duty = await engine.generate({
          messages,
          tools,
          seed: 4,
          maxStringTokens: 2,
          shield: { mode: "token", sets: { doneAllowed: false, allowedTools: ["cancel"] } },
        });
        assert.equal(duty.toolCalls[0]?.name, "cancel");
      });

      it("reports a call that cannot be completed within max tokens", async () => {
        await assert.rejects(
          engine.generate({
            messages,
            tools,
            toolChoice: "required",
            seed: 1,
            maxTokens: 2,
            maxStringTokens: 50,
          }),
          (error: unknown) => error instanceof MentorError && error.code === "MNT_ERR_ENGINE_CALL_INCOMPLETE",
        );
      });

      it("refuses a conversation that does not fit the context with its own code, naming the sizes", async () => {
        await assert.rejects(
          engine.generate({ messages, tools, seed: 1, maxTokens: 1024 }),
          (error: unknown) =>
            error instanceof MentorError &&
            error.code === "MNT_ERR_CONTEXT_LENGTH" &&
            /the prompt \(\d+ tokens\) and max_tokens \(1024\) do not fit the context \(2048\)/.test(
              error.message,
            ),
        );
      });
    });
  }
});
