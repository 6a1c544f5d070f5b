import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { TurnRecord } from "../../src/agent/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";

// The README's main command, in process: the default model (the real Gemma 3 270M, fetched on
// first use) with the bundled travel policy and the token shield, through the openai client.
const route = { origin: { type: "string" }, destination: { type: "string" } };
const tool = (name: string, properties: Record<string, unknown>): OpenAI.ChatCompletionTool => ({
  type: "function",
  function: { name, parameters: { type: "object", properties, required: Object.keys(properties) } },
});
const tools = [
  tool("check_distance", route),
  tool("check_seats", route),
  tool("book_train", route),
  tool("book_flight", { ...route, travel_class: { type: "string", enum: ["economy", "business"] } }),
];
const messages = [
  {
    role: "user",
    content: "Book me a train from Toronto to Chicago.",
    mentor: {
      task: [
        { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } },
      ],
    },
  },
] as unknown as OpenAI.ChatCompletionMessageParam[];

describe("mentor serve with Gemma 3 270M and the travel policy", { timeout: 15 * 60 * 1000 }, () => {
  let server: RunningServer;
  let openai: OpenAI;
  before(async () => {
    server = await startServer({ port: 0, logger: false });
    openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
  });

  it("serves gemma-3-270m and returns a call the policy allows first: a check, never a booking", async () => {
    const models = await openai.models.list();
    assert.equal(models.data[0]?.id, "gemma-3-270m");
    const completion = (await openai.chat.completions.create({
      model: "gemma-3-270m",
      messages,
      tools,
      tool_choice: "required",
      seed: 1,
      max_tokens: 120,
    })) as OpenAI.ChatCompletion & { mentor: TurnRecord };
    const call = completion.choices[0]?.message.tool_calls?.[0];
    assert.ok(call?.type === "function", JSON.stringify(completion));
    assert.ok(["check_distance", "check_seats"].includes(call.function.name), JSON.stringify(call));
    assert.equal(typeof JSON.parse(call.function.arguments), "object");
    assert.equal(completion.mentor.mode, "token");
    assert.deepEqual(
      completion.mentor.openDuties.map((duty) => duty.rule),
      ["P4"],
    );
  });

  it("streams the call in fragments", async () => {
    const stream = await openai.chat.completions.create({
      model: "gemma-3-270m:token",
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
    assert.ok(["check_distance", "check_seats"].includes(name), name);
    assert.equal(typeof JSON.parse(args), "object");
  });
});
