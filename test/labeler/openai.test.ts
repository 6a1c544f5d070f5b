import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, test } from "node:test";
import { Labeler, OpenAILabelModel } from "../../src/labeler/index.js";
import { reply, type Script, ScriptedEndpoint } from "../support/scripted-endpoint.js";
import { travelWithSeatsLlm } from "../support/travel-llm.js";

// Protocol handling only: a real local HTTP server answers with scripted responses, so these tests
// check what the client sends and how it treats each kind of answer, not any model's labeling.
const travel = travelWithSeatsLlm();
const seats = travel.tools.get("check_seats");
assert.ok(seats);

function answer(content: string): Script {
  return reply(200, {
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  });
}

const endpoint = new ScriptedEndpoint();
const requests = endpoint.requests;
let url: string;
before(async () => {
  url = `${await endpoint.start()}/v1`;
});
after(() => endpoint.close());
beforeEach(() => endpoint.reset());

function labeler(options: { timeoutMs?: number; key?: string } = {}) {
  const model = new OpenAILabelModel({
    url,
    model: "judge-7b",
    ...(options.key ? { key: options.key } : {}),
  });
  return new Labeler(travel, { model, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
}

describe("OpenAI-endpoint labeler: protocol handling against a scripted local HTTP server", () => {
  test("sends the model, the prompt, a json_schema of the allowed labels and the key; reads the label", async () => {
    endpoint.script = [answer('{"label": "full"}')];
    const result = await labeler({ key: "secret" }).labelOutput(seats, {}, "Plenty of room.");
    assert.deepEqual(result, { value: "full", source: "llm" });
    const [request] = requests;
    assert.equal(request?.authorization, "Bearer secret");
    assert.equal(request?.body.model, "judge-7b");
    const format = request?.body.response_format as { type: string; json_schema: { schema: unknown } };
    assert.equal(format.type, "json_schema");
    assert.deepEqual(format.json_schema.schema, {
      type: "object",
      properties: { label: { type: "string", enum: ["available", "full", "none"] } },
      required: ["label"],
      additionalProperties: false,
    });
    const messages = request?.body.messages as { role: string; content: string }[];
    assert.match(messages[0]?.content ?? "", /- available: seats are available/);
    assert.match(messages[1]?.content ?? "", /Plenty of room\./);
  });

  test("without a key: no Authorization header, and the user's OPENAI_* variables are not read", async () => {
    const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = "sk-the-users-own-key";
    process.env.OPENAI_BASE_URL = "http://127.0.0.1:9/v1";
    try {
      endpoint.script = [answer('{"label": "full"}')];
      assert.deepEqual(await labeler().labelOutput(seats, {}, "Plenty of room."), {
        value: "full",
        source: "llm",
      });
      assert.equal(requests.length, 1);
      assert.equal(requests[0]?.authorization, undefined);
    } finally {
      for (const [name, value] of [
        ["OPENAI_API_KEY", saved.key],
        ["OPENAI_BASE_URL", saved.base],
      ] as const)
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
    }
  });

  test("retries once on an invalid answer and uses a valid second one", async () => {
    endpoint.script = [answer("probably full?"), answer('{"label": "none"}')];
    assert.deepEqual(await labeler().labelOutput(seats, {}, "Plenty of room."), {
      value: null,
      source: "llm",
    });
    assert.equal(requests.length, 2);
  });

  test("fails closed after two invalid answers", async () => {
    endpoint.script = [answer('{"label": "long"}'), answer("")];
    const result = await labeler().labelOutput(seats, {}, "Plenty of room.");
    assert.ok("error" in result);
    assert.match(result.error, /^MNT_ERR_LABELER_OUTPUT: .* answered invalidly twice/);
  });

  test("asks again without response_format when the endpoint rejects it", async () => {
    endpoint.script = [
      reply(400, { error: { message: "response_format json_schema is not supported" } }),
      answer("available"),
    ];
    const model = new OpenAILabelModel({ url, model: "small" });
    const grounder = new Labeler(travel, { model });
    assert.deepEqual(await grounder.labelOutput(seats, {}, "Room."), { value: "available", source: "llm" });
    assert.equal(requests[1]?.body.response_format, undefined);
    endpoint.script = [answer("full")];
    await grounder.labelOutput(seats, {}, "Other text.");
    assert.equal(requests[2]?.body.response_format, undefined, "remembers that the endpoint lacks it");
  });

  test("an HTTP error, a malformed body and an unreachable endpoint fail closed", async () => {
    endpoint.script = [reply(500, { error: { message: "overloaded" } })];
    let result = await labeler().labelOutput(seats, {}, "A.");
    assert.ok("error" in result);
    assert.match(result.error, /^MNT_ERR_LABELER_ENDPOINT: the endpoint answered HTTP 500/);
    endpoint.script = [reply(200, "<html>"), reply(200, { choices: [] })];
    result = await labeler().labelOutput(seats, {}, "B.");
    assert.ok("error" in result);
    assert.match(result.error, /^MNT_ERR_LABELER_OUTPUT: .* twice; the endpoint's answer has no choices/);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = new Labeler(travel, {
      model: new OpenAILabelModel({ url: `http://127.0.0.1:${port}/v1`, model: "x" }),
    });
    result = await unreachable.labelOutput(seats, {}, "C.");
    assert.ok("error" in result);
    assert.match(
      result.error,
      /^MNT_ERR_LABELER_ENDPOINT: cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/,
    );
  });

  test("an endpoint slower than timeoutMs fails closed with a timeout, and the output stays unlabeled", async () => {
    endpoint.script = [() => undefined];
    const messages = [
      { role: "user", content: "from Toronto to Chicago" },
      {
        role: "assistant",
        tool_calls: [{ id: "a", type: "function", function: { name: "check_seats", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "a", content: "Plenty of room." },
    ];
    const { messages: grounded, notes } = await labeler({ timeoutMs: 200 }).ground(messages);
    assert.equal((grounded[2] as { mentor?: unknown }).mentor, undefined);
    assert.match(notes[1]?.error ?? "", /^MNT_ERR_LABELER_TIMEOUT: no answer from .* within 200 ms/);
    assert.equal(notes[1]?.source, "llm");
  });

  test("task grounding: a json_schema of the task calls; answers are validated field by field", async () => {
    const good = {
      name: "request_travel",
      arguments: {
        origin: "Toronto",
        destination: "Chicago",
        urgent: false,
        mode: "any",
        travel_class: "any",
      },
    };
    endpoint.script = [answer(JSON.stringify({ calls: [good] }))];
    assert.deepEqual(await labeler().groundTask("toronto over to chicago", true), {
      value: [good],
      source: "llm",
    });
    const format = requests[0]?.body.response_format as { json_schema: { schema: unknown } } | undefined;
    const schema = format?.json_schema.schema as { properties: { calls: { items: { anyOf: unknown[] } } } };
    assert.deepEqual(schema.properties.calls.items.anyOf[0], {
      type: "object",
      properties: {
        name: { type: "string", enum: ["request_travel"] },
        arguments: {
          type: "object",
          properties: {
            origin: { type: "string" },
            destination: { type: "string" },
            urgent: { type: "boolean", description: "The traveller stated an urgent business need" },
            mode: {
              type: "string",
              enum: ["flight", "train", "any"],
              description: "The mode of transport the traveller asked for",
            },
            travel_class: {
              type: "string",
              enum: ["business", "economy", "any"],
              description: "The cabin class the traveller asked for",
            },
          },
          required: ["origin", "destination", "urgent", "mode", "travel_class"],
          additionalProperties: false,
        },
      },
      required: ["name", "arguments"],
      additionalProperties: false,
    });
    const wrongType = { ...good, arguments: { ...good.arguments, urgent: "no" } };
    endpoint.script = [
      answer(JSON.stringify({ calls: [wrongType] })),
      answer(JSON.stringify({ calls: [wrongType] })),
    ];
    const result = await labeler().groundTask("montreal over to boston", true);
    assert.ok("error" in result);
    assert.match(result.error, /field urgent is not of type "boolean"/);
  });
});
