import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { TurnRecord } from "../../src/agent/index.js";
import { loadRegistry } from "../../src/models/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";

// The README's main command, in process: the default model (the real Qwen2.5-Coder-1.5B-Instruct,
// fetched on first use) with the bundled travel policy and the token shield, through the openai
// client, with the README's request: the labeler grounds it from its text.
const route = { origin: { type: "string" }, destination: { type: "string" } };
const tool = (name: string, properties: Record<string, unknown>): OpenAI.ChatCompletionTool => ({
  type: "function",
  function: { name, parameters: { type: "object", properties, required: Object.keys(properties) } },
});
const tools = [
  tool("check_distance", route),
  tool("check_seats", route),
  tool("book_flight", { ...route, travel_class: { type: "string", enum: ["economy", "business"] } }),
  tool("book_train", route),
];
const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: "user", content: "Book a flight from Toronto to Chicago for me, business class please." },
];
const model = loadRegistry().default;

describe("mentor serve with the default model and the travel policy", { timeout: 15 * 60 * 1000 }, () => {
  let server: RunningServer;
  let openai: OpenAI;
  before(async () => {
    server = await startServer({ port: 0, logger: false });
    openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
  });

  it("answers the README's request with the distance check of the traveller's route", async () => {
    const models = await openai.models.list();
    assert.equal(models.data[0]?.id, model);
    const completion = (await openai.chat.completions.create({
      model,
      messages,
      tools,
      tool_choice: "required",
      seed: 1,
      max_tokens: 120,
    })) as OpenAI.ChatCompletion & { mentor: TurnRecord };
    const call = completion.choices[0]?.message.tool_calls?.[0];
    assert.ok(call?.type === "function", JSON.stringify(completion));
    assert.equal(call.function.name, "check_distance", JSON.stringify(call));
    assert.deepEqual(JSON.parse(call.function.arguments), { origin: "Toronto", destination: "Chicago" });
    assert.equal(completion.mentor.mode, "token");
    assert.deepEqual(
      completion.mentor.grounding.map((note) => note.value),
      [
        [
          {
            name: "request_travel",
            arguments: {
              origin: "Toronto",
              destination: "Chicago",
              urgent: false,
              mode: "flight",
              travel_class: "business",
            },
          },
        ],
      ],
    );
  });

  it("without the shield and with tool_choice auto, reads the call the model writes: it books at once", async () => {
    const completion = await openai.chat.completions.create({
      model: `${model}:none`,
      messages,
      tools,
      tool_choice: "auto",
      seed: 1,
      max_tokens: 160,
    });
    const choice = completion.choices[0];
    assert.equal(choice?.finish_reason, "tool_calls", JSON.stringify(completion));
    assert.equal(
      choice?.message.tool_calls?.[0]?.type === "function" && choice.message.tool_calls[0].function.name,
      "book_flight",
    );
  });

  it("streams the call in fragments", async () => {
    const stream = await openai.chat.completions.create({
      model: `${model}:token`,
      messages,
      tools,
      tool_choice: "required",
      seed: 2,
      max_tokens: 120,
      stream: true,
    });
    let name = "";
    let args = "";
    for await (const chunk of stream)
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += delta.function?.name ?? "";
        args += delta.function?.arguments ?? "";
      }
    assert.equal(name, "check_distance");
    assert.deepEqual(JSON.parse(args), { origin: "Toronto", destination: "Chicago" });
  });
});
