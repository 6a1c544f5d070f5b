import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import { type ChatTool, Engine, type GenerationResult } from "../../src/llm/index.js";
import { tinyModelFamilies } from "../../src/models/family-tokenizer.js";
import { makeTinyModel, seededRandom } from "../../src/models/tiny-model.js";

// Tests in this file need a model: they write tiny ones (random weights, real tokenizers).
// Generations per family and mode: MENTOR_SHIELD_GENERATIONS (default 100; the long run uses 1000).
const generations = Number(process.env.MENTOR_SHIELD_GENERATIONS ?? 100);

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

const tools: ChatTool[] = toolNames.map((name) => ({
  type: "function",
  function: {
    name,
    description: `The ${name} tool.`,
    parameters: {
      type: "object",
      properties: {
        origin: { type: "string" },
        city: { enum: ["Toronto", "Chicago", "Ottawa"] },
        seats: { type: "integer" },
        urgent: { type: "boolean" },
      },
    },
  },
}));

const messages = [{ role: "user" as const, content: "Book me a trip from Toronto to Chicago." }];

function subset<T>(items: readonly T[], random: () => number, probability: number): T[] {
  return items.filter(() => random() < probability);
}

/** The arguments text of a raw call, between the name's terminator and the suffix. */
function rawArguments(engine: Engine, result: GenerationResult): string {
  const raw = result.rawCall as string;
  const call = result.toolCalls[0] as { name: string };
  const start =
    raw.indexOf(call.name + engine.syntax.paramsPrefix) +
    call.name.length +
    engine.syntax.paramsPrefix.length;
  assert.ok(raw.endsWith(engine.syntax.suffix), raw);
  return raw.slice(start, raw.length - engine.syntax.suffix.length);
}

for (const family of tinyModelFamilies) {
  describe(`engine on a tiny ${family} model`, () => {
    let engine: Engine;
    before(async () => {
      const path = join(directory, `${family}.gguf`);
      await makeTinyModel({ family, outputPath: path, seed: 7 });
      engine = await Engine.load({ modelPath: path, contextSize: 2048 });
    });
    after(async () => {
      await engine?.dispose();
    });

    it(`never emits an unsafe name or value in token mode; none mode does (${generations} seeds)`, async () => {
      const random = seededRandom(17);
      let unsafeNamesToken = 0;
      let unsafeValuesToken = 0;
      let unsafeNamesNone = 0;
      let vetoed = 0;
      for (let run = 0; run < generations; run++) {
        let unsafe = subset(toolNames, random, 0.5);
        if (unsafe.length === toolNames.length) unsafe = unsafe.slice(1);
        const safe = toolNames.filter((name) => !unsafe.includes(name));
        const progressing = subset(safe, random, 0.3);
        const unsafeCities = subset(["Toronto", "Chicago"], random, 0.5);
        const sets = {
          unsafeTools: unsafe,
          progressingTools: progressing,
          arguments: safe.map((tool) => ({ tool, argument: "city", unsafe: unsafeCities })),
        };
        const seed = 1000 + run;
        const common = {
          messages,
          tools,
          toolChoice: "required" as const,
          seed,
          maxStringTokens: 4,
          maxTokens: 64,
        };
        const shielded = await engine.generate({ ...common, shield: { mode: "token", sets } });
        const call = shielded.toolCalls[0];
        assert.ok(call, JSON.stringify(shielded));
        if (unsafe.includes(call.name)) unsafeNamesToken++;
        if (unsafeCities.includes(call.arguments.city as string)) unsafeValuesToken++;
        assert.deepEqual(JSON.parse(rawArguments(engine, shielded)), call.arguments);
        vetoed += shielded.stats.vetoed;
        const plain = await engine.generate({ ...common, shield: { mode: "none" } });
        const plainCall = plain.toolCalls[0];
        assert.ok(plainCall);
        assert.deepEqual(JSON.parse(rawArguments(engine, plain)), plainCall.arguments);
        if (unsafe.includes(plainCall.name)) unsafeNamesNone++;
      }
      console.log(
        `# ${family}: ${generations} generations: unsafe names token ${unsafeNamesToken}, none ${unsafeNamesNone}; unsafe values token ${unsafeValuesToken}; vetoes ${vetoed}`,
      );
      assert.equal(unsafeNamesToken, 0);
      assert.equal(unsafeValuesToken, 0);
      assert.ok(unsafeNamesNone > 0, "none mode emits unsafe names on the same seeds");
    });

    it("raises the share of progressing names with eta", async () => {
      const count = Math.max(40, Math.floor(generations / 2));
      const shares: number[] = [];
      for (const eta of [0, 1, 4]) {
        let progressingCalls = 0;
        for (let run = 0; run < count; run++) {
          const result = await engine.generate({
            messages,
            tools,
            toolChoice: "required",
            seed: 5000 + run,
            maxStringTokens: 2,
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
  });
}
