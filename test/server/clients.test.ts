import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { AIMessageChunk } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, jsonSchema, streamText, tool } from "ai";
import { Evaluator } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { Engine } from "../../src/llm/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { makeTravelModel, travelPolicyFile, travelTools } from "../support/tiny-travel.js";

// The clients people build agents with, against the real server on a tiny model with the travel
// policy and the token shield: the Vercel AI SDK (its OpenAI-compatible provider) and LangChain JS
// (ChatOpenAI.bindTools). Tool calls must arrive intact, streamed and not, despite the `mentor`
// field the server adds to each answer.
const directory = mkdtempSync(join(tmpdir(), "mentor-clients-"));
const evaluator = new Evaluator(loadPolicy(travelPolicyFile));
const request = "Book me a train from Toronto to Chicago.";
let engine: Engine;
let server: RunningServer;

before(async () => {
  engine = await Engine.load({
    modelPath: await makeTravelModel(join(directory, "tiny.gguf")),
    contextSize: 2048,
  });
  server = await startServer({ engine, modelId: "tiny", port: 0, logger: false, labeler: "rules" });
});
after(async () => {
  await server?.close();
  await engine?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

/** The evaluator's verdict on the call as the client received it (the server must have allowed it). */
function verdict(name: string, input: unknown): string {
  assert.equal(typeof input, "object");
  return evaluator.decide([{ role: "user", content: request }], {
    name,
    arguments: input as Record<string, Value>,
  }).verdict;
}

describe("agent frameworks as clients", () => {
  it("Vercel AI SDK: generateText and streamText get the same allowed tool call", async () => {
    const mentor = createOpenAICompatible({ name: "mentor", baseURL: `${server.url}/v1`, apiKey: "none" });
    const tools = Object.fromEntries(
      travelTools.map((entry) => [
        entry.function.name,
        tool({
          description: entry.function.name,
          inputSchema: jsonSchema(entry.function.parameters as object),
        }),
      ]),
    );
    const settings = {
      model: mentor.chatModel("tiny:token"),
      prompt: request,
      tools,
      toolChoice: "required" as const,
      seed: 3,
      maxOutputTokens: 48,
      maxRetries: 0,
    };
    const generated = await generateText(settings);
    assert.equal(generated.finishReason, "tool-calls");
    const [call] = generated.toolCalls;
    assert.ok(call, JSON.stringify(generated.content));
    assert.equal(verdict(call.toolName, call.input), "allow");

    const streamed = streamText(settings);
    const parts: { type: string; toolName?: string; input?: unknown }[] = [];
    for await (const part of streamed.fullStream) parts.push(part);
    assert.ok(
      !parts.some((part) => part.type === "error"),
      JSON.stringify(parts.filter((part) => part.type === "error")),
    );
    const streamedCall = parts.find((part) => part.type === "tool-call");
    assert.deepEqual([streamedCall?.toolName, streamedCall?.input], [call.toolName, call.input]);
    assert.equal(await streamed.finishReason, "tool-calls");
  });

  it("LangChain JS: ChatOpenAI.bindTools gets the same allowed tool call by invoke and by stream", async () => {
    const model = new ChatOpenAI({
      model: "tiny:token",
      apiKey: "none",
      configuration: { baseURL: `${server.url}/v1` },
      maxTokens: 48,
      maxRetries: 0,
      modelKwargs: { seed: 3 },
    }).bindTools(travelTools, { tool_choice: "required" });
    const answer = await model.invoke([{ role: "user", content: request }]);
    const [call] = answer.tool_calls ?? [];
    assert.ok(call, JSON.stringify(answer.content));
    assert.equal(verdict(call.name, call.args), "allow");
    assert.match(call.id ?? "", /^call_/);

    let merged: AIMessageChunk | undefined;
    for await (const chunk of await model.stream([{ role: "user", content: request }]))
      merged = merged ? merged.concat(chunk) : chunk;
    assert.ok(merged instanceof AIMessageChunk);
    const [streamedCall] = merged.tool_calls ?? [];
    assert.deepEqual([streamedCall?.name, streamedCall?.args], [call.name, call.args]);
  });
});
