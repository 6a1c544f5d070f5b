import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import type { TurnRecord } from "../../src/agent/index.js";
import { MentorError } from "../../src/errors/index.js";
import { Admission } from "../../src/server/admission.js";
import { buildServer, type ServerOptions } from "../../src/server/index.js";
import { PolicySet } from "../../src/server/policies.js";
import { policyText, withoutLogin } from "../support/card-desk.js";
import { ScriptedGenerator, type Step } from "../support/scripted-generator.js";
import { travelMessages, travelTool, travelTools } from "../support/tiny-travel.js";

// The server's routing, validation, errors and streaming through fastify's inject(), on a scripted
// turn generator: no model file, no socket. test/server/server.test.ts covers the same server on a
// real socket with the openai client and a tiny model.
const apps: FastifyInstance[] = [];
after(async () => {
  for (const app of apps) await app.close();
});

async function build(steps: Step[], options: ServerOptions = {}): Promise<FastifyInstance> {
  const app = await buildServer({
    generator: new ScriptedGenerator(steps),
    modelId: "scripted",
    shield: "prompt",
    logger: false,
    trustClientGrounding: true,
    ...options,
  });
  apps.push(app);
  return app;
}

const checkDistance = { name: "check_distance", arguments: { origin: "Toronto", destination: "Chicago" } };
const bookTrain = { name: "book_train", arguments: { origin: "Toronto", destination: "Chicago" } };
const valid = { model: "scripted", messages: travelMessages, tools: travelTools };

interface ErrorAnswer {
  error: { message: string; type: string; param: string | null; code: string };
}

/** The data of each server-sent event of a streamed answer. */
function events(payload: string): unknown[] {
  return payload
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice(6))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

describe("the server without a model (inject, scripted generator)", () => {
  it("answers /health, /v1/models and /metrics, and 404 with a mentor code elsewhere", async () => {
    const app = await build([]);
    assert.deepEqual((await app.inject("/health")).json(), { status: "ok", model: "scripted" });
    const models = (await app.inject("/v1/models")).json() as { data: { id: string }[] };
    assert.deepEqual(
      models.data.map((model) => model.id),
      ["scripted", "scripted:none", "scripted:prompt"],
    );
    const missing = await app.inject("/v1/models/gpt-4o");
    assert.equal(missing.statusCode, 404);
    assert.equal((missing.json() as ErrorAnswer).error.code, "MNT_ERR_MODEL_UNKNOWN");
    const nowhere = await app.inject("/v2/engines");
    assert.equal(nowhere.statusCode, 404);
    assert.deepEqual((nowhere.json() as ErrorAnswer).error, {
      message: "no route GET /v2/engines",
      type: "invalid_request_error",
      param: null,
      code: "MNT_ERR_NOT_FOUND",
    });
    const metrics = await app.inject("/metrics");
    assert.match(metrics.headers["content-type"] as string, /^text\/plain/);
    assert.match(metrics.body, /^mentor_requests_total\{route="\/v1\/models\/:id",status="404"\} 1$/m);
  });

  it("answers 503 until a backend is served", async () => {
    const app = await buildServer({ logger: false });
    apps.push(app);
    assert.equal((await app.inject("/health")).statusCode, 503);
    const chat = await app.inject({ method: "POST", url: "/v1/chat/completions", payload: valid });
    assert.equal(chat.statusCode, 503);
    assert.equal((chat.json() as ErrorAnswer).error.code, "MNT_ERR_NOT_READY");
  });

  it("prompt shield: a blocked call is regenerated and only the allowed one is returned", async () => {
    const generator = new ScriptedGenerator([{ calls: [bookTrain] }, { calls: [checkDistance] }]);
    const app = await build([], { generator });
    const response = await app.inject({ method: "POST", url: "/v1/chat/completions", payload: valid });
    assert.equal(response.statusCode, 200);
    const body = response.json() as {
      choices: {
        finish_reason: string;
        message: { tool_calls: { function: { name: string; arguments: string } }[] };
      }[];
      mentor: TurnRecord;
    };
    assert.equal(body.choices[0]?.finish_reason, "tool_calls");
    const call = body.choices[0]?.message.tool_calls[0]?.function;
    assert.deepEqual(
      [call?.name, JSON.parse(call?.arguments ?? "")],
      ["check_distance", checkDistance.arguments],
    );
    assert.equal(body.mentor.blocked, 1);
    assert.deepEqual(body.mentor.attempts[0]?.calls[0]?.rules, ["P1"]);
    // The second generation saw the shield's feedback on the blocked call.
    const feedback = generator.requests[1]?.messages.at(-1);
    assert.equal(feedback?.role, "tool");
    assert.match(String(feedback?.content), /^\[SHIELD\] Blocked book_train/);
  });

  it("streams by the wire rules: role, the call's opening chunk and argument fragments, finish, usage, [DONE]", async () => {
    const app = await build([{ calls: [checkDistance] }]);
    const response = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      payload: { ...valid, stream: true, stream_options: { include_usage: true } },
    });
    assert.equal(response.statusCode, 200);
    assert.match(response.headers["content-type"] as string, /^text\/event-stream/);
    const data = events(response.body) as {
      choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
    }[];
    assert.equal(data.at(-1), "[DONE]");
    assert.deepEqual(data[0]?.choices[0]?.delta, { role: "assistant", content: "" });
    const calls = data.flatMap(
      (event) => (event.choices?.[0]?.delta.tool_calls as Record<string, unknown>[]) ?? [],
    );
    assert.deepEqual(Object.keys(calls[0] ?? {}), ["index", "id", "type", "function"]);
    assert.ok(calls.slice(1).every((fragment) => Object.keys(fragment).join() === "index,function"));
    const text = calls.map((fragment) => (fragment.function as { arguments: string }).arguments).join("");
    assert.deepEqual(JSON.parse(text), checkDistance.arguments);
    assert.equal(
      data.find((event) => event.choices?.[0]?.finish_reason)?.choices[0]?.finish_reason,
      "tool_calls",
    );
    assert.deepEqual((data.at(-2) as unknown as { usage: unknown }).usage, {
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
    });
  });

  it("a streamed request the policy refuses gets the same 422 as a non-streamed one", async () => {
    const app = await build([{ calls: [checkDistance] }], {
      strictGrounding: true,
      trustClientGrounding: false,
      labeler: "rules",
    });
    const ungroundable = {
      ...valid,
      messages: [{ role: "user", content: "hello, can you help me travel?" }],
    };
    const unsafeOnly = {
      ...valid,
      tools: [travelTool("book_train")],
      tool_choice: { type: "function", function: { name: "book_train" } },
    };
    for (const [payload, code] of [
      [ungroundable, "MNT_ERR_UNGROUNDED"],
      [unsafeOnly, "MNT_ERR_NOTHING_ALLOWED"],
    ] as const)
      for (const stream of [false, true]) {
        const response = await app.inject({
          method: "POST",
          url: "/v1/chat/completions",
          payload: { ...payload, stream },
        });
        assert.equal(response.statusCode, 422, `${code}, stream ${stream}`);
        assert.equal(response.headers["x-should-retry"], "false");
        assert.equal((response.json() as ErrorAnswer).error.code, code);
      }
  });

  it("rejects malformed requests with a 4xx in OpenAI's shape naming the field and a mentor code", async () => {
    const app = await build([{ calls: [checkDistance] }], { bodyLimit: 64 * 1024 });
    const flight = travelTool("book_flight");
    const answered = (call: Record<string, unknown>, ...rest: unknown[]) => [
      ...travelMessages,
      { role: "assistant", content: null, tool_calls: [{ type: "function", ...call }] },
      ...rest,
    ];
    const cases: [string, unknown, number, string | null, string][] = [
      ["invalid JSON", "{not json", 400, "body", "MNT_ERR_BAD_INPUT"],
      [
        "a body over the size limit",
        { ...valid, padding: "x".repeat(65 * 1024) },
        413,
        "body",
        "MNT_ERR_BODY_TOO_LARGE",
      ],
      ["a body that is not an object", [1, 2], 400, null, "MNT_ERR_BAD_INPUT"],
      ["no messages", { model: "scripted" }, 400, "messages", "MNT_ERR_BAD_INPUT"],
      ["empty messages", { ...valid, messages: [] }, 400, "messages", "MNT_ERR_BAD_INPUT"],
      [
        "unknown role",
        { ...valid, messages: [{ role: "robot", content: "x" }] },
        400,
        "messages[0].role",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "content of the wrong type",
        { ...valid, messages: [{ role: "user", content: 5 }] },
        400,
        "messages[0].content",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "a user message without content",
        { ...valid, messages: [{ role: "user" }] },
        400,
        "messages[0].content",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "a content part that is not text",
        {
          ...valid,
          messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "image_url" }] }],
        },
        400,
        "messages[0].content[1].type",
        "MNT_ERR_BAD_INPUT",
      ],
      ["no model", { messages: travelMessages }, 400, "model", "MNT_ERR_BAD_INPUT"],
      ["unknown model", { ...valid, model: "gpt-9" }, 404, "model", "MNT_ERR_MODEL_UNKNOWN"],
      [
        "unknown policy",
        { ...valid, mentor: { policy: "nope" } },
        400,
        "mentor.policy",
        "MNT_ERR_POLICY_UNKNOWN",
      ],
      ["unknown shield", { ...valid, mentor: { shield: "max" } }, 400, "mentor.shield", "MNT_ERR_BAD_INPUT"],
      [
        "intent as a string",
        { ...valid, mentor: { intent: "off" } },
        400,
        "mentor.intent",
        "MNT_ERR_BAD_INPUT",
      ],
      ["a negative eta", { ...valid, mentor: { eta: -1 } }, 400, "mentor.eta", "MNT_ERR_BAD_INPUT"],
      ["temperature as a string", { ...valid, temperature: "hot" }, 400, "temperature", "MNT_ERR_BAD_INPUT"],
      ["temperature above 2", { ...valid, temperature: 3 }, 400, "temperature", "MNT_ERR_BAD_INPUT"],
      ["max_tokens 0", { ...valid, max_tokens: 0 }, 400, "max_tokens", "MNT_ERR_BAD_INPUT"],
      ["a fractional seed", { ...valid, seed: 1.5 }, 400, "seed", "MNT_ERR_BAD_INPUT"],
      ["n of 2", { ...valid, n: 2 }, 400, "n", "MNT_ERR_BAD_INPUT"],
      ["five stop strings", { ...valid, stop: ["a", "b", "c", "d", "e"] }, 400, "stop", "MNT_ERR_BAD_INPUT"],
      [
        "parallel_tool_calls as a string",
        { ...valid, parallel_tool_calls: "no" },
        400,
        "parallel_tool_calls",
        "MNT_ERR_BAD_INPUT",
      ],
      ["tools not an array", { ...valid, tools: {} }, 400, "tools", "MNT_ERR_BAD_INPUT"],
      [
        "tool of another type",
        { ...valid, tools: [{ type: "code" }] },
        400,
        "tools[0].type",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "a tool named with a space",
        { ...valid, tools: [{ type: "function", function: { name: "a b" } }] },
        400,
        "tools[0].function.name",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "a tool declared twice",
        { ...valid, tools: [...travelTools, travelTools[0]] },
        400,
        "tools[2].function.name",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "tool_choice naming an unknown tool",
        { ...valid, tool_choice: { type: "function", function: { name: "fly" } } },
        400,
        "tool_choice.function.name",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "tool_choice required without tools",
        { ...valid, tools: [], tool_choice: "required" },
        400,
        "tool_choice",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "stream_options without stream",
        { ...valid, stream_options: { include_usage: true } },
        400,
        "stream_options",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "a tool result for no call",
        { ...valid, messages: [...travelMessages, { role: "tool", tool_call_id: "call_x", content: "1" }] },
        400,
        "messages[1].tool_call_id",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "a call without its result",
        { ...valid, messages: answered({ id: "c1", function: { name: "book_train", arguments: "{}" } }) },
        400,
        "messages[1].tool_calls[0].id",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "arguments that are not JSON",
        {
          ...valid,
          messages: answered(
            { id: "c1", function: { name: "book_train", arguments: "{" } },
            { role: "tool", tool_call_id: "c1", content: "ok" },
          ),
        },
        400,
        "messages[1].tool_calls[0].function.arguments",
        "MNT_ERR_BAD_INPUT",
      ],
      [
        "a tool whose schema does not match the policy",
        {
          ...valid,
          tools: [
            {
              ...flight,
              function: {
                ...flight.function,
                parameters: {
                  type: "object",
                  properties: {
                    origin: { type: "string" },
                    destination: { type: "string" },
                    travel_class: { type: "integer" },
                  },
                },
              },
            },
          ],
        },
        400,
        "tools[0].function.parameters.properties.travel_class.type",
        "MNT_ERR_TOOLS_MISMATCH",
      ],
      [
        "a task call the policy does not declare",
        {
          ...valid,
          messages: [{ role: "user", content: "Hi", mentor: { task: [{ name: "fly", arguments: {} }] } }],
        },
        400,
        "messages[0].mentor.task[0].name",
        "MNT_ERR_MESSAGES",
      ],
      [
        "a task call with a field its declaration does not have",
        {
          ...valid,
          messages: [
            {
              role: "user",
              content: "Hi",
              mentor: { task: [{ name: "request_travel", arguments: { origin: "Toronto", to: "Chicago" } }] },
            },
          ],
        },
        400,
        "messages[0].mentor.task[0].arguments.to",
        "MNT_ERR_MESSAGES",
      ],
    ];
    for (const [name, body, status, param, code] of cases) {
      const response = await app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        headers: { "content-type": "application/json" },
        payload: typeof body === "string" ? body : JSON.stringify(body),
      });
      assert.equal(response.statusCode, status, name);
      const { error } = response.json() as ErrorAnswer;
      assert.deepEqual([error.param, error.code, error.type], [param, code, "invalid_request_error"], name);
      assert.ok(error.message.length > 0, name);
      assert.equal(response.headers["x-should-retry"], "false", name);
    }
    const media = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "content-type": "text/csv" },
      payload: "a,b",
    });
    assert.deepEqual(
      [media.statusCode, (media.json() as ErrorAnswer).error.code],
      [415, "MNT_ERR_MEDIA_TYPE"],
    );
  });

  it("refuses requests beyond the queue with 429 and Retry-After", async () => {
    const generator = new ScriptedGenerator(["Hello."], { hold: true });
    const app = await build([], { generator, policies: [], concurrency: 1, maxQueue: 1 });
    const post = () =>
      app.inject({ method: "POST", url: "/v1/chat/completions", payload: { ...valid, tools: [] } });
    const first = post();
    const second = post();
    while (generator.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const third = await post();
    assert.equal(third.statusCode, 429);
    assert.equal(third.headers["retry-after"], "1");
    assert.equal((third.json() as ErrorAnswer).error.code, "MNT_ERR_QUEUE_FULL");
    const metrics = (await app.inject("/metrics")).body;
    assert.match(metrics, /^mentor_queue_depth 1$/m);
    assert.match(metrics, /^mentor_requests_running 1$/m);
    generator.release();
    while (generator.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    generator.release();
    assert.deepEqual(
      (await Promise.all([first, second])).map((response) => response.statusCode),
      [200, 200],
    );
  });

  it("admission: a request that gives up while waiting leaves the queue and never runs", async () => {
    const admission = new Admission(1, 1);
    let finish = (): void => {};
    const running = admission.run(
      new AbortController().signal,
      () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
    );
    const impatient = new AbortController();
    let ran = false;
    const waiting = admission.run(impatient.signal, async () => {
      ran = true;
    });
    assert.equal(admission.waiting, 1);
    impatient.abort(new MentorError("MNT_ERR_TIMEOUT", "no answer within 1 ms"));
    await assert.rejects(
      waiting,
      (error: unknown) => error instanceof MentorError && error.code === "MNT_ERR_TIMEOUT",
    );
    assert.equal(admission.waiting, 0);
    finish();
    await running;
    assert.equal(ran, false);
  });

  it("requires an API key when keys are configured, except for /health and preflight", async () => {
    const app = await build([], { apiKeys: ["k1"] });
    const denied = await app.inject("/v1/models");
    assert.equal(denied.statusCode, 401);
    assert.equal((denied.json() as ErrorAnswer).error.type, "authentication_error");
    assert.equal(
      (await app.inject({ url: "/v1/models", headers: { authorization: "Bearer k1" } })).statusCode,
      200,
    );
    assert.equal((await app.inject("/health")).statusCode, 200);
  });
});

describe("server options", () => {
  const refused = async (options: ServerOptions, pattern: RegExp) => {
    await assert.rejects(buildServer({ logger: false, ...options }), (error: unknown) => {
      assert.ok(error instanceof MentorError, String(error));
      assert.match(error.message, pattern);
      return true;
    });
  };

  it("are validated once, each problem naming its option", async () => {
    await refused({ eta: Number("abc") }, /^server options: eta must be a number/);
    await refused({ sequences: 0 }, /sequences must be at least 1/);
    await refused({ port: 70_000 }, /port must be at most 65535/);
    await refused(
      { maxQueue: -1, requestTimeoutMs: 1.5 },
      /maxQueue must be at least 0; requestTimeoutMs must be a whole number/,
    );
    await refused({ shield: "max" as never }, /shield must be one of none, prompt, token/);
    await refused({ upstream: { url: "ftp://example" } }, /upstream\.url must be an http\(s\) URL/);
    await refused(
      { upstream: { url: "http://example", grammar: "ebnf" as never } },
      /upstream\.grammar must be gbnf/,
    );
    await refused({ etaa: 1 } as ServerOptions, /Unrecognized key: "etaa"/);
    await refused({ searchMs: 0 }, /searchMs must be at least 1/);
    await refused(
      { upstream: { url: "http://example" }, generator: new ScriptedGenerator([]), shield: "prompt" },
      /one of upstream, engine and generator/,
    );
  });

  it("searchMs is the search time of every policy's evaluator, a prompt's variant too", () => {
    const directory = mkdtempSync(join(tmpdir(), "mentor-search-ms-"));
    try {
      const file = join(directory, "card.yaml");
      writeFileSync(file, policyText);
      const policies = new PolicySet([file], { search: { maxMs: 30_000 } });
      assert.deepEqual(policies.select(undefined)?.evaluator.options.search, { maxMs: 30_000 });
      const variant = policies.select(undefined, withoutLogin);
      assert.notEqual(variant?.policy, policies.fallback?.policy);
      assert.deepEqual(variant?.evaluator.options.search, { maxMs: 30_000 });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("are frozen", async () => {
    const app = await build([]);
    assert.ok(Object.isFrozen(app.mentor.settings));
    assert.equal(app.mentor.settings.maxQueue, 16);
  });
});
