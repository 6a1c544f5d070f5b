import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { TurnRecord } from "../../src/agent/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { Engine } from "../../src/llm/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server/index.js";
import { makeTravelModel, travelMessages, travelPolicyFile, travelTools } from "../support/tiny-travel.js";

// End to end through a listening server and the real `openai` client, on a tiny model.
const directory = mkdtempSync(join(tmpdir(), "mentor-server-"));
const evaluator = new Evaluator(loadPolicy(travelPolicyFile));
let engine: Engine;
const servers: RunningServer[] = [];

before(async () => {
  const path = await makeTravelModel(join(directory, "tiny.gguf"));
  engine = await Engine.load({ modelPath: path, contextSize: 2048, sequences: 2 });
});
after(async () => {
  for (const server of servers) await server.close();
  await engine?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

async function serve(options: ServerOptions = {}): Promise<RunningServer> {
  const server = await startServer({
    engine,
    modelId: "tiny",
    port: 0,
    logger: false,
    trustClientGrounding: true,
    ...options,
  });
  servers.push(server);
  return server;
}

function client(server: RunningServer, apiKey = "none"): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
}

/** Body fields the SDK's types do not know (the `mentor` field) pass through as they are. */
type Body = OpenAI.ChatCompletionCreateParamsNonStreaming & { mentor?: Record<string, unknown> };
type Completion = OpenAI.ChatCompletion & { mentor: TurnRecord };

async function complete(openai: OpenAI, body: Partial<Body>): Promise<Completion> {
  return (await openai.chat.completions.create({
    model: "tiny",
    messages: travelMessages as OpenAI.ChatCompletionMessageParam[],
    tools: travelTools as OpenAI.ChatCompletionTool[],
    max_tokens: 48,
    ...body,
  } as Body)) as Completion;
}

function post(server: RunningServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

function verdict(call: OpenAI.ChatCompletionMessageToolCall | undefined): string {
  assert.ok(call?.type === "function", JSON.stringify(call));
  return evaluator.decide(travelMessages, {
    name: call.function.name,
    arguments: JSON.parse(call.function.arguments),
  }).verdict;
}

describe("the OpenAI-compatible server on a tiny model", () => {
  let server: RunningServer;
  let openai: OpenAI;
  const recorder = join(directory, "flights");
  before(async () => {
    server = await serve({ recorderDirectory: recorder });
    openai = client(server);
  });

  it("answers /health and lists the model with each shield mode", async () => {
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), {
      status: "ok",
      model: "tiny",
      gpu: engine.gpu === false ? "cpu" : engine.gpu,
      recorder: { failing: false, failures: 0 },
    });
    const models = await openai.models.list();
    assert.deepEqual(
      models.data.map((model) => model.id),
      ["tiny", "tiny:none", "tiny:prompt", "tiny:token"],
    );
    const one = await openai.models.retrieve("tiny:token");
    assert.equal(one.id, "tiny:token");
    await assert.rejects(openai.models.retrieve("gpt-4o"), (error: { status?: number; message?: string }) => {
      assert.equal(error.status, 404);
      assert.match(String(error.message), /serves tiny .*"gpt-4o"/);
      return true;
    });
  });

  it("returns a tool call in OpenAI's shape (arguments a JSON string)", async () => {
    const completion = await complete(openai, { tool_choice: "required", seed: 1, model: "tiny:token" });
    const choice = completion.choices[0];
    assert.equal(choice?.finish_reason, "tool_calls");
    const call = choice?.message.tool_calls?.[0];
    assert.ok(call?.type === "function" && call.id.startsWith("call_"));
    assert.equal(typeof call.function.arguments, "string");
    assert.deepEqual(Object.keys(JSON.parse(call.function.arguments)), ["origin", "destination"]);
    assert.equal(verdict(call), "allow");
    assert.equal(completion.mentor.mode, "token");
    assert.equal(completion.mentor.policy, "travel");
    assert.ok(completion.usage && completion.usage.total_tokens > 0);
  });

  it("streams a tool call by the wire rules: id and name once, argument fragments, finish, usage, [DONE]", async () => {
    const stream = await openai.chat.completions.create({
      model: "tiny:token",
      messages: travelMessages as OpenAI.ChatCompletionMessageParam[],
      tools: travelTools as OpenAI.ChatCompletionTool[],
      tool_choice: "required",
      seed: 2,
      max_tokens: 48,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const deltas = chunks.flatMap((chunk) =>
      chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []),
    );
    const opening = deltas.filter((delta) => delta.id !== undefined);
    assert.equal(opening.length, 1, "one opening chunk per call");
    assert.equal(opening[0]?.function?.arguments, "");
    assert.equal(
      deltas.filter((delta) => delta.function?.name !== undefined).length,
      1,
      "the name is sent once",
    );
    const fragments = deltas.slice(1).map((delta) => delta.function?.arguments ?? "");
    assert.ok(fragments.length > 1, "arguments come in several fragments");
    assert.ok(
      deltas
        .slice(1)
        .every((delta) => delta.index === 0 && delta.id === undefined && delta.type === undefined),
    );
    const args = JSON.parse(fragments.join(""));
    assert.deepEqual(Object.keys(args), ["origin", "destination"]);
    const finishing = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    assert.equal(finishing.length, 1);
    assert.equal(finishing[0]?.choices[0]?.finish_reason, "tool_calls");
    const last = chunks.at(-1);
    assert.deepEqual(last?.choices, []);
    assert.ok((last?.usage?.completion_tokens ?? 0) > 0);
    // The raw stream ends with [DONE].
    const raw = await post(server, {
      model: "tiny:none",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 4,
      stream: true,
    });
    assert.equal(raw.headers.get("content-type"), "text/event-stream; charset=utf-8");
    assert.ok((await raw.text()).endsWith("data: [DONE]\n\n"));
  });

  it("honours tool_choice none, auto, required and a named tool", async () => {
    const none = await complete(openai, { tool_choice: "none", seed: 3, model: "tiny:none", max_tokens: 8 });
    assert.equal(none.choices[0]?.message.tool_calls, undefined);
    assert.equal(none.choices[0]?.finish_reason, "length");
    const required = await complete(openai, { tool_choice: "required", seed: 3, model: "tiny:none" });
    assert.equal(required.choices[0]?.finish_reason, "tool_calls");
    const single = await complete(openai, {
      tool_choice: "required",
      parallel_tool_calls: false,
      seed: 3,
      model: "tiny:none",
    });
    assert.equal(single.choices[0]?.message.tool_calls?.length, 1);
    const named = await complete(openai, {
      tool_choice: { type: "function", function: { name: "check_distance" } },
      seed: 3,
      model: "tiny:prompt",
    });
    const call = named.choices[0]?.message.tool_calls?.[0];
    assert.equal(call?.type === "function" && call.function.name, "check_distance");
    const auto = await complete(openai, {
      tool_choice: "auto",
      seed: 3,
      model: "tiny:token",
      max_tokens: 24,
    });
    assert.ok(["tool_calls", "stop", "length"].includes(auto.choices[0]?.finish_reason ?? ""));
    // Asking for the one call the policy forbids now is a 4xx with a clear code, not retried.
    const forbidden = await post(server, {
      model: "tiny",
      messages: travelMessages,
      tools: travelTools,
      tool_choice: { type: "function", function: { name: "book_train" } },
    });
    assert.equal(forbidden.status, 422);
    assert.equal(forbidden.headers.get("x-should-retry"), "false");
    assert.equal(
      ((await forbidden.json()) as { error: { code: string } }).error.code,
      "MNT_ERR_NOTHING_ALLOWED",
    );
  });

  it("prompt shield: a blocked call is regenerated into an allowed one (mentor field says so)", async () => {
    let regenerated: Completion | undefined;
    for (let seed = 0; seed < 40 && regenerated === undefined; seed++) {
      const completion = await complete(openai, {
        tool_choice: "required",
        seed,
        mentor: { shield: "prompt" },
      });
      if (completion.mentor.exhausted) continue;
      assert.equal(verdict(completion.choices[0]?.message.tool_calls?.[0]), "allow");
      if (completion.mentor.blocked > 0) regenerated = completion;
    }
    assert.ok(regenerated, "some seed proposes a blocked call first");
    const first = regenerated.mentor.attempts[0]?.calls[0];
    assert.equal(first?.verdict, "block");
    // A booking before its route's check (P1); of a route nobody asked for, also P4_only.
    assert.ok(first?.rules.includes("P1"), JSON.stringify(first));
  });

  it("prompt shield: an answer is refused while a duty is open, then allowed", async () => {
    let answered: Completion | undefined;
    for (let seed = 0; seed < 40 && answered === undefined; seed++) {
      const completion = await complete(openai, { seed, stop: ["e", "a", "o"], model: "tiny:prompt" });
      if (completion.mentor.doneRefusals > 0 && completion.choices[0]?.message.tool_calls === undefined)
        answered = completion;
    }
    assert.ok(answered, "some seed answers without a call until the refusals run out");
    assert.equal(answered.mentor.doneRefusals, 3);
    assert.equal(answered.choices[0]?.finish_reason, "stop");
  });

  it("answers concurrent requests", async () => {
    const results = await Promise.all(
      [0, 1, 2, 3].map((seed) => complete(openai, { tool_choice: "required", seed, model: "tiny:token" })),
    );
    for (const result of results) assert.equal(verdict(result.choices[0]?.message.tool_calls?.[0]), "allow");
  });

  it("rejects malformed requests over the socket with a 4xx in OpenAI's shape, and keeps serving", async () => {
    // Every field check is in test/server/app.test.ts (no model); here the body as it arrives.
    const valid = { model: "tiny", messages: travelMessages, tools: travelTools };
    const cases: [string, unknown, number, string | null][] = [
      ["invalid JSON", "{not json", 400, "body"],
      ["unknown role", { ...valid, messages: [{ role: "robot", content: "x" }] }, 400, "messages[0].role"],
      ["a body over the size limit", { ...valid, padding: "x".repeat(5 * 1024 * 1024) }, 413, "body"],
    ];
    for (const [name, body, status, param] of cases) {
      const response = await post(server, body);
      assert.equal(response.status, status, name);
      const { error } = (await response.json()) as {
        error: { type: string; param: string | null; code: string };
      };
      assert.equal(error.param, param, name);
      assert.equal(error.type, "invalid_request_error", name);
      assert.match(error.code, /^MNT_ERR_/, name);
    }
    await assert.rejects(
      complete(openai, { temperature: 7 }),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError && /temperature: must be at most 2/.test(error.message),
    );
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });

  it("records one JSONL line per request and counts in /metrics", async () => {
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /^mentor_calls_blocked_total\{mode="prompt"\} [1-9]/m);
    assert.match(metrics, /^mentor_decision_seconds_count [1-9]/m);
    assert.match(metrics, /^mentor_queue_depth 0$/m);
    const [file] = readdirSync(recorder);
    const records = readFileSync(join(recorder, file as string), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.ok(records.length >= 10, `${records.length} records`);
    assert.ok(
      records.every((record) => typeof record.digest === "string" && typeof record.status === "number"),
    );
    const blocked = records.find((record) => ((record.mentor as TurnRecord | undefined)?.blocked ?? 0) > 0);
    assert.ok(blocked && (blocked.returned as { finish_reason: string }).finish_reason === "tool_calls");
    assert.ok(records.some((record) => record.status === 400 && (record.error as { param: string }).param));
  });
});

describe("server operations", () => {
  it("with strictGrounding, refuses a request it cannot ground (422 MNT_ERR_UNGROUNDED)", async () => {
    const server = await serve({ strictGrounding: true, trustClientGrounding: false, labeler: "rules" });
    const response = await post(server, {
      model: "tiny",
      messages: [{ role: "user", content: "hello, can you help me travel?" }],
      tools: travelTools,
    });
    assert.equal(response.status, 422);
    const body = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, "MNT_ERR_UNGROUNDED");
    assert.match(body.error.message, /messages\[0\]: the request could not be grounded into policy travel/);
  });

  it("drops the grounding a client sends unless started to trust it", async () => {
    const claim = [
      {
        role: "user",
        content: "Book me a train from Toronto to Chicago.",
        mentor: {
          task: [
            {
              name: "request_travel",
              arguments: {
                origin: "Toronto",
                destination: "Chicago",
                urgent: true,
                mode: "any",
                travel_class: "any",
              },
            },
          ],
        },
      },
    ] as unknown as OpenAI.ChatCompletionMessageParam[];
    const grounded = async (trustClientGrounding: boolean) => {
      const server = await serve({ trustClientGrounding, labeler: "rules" });
      const completion = await complete(client(server), { messages: claim, seed: 1 });
      return completion.mentor.grounding.map((note) => [note.source, note.value]);
    };
    assert.deepEqual(await grounded(false), [
      [
        "rule",
        [
          {
            name: "request_travel",
            arguments: {
              origin: "Toronto",
              destination: "Chicago",
              urgent: false,
              mode: "train",
              travel_class: "any",
            },
          },
        ],
      ],
    ]);
    assert.equal((await grounded(true))[0]?.[0], "client");
  });

  it("requires an API key when keys are configured (Bearer or X-Api-Key)", async () => {
    const server = await serve({ apiKeys: ["k1", "k2"] });
    const denied = await fetch(`${server.url}/v1/models`);
    assert.equal(denied.status, 401);
    assert.equal(((await denied.json()) as { error: { type: string } }).error.type, "authentication_error");
    assert.equal((await fetch(`${server.url}/v1/models`, { headers: { "x-api-key": "k2" } })).status, 200);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    await assert.rejects(
      client(server, "wrong").models.list(),
      (error: unknown) => error instanceof OpenAI.AuthenticationError,
    );
    const models = await client(server, "k1").models.list();
    assert.equal(models.data[0]?.id, "tiny");
  });

  it("sends CORS headers and answers preflight requests", async () => {
    const server = await serve({ cors: "https://app.example" });
    const preflight = await fetch(`${server.url}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "https://app.example");
    assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
    assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /authorization/);
    const answer = await fetch(`${server.url}/v1/models`, { headers: { origin: "https://app.example" } });
    assert.equal(answer.headers.get("access-control-allow-origin"), "https://app.example");
    assert.match(answer.headers.get("access-control-expose-headers") ?? "", /x-should-retry/);
  });

  it("refuses requests beyond the queue with 429 and Retry-After", async () => {
    const server = await serve({ concurrency: 1, maxQueue: 1, policies: [] });
    const slow = {
      model: "tiny",
      messages: [{ role: "user", content: "Tell me a story." }],
      max_tokens: 300,
    };
    const responses = await Promise.all([post(server, slow), post(server, slow), post(server, slow)]);
    const statuses = responses.map((response) => response.status).sort();
    assert.deepEqual(statuses, [200, 200, 429]);
    const refused = responses.find((response) => response.status === 429) as Response;
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "MNT_ERR_QUEUE_FULL");
  });

  it("cancels a request after the timeout (408) and when the client disconnects", async () => {
    const recorder = join(directory, "cancel-flights");
    const server = await serve({ requestTimeoutMs: 30, policies: [], recorderDirectory: recorder });
    const long = {
      model: "tiny",
      messages: [{ role: "user", content: "Tell me a story." }],
      max_tokens: 900,
    };
    const timedOut = await post(server, long);
    assert.equal(timedOut.status, 408);
    assert.equal(((await timedOut.json()) as { error: { code: string } }).error.code, "MNT_ERR_TIMEOUT");
    const patient = await serve({ policies: [], recorderDirectory: recorder });
    const controller = new AbortController();
    const response = await fetch(`${patient.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...long, stream: true }),
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    // The generation stops: the engine serves the next request at once.
    const started = performance.now();
    const next = await post(patient, { ...long, max_tokens: 2 });
    assert.equal(next.status, 200);
    await patient.close();
    const lines = readdirSync(recorder).flatMap((file) =>
      readFileSync(join(recorder, file), "utf8").trim().split("\n"),
    );
    const statuses = lines.map((line) => (JSON.parse(line) as { status: number }).status);
    assert.ok(
      statuses.includes(408) && statuses.includes(499),
      `${statuses} (${performance.now() - started} ms)`,
    );
  });

  it("proxy mode: the prompt shield in front of another OpenAI-compatible server", async () => {
    const upstream = await serve({ shield: "none", policies: [], modelId: "upstream-tiny" });
    const proxy = await serve({
      engine: undefined,
      modelId: undefined,
      upstream: { url: upstream.url },
      shield: "prompt",
    });
    const models = await client(proxy).models.list();
    assert.deepEqual(
      models.data.map((model) => model.id),
      ["upstream-tiny", "upstream-tiny:none", "upstream-tiny:prompt", "upstream-tiny:token"],
    );
    let regenerated: Completion | undefined;
    for (let seed = 0; seed < 40 && regenerated === undefined; seed++) {
      const completion = await complete(client(proxy), {
        model: "upstream-tiny",
        tool_choice: "required",
        seed,
      });
      if (completion.mentor.exhausted) continue;
      assert.equal(verdict(completion.choices[0]?.message.tool_calls?.[0]), "allow");
      if (completion.mentor.blocked > 0) regenerated = completion;
    }
    assert.ok(regenerated, "the proxy blocks and regenerates through the upstream");
    // The token shield over the upstream: what a request can carry (test/server/upstream-shield.test.ts).
    const token = await complete(client(proxy), {
      model: "upstream-tiny:token",
      tool_choice: "required",
      seed: 1,
    });
    assert.equal(token.mentor.mode, "token");
  });
});
