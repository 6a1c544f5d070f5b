import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from "ai";
import type { FastifyInstance } from "fastify";
import { createMonitor, Evaluator } from "../../src/evaluator/index.js";
import { shieldAiModel, shieldAiTools, ToolGuard } from "../../src/middleware/index.js";
import type { ChatMessage } from "../../src/openai/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { buildServer } from "../../src/server/index.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { travelPolicyFile, travelTools } from "../support/tiny-travel.js";

// The AI SDK middleware with mentor's own server as the provider, over HTTP: the server (shield
// `none`, a scripted generator) only generates; the middleware shields the client's tools. The
// shield's feedback goes back to the server as tool results, which it reads as refusals.
const travel = loadPolicy(travelPolicyFile);
const route = { origin: "Toronto", destination: "Chicago" };
let app: FastifyInstance | undefined;
after(async () => {
  await app?.close();
});

describe("the AI SDK middleware with mentor's server as the provider", () => {
  it("a refused call's feedback travels to the server as its tool result; the server's run has only the made calls", async () => {
    const generator = new ScriptedGenerator([
      { calls: [{ name: "book_train", arguments: route }] },
      { calls: [{ name: "check_distance", arguments: route }] },
      { calls: [{ name: "book_train", arguments: route }] },
      "Booked.",
    ]);
    app = await buildServer({
      generator,
      modelId: "scripted",
      shield: "none",
      logger: false,
      labeler: "rules",
    });
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    const provider = createOpenAICompatible({ name: "mentor", baseURL: `${url}/v1`, apiKey: "none" });
    const ran: string[] = [];
    const tools = Object.fromEntries(
      travelTools.map((entry) => [
        entry.function.name,
        tool({
          inputSchema: jsonSchema(entry.function.parameters as object),
          execute: async () => {
            ran.push(entry.function.name);
            return entry.function.name === "check_distance"
              ? "The distance is 843 km."
              : { status: "confirmed" };
          },
        }),
      ]),
    );
    const guard = new ToolGuard(
      createMonitor(travel, {
        task: [{ name: "request_travel", arguments: { ...route, urgent: false } }],
      }),
    );
    const result = await generateText({
      model: wrapLanguageModel({ model: provider.chatModel("scripted"), middleware: shieldAiModel(guard) }),
      tools: shieldAiTools(tools, guard),
      stopWhen: stepCountIs(6),
      prompt: "Book me a train from Toronto to Chicago.",
      maxRetries: 0,
    });
    assert.equal(result.text, "Booked.");
    assert.deepEqual(ran, ["check_distance", "book_train"]);
    // What the server received last: the refusal, the check, the booking, as tool results.
    const messages = generator.requests.at(-1)?.messages as ChatMessage[];
    const results = messages
      .filter((message) => message.role === "tool")
      .map((message) => String(message.content));
    assert.match(results[0] as string, /^\[SHIELD\] Blocked book_train/);
    assert.equal(results[1], "The distance is 843 km.");
    // The server's own evaluator reads the refused call as a refusal, not as a booking made.
    const run = new Evaluator(travel).run(messages);
    assert.deepEqual(
      run.calls.map((call) => call.name),
      ["check_distance", "book_train"],
    );
  });
});
