import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { LlamaCompletion } from "node-llama-cpp";
import { Engine } from "../../src/llm/index.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import type { ChatTool, ParameterSchema } from "../../src/openai/index.js";
import { upstreamShield } from "../../src/shield/upstream/index.js";
import { Gbnf } from "../support/gbnf.js";

// Needs a model: writes a tiny one. The grammar mentor sends upstream (--upstream-grammar gbnf),
// given to llama.cpp itself (node-llama-cpp's bundled build, the grammar code llama.cpp's server
// and llama-cpp-python use): its parser accepts it, and what its sampler generates under it is
// in the language as test/support/gbnf.ts reads it, and never spells a masked name or value.

const directory = mkdtempSync(join(tmpdir(), "mentor-upstream-grammar-"));
let engine: Engine;
before(async () => {
  const modelPath = join(directory, "qwen.gguf");
  await makeTinyModel({ family: "qwen3", outputPath: modelPath, seed: 5 });
  engine = await Engine.load({ modelPath, contextSize: 1024, sequences: 1, threads: 1, gpu: "cpu" });
});
after(async () => {
  await engine?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

const tool = (name: string, properties: Record<string, ParameterSchema>): ChatTool => ({
  type: "function",
  function: { name, parameters: { type: "object", properties, required: Object.keys(properties) } },
});
// The origin an enum, so that random samples get past it to the shielded slots.
const route = { origin: { type: "string", enum: ["Toronto", "Ottawa"] }, destination: { type: "string" } };

describe("the upstream grammar in llama.cpp", () => {
  it("parses, and what llama.cpp samples under it is in the language without the masked names or values", async () => {
    const shield = upstreamShield({
      sets: {
        unsafeTools: ["book_train"],
        arguments: [
          { tool: "book_flight", argument: "travel_class", unsafe: ["business"] },
          { tool: "check_distance", argument: "destination", unsafe: ["Chicago", "C"] },
        ],
        doneAllowed: false,
      },
      tools: [
        tool("check_distance", route),
        tool("book_train", route),
        tool("book_flight", { ...route, travel_class: { type: "string", enum: ["economy", "business"] } }),
      ],
      toolChoice: "auto",
      grammar: "gbnf",
    });
    if (shield.refusal !== undefined) return assert.fail(shield.refusal);
    // A call is required here, so the answer starts with one (no leading text).
    const source = shield.grammar as string;
    assert.match(source, /^root ::= calls$/m);
    const grammar = await engine.model.llama.createGrammar({ grammar: source });
    const mine = new Gbnf(source);
    const context = await engine.model.createContext({ sequences: 1, threads: 1, contextSize: 1024 });
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    let calls = 0;
    try {
      for (let seed = 0; seed < 12; seed++) {
        const text = await completion.generateCompletion("Call a tool.\n", {
          grammar,
          maxTokens: 80,
          temperature: 1,
          seed,
        });
        assert.ok(mine.viablePrefix(text), `seed ${seed}: llama.cpp wrote ${JSON.stringify(text)}`);
        assert.doesNotMatch(
          text,
          /"name": "book_train|"travel_class"\s*:\s*"business"|"destination"\s*:\s*"(Chicago|C)"/,
        );
        if (/"arguments": \{\s*"origin"\s*:\s*"[^"]*",\s*"destination"\s*:\s*"/.test(text)) calls++;
      }
    } finally {
      completion.dispose();
      await context.dispose();
    }
    // The check above is only as good as the slots the samples reached.
    assert.ok(calls >= 6, `${calls} of 12 samples reached a destination value`);
  });
});
