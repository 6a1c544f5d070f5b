import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Engine } from "../../src/llm/index.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import { policyGrammar, policyJsonSchema } from "../../src/policy/index.js";
import { type RequestError, readChatRequest } from "../../src/server/request.js";
import { Gbnf } from "../support/gbnf.js";

// `response_format: json_schema` on the local engine (issue 32, item 7): an answer without tools
// is decoded under the schema's grammar, so `mentor formalize`'s translator, on mentor's own
// server, can only write JSON of the policy's shape.
const directory = mkdtempSync(join(tmpdir(), "mentor-response-format-"));
after(() => rmSync(directory, { recursive: true, force: true }));

const messages = [{ role: "user" as const, content: "Answer." }];

describe("response_format on a tiny model", () => {
  let engine: Engine;
  before(async () => {
    const path = join(directory, "qwen3.gguf");
    await makeTinyModel({
      family: "qwen3",
      outputPath: path,
      seed: 3,
      layers: 1,
      embeddingLength: 16,
      matrixType: "f32",
    });
    engine = await Engine.load({ modelPath: path, contextSize: 2048 });
  });
  after(async () => {
    await engine?.dispose();
  });

  it("every answer is JSON the schema admits (random weights, 6 seeds)", async () => {
    const schema = {
      type: "object",
      properties: { answer: { enum: ["yes", "no"] }, sure: { type: "boolean" } },
      required: ["answer"],
      additionalProperties: false,
    };
    for (let seed = 0; seed < 6; seed++) {
      const result = await engine.generate({
        messages,
        responseSchema: schema,
        maxTokens: 400,
        temperature: 1,
        seed,
      });
      assert.equal(result.finishReason, "stop", String(result.content));
      const value = JSON.parse(result.content ?? "") as Record<string, unknown>;
      assert.ok(["yes", "no"].includes(value.answer as string), result.content ?? "");
      assert.deepEqual(
        Object.keys(value).filter((key) => key !== "answer" && key !== "sure"),
        [],
      );
    }
  });

  it("a request aborted mid-answer is cancelled, and the engine answers the next one", async () => {
    // A long answer (strings of any length) aborted while it is being decoded: the decoding must
    // stop cleanly before the completion is disposed (it crashed the process with DisposedError).
    const schema = { type: "array", items: { type: "string" } };
    for (let seed = 0; seed < 3; seed++) {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 30 + 20 * seed);
      await assert.rejects(
        engine.generate({
          messages,
          responseSchema: schema,
          maxTokens: 900,
          temperature: 1,
          seed,
          signal: controller.signal,
        }),
        (error: unknown) => (error as { code?: string }).code === "MNT_ERR_CANCELLED",
      );
    }
    const after = await engine.generate({
      messages,
      responseSchema: { enum: ["yes", "no"] },
      maxTokens: 40,
      seed: 1,
    });
    assert.ok(["yes", "no"].includes(JSON.parse(after.content ?? "") as string), after.content ?? "");
  });

  it("a translator's answer under the policy grammar starts a policy (llama.cpp reads the grammar as the tests do)", async () => {
    const grammar = new Gbnf(policyGrammar());
    for (let seed = 0; seed < 3; seed++) {
      const result = await engine.generate({
        messages,
        responseSchema: policyJsonSchema(),
        maxTokens: 48,
        temperature: 1,
        seed,
      });
      assert.match(result.content ?? "", /^\s*\{/);
      assert.ok(grammar.viablePrefix(result.content ?? ""), result.content ?? "");
    }
  });
});

describe("response_format in a request", () => {
  const body = { model: "m", messages };
  it("reads json_schema and json_object, and names a bad one", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    assert.deepEqual(
      readChatRequest({
        ...body,
        response_format: { type: "json_schema", json_schema: { name: "x", schema } },
      }).responseSchema,
      schema,
    );
    assert.deepEqual(readChatRequest({ ...body, response_format: { type: "json_object" } }).responseSchema, {
      type: "object",
    });
    assert.equal(readChatRequest({ ...body, response_format: { type: "text" } }).responseSchema, undefined);
    assert.throws(
      () => readChatRequest({ ...body, response_format: { type: "json_schema" } }),
      (error: RequestError) => error.param?.startsWith("response_format") === true,
    );
  });
});
