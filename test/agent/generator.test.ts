import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { UpstreamGenerator } from "../../src/agent/index.js";
import { MentorError } from "../../src/errors/index.js";
import type { ChatTool } from "../../src/openai/index.js";
import { reply, type Script, ScriptedEndpoint } from "../support/scripted-endpoint.js";

// No model: a real local HTTP server answers with scripted responses; these tests check what the
// upstream generator sends and how it reads each kind of answer.
const endpoint = new ScriptedEndpoint();
const requests = endpoint.requests;
let url = "";
before(async () => {
  url = await endpoint.start();
});
after(() => endpoint.close());
beforeEach(() => endpoint.reset());

function completion(message: Record<string, unknown>, finish = "stop"): Script {
  return reply(200, {
    id: "c",
    object: "chat.completion",
    created: 0,
    model: "scripted",
    choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", ...message } }],
    usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
  });
}

const tools: ChatTool[] = [
  {
    type: "function",
    function: {
      name: "check_distance",
      parameters: { type: "object", properties: { origin: { type: "string" } } },
    },
  },
];
const messages = [{ role: "user" as const, content: "Hi", mentor: { task: [] } }];

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof MentorError, String(error));
    return `${error.code}: ${error.message}`;
  }
  assert.fail("expected an error");
}

describe("UpstreamGenerator (openai SDK) against a scripted endpoint", () => {
  it("sends an OpenAI request without mentor's fields, with the key; reads calls and usage", async () => {
    endpoint.script = [
      completion(
        {
          content: null,
          tool_calls: [
            {
              id: "a",
              type: "function",
              function: { name: "check_distance", arguments: '{"origin":"Oslo"}' },
            },
            { id: "b", type: "function", function: { name: "check_distance", arguments: "[1]" } },
            { id: "c", type: "function", function: { name: "check_distance", arguments: "{" } },
          ],
        },
        "tool_calls",
      ),
    ];
    const generator = new UpstreamGenerator({ url, model: "scripted", apiKey: "secret" });
    const result = await generator.generate({
      messages,
      tools,
      toolChoice: "auto",
      temperature: 0,
      maxTokens: 50,
      stop: ["END"],
    });
    const [request] = requests;
    assert.equal(request?.path, "/v1/chat/completions");
    assert.equal(request?.authorization, "Bearer secret");
    assert.deepEqual(request?.body.messages, [{ role: "user", content: "Hi" }]);
    assert.deepEqual(
      [request?.body.model, request?.body.tool_choice, request?.body.max_tokens, request?.body.stop],
      ["scripted", "auto", 50, ["END"]],
    );
    assert.deepEqual(request?.body.tools, tools);
    assert.equal("top_p" in (request?.body ?? {}), false, "unset options are left out");
    assert.deepEqual(result.toolCalls, [
      { name: "check_distance", arguments: { origin: "Oslo" } },
      { name: "check_distance", arguments: {}, invalid: "the arguments are not a JSON object" },
      { name: "check_distance", arguments: {}, invalid: "the arguments are not valid JSON" },
    ]);
    assert.equal(result.finishReason, "tool_calls");
    assert.deepEqual(result.usage, { promptTokens: 7, completionTokens: 3 });
  });

  it("without a key sends no Authorization header; no tools means no tool fields", async () => {
    endpoint.script = [completion({ content: "Hello." }, "length")];
    const result = await new UpstreamGenerator({ url: `${url}/v1/`, model: "m" }).generate({
      messages,
      tools: [],
      toolChoice: "auto",
    });
    assert.equal(requests[0]?.authorization, undefined);
    assert.equal("tools" in (requests[0]?.body ?? {}), false);
    assert.deepEqual([result.content, result.finishReason], ["Hello.", "length"]);
  });

  it("an HTTP error, a body that is not JSON, a completion without a message and no endpoint: MNT_ERR_UPSTREAM", async () => {
    const generator = new UpstreamGenerator({ url, model: "m" });
    const generate = () => generator.generate({ messages, tools: [], toolChoice: "auto" });
    endpoint.script = [reply(503, { error: { message: "overloaded" } })];
    assert.match(
      await code(generate()),
      /^MNT_ERR_UPSTREAM: http:\/\/.*\/v1\/chat\/completions answered 503: .*overloaded/,
    );
    assert.equal(requests.length, 1, "no retries by default: the client retries mentor's 502");
    endpoint.script = [reply(200, "<html>", "text/html")];
    assert.match(await code(generate()), /^MNT_ERR_UPSTREAM: .* answered something that is not JSON/);
    endpoint.script = [reply(200, "{", "application/json")];
    assert.match(await code(generate()), /^MNT_ERR_UPSTREAM: .* answered something that is not JSON/);
    endpoint.script = [reply(200, { choices: [] })];
    assert.match(await code(generate()), /^MNT_ERR_UPSTREAM: .* without choices\[0\]\.message/);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = new UpstreamGenerator({ url: `http://127.0.0.1:${port}`, model: "m" });
    assert.match(
      await code(unreachable.generate({ messages, tools: [], toolChoice: "auto" })),
      /^MNT_ERR_UPSTREAM: http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: .*ECONNREFUSED/,
    );
  });

  it("a cancelled request is MNT_ERR_CANCELLED; a slow upstream times out after timeoutMs", async () => {
    endpoint.script = [() => undefined, () => undefined];
    const controller = new AbortController();
    const pending = new UpstreamGenerator({ url, model: "m" }).generate({
      messages,
      tools: [],
      toolChoice: "auto",
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    assert.match(await code(pending), /^MNT_ERR_CANCELLED/);
    const slow = new UpstreamGenerator({ url, model: "m", timeoutMs: 100 });
    assert.match(
      await code(slow.generate({ messages, tools: [], toolChoice: "auto" })),
      /^MNT_ERR_UPSTREAM: .* no answer within 100 ms/,
    );
  });
});
