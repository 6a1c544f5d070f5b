import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { Engine } from "../../src/llm/index.js";
import type { ToolChoice } from "../../src/openai/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { pythonWithOpenAI } from "../support/python-openai.js";
import { callsReply, ScriptedEndpoint } from "../support/scripted-endpoint.js";
import { makeTravelModel, travelMessages, travelTools } from "../support/tiny-travel.js";

// tool_choice in every form (none, auto, required, a named function, allowed_tools with mode auto
// or required) and parallel_tool_calls, through the real `openai` clients of Node and Python,
// against the server on a tiny model (the travel policy: at the start only check_distance is
// allowed, book_train waits for it, and the turn may not end) and in proxy mode.
const directory = mkdtempSync(join(tmpdir(), "mentor-tool-choice-"));
const script = fileURLToPath(new URL("../../../test/server/python/chat_requests.py", import.meta.url));
let engine: Engine;
let server: RunningServer;
let openai: OpenAI;

before(async () => {
  engine = await Engine.load({
    modelPath: await makeTravelModel(join(directory, "tiny.gguf")),
    contextSize: 2048,
  });
  server = await startServer({ engine, modelId: "tiny", port: 0, logger: false, trustClientGrounding: true });
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 });
});
after(async () => {
  await server?.close();
  await engine?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

const named = (name: string) => ({ type: "function" as const, function: { name } });
const allowedTools = (mode: "auto" | "required", ...names: string[]): ToolChoice => ({
  type: "allowed_tools",
  allowed_tools: { mode, tools: names.map(named) },
});

type Mode = "none" | "prompt" | "token";
/** What came back: the calls' names and finish reason, or the error's status, code and param. */
type Outcome =
  | { calls: string[]; finish_reason: string }
  | { status: number; code: string; param: string | null };

const body = (mode: Mode, toolChoice: ToolChoice, extra: Record<string, unknown> = {}) => ({
  model: `tiny:${mode}`,
  messages: travelMessages,
  tools: travelTools,
  tool_choice: toolChoice,
  max_tokens: 48,
  seed: 1,
  ...extra,
});

/** The requests through the Node client. */
async function throughNode(requests: readonly Record<string, unknown>[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const request of requests) {
    try {
      const completion = await openai.chat.completions.create(
        request as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming,
      );
      const choice = completion.choices[0];
      outcomes.push({
        calls: (choice?.message.tool_calls ?? []).map((call) =>
          call.type === "function" ? call.function.name : "",
        ),
        finish_reason: choice?.finish_reason ?? "",
      });
    } catch (error) {
      assert.ok(error instanceof OpenAI.APIError, String(error));
      const detail = error.error as { code: string; param: string | null };
      outcomes.push({ status: error.status as number, code: detail.code, param: detail.param });
    }
  }
  return outcomes;
}

/**
 * The same requests through the Python client (test/server/python/chat_requests.py), run
 * asynchronously: the server answers it from this process.
 */
async function throughPython(requests: readonly Record<string, unknown>[]): Promise<Outcome[]> {
  const child = spawn(pythonWithOpenAI(), [script, `${server.url}/v1`], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(JSON.stringify(requests));
  const [status] = (await once(child, "close")) as [number | null];
  assert.equal(status, 0, stderr);
  return (JSON.parse(stdout) as { results: Outcome[] }).results;
}

// Form × mode → what the model may do (the docs' table, docs/server.md "tool_choice").
const cases: [string, Record<string, unknown>, (outcome: Outcome) => void][] = [];
const calls = (names: string[]) => (outcome: Outcome) =>
  assert.deepEqual(outcome, { calls: names, finish_reason: "tool_calls" });
const refused = (outcome: Outcome) =>
  assert.deepEqual(outcome, { status: 422, code: "MNT_ERR_NOTHING_ALLOWED", param: null });
for (const mode of ["token", "prompt"] as const) {
  cases.push(
    [
      `${mode}: allowed_tools required of an allowed tool`,
      body(mode, allowedTools("required", "check_distance")),
      calls(["check_distance"]),
    ],
    [
      `${mode}: allowed_tools required of a tool the policy blocks`,
      body(mode, allowedTools("required", "book_train")),
      refused,
    ],
    [
      `${mode}: allowed_tools auto of a tool the policy blocks, the turn may not end`,
      body(mode, allowedTools("auto", "book_train")),
      refused,
    ],
    [
      `${mode}: a named tool the policy allows`,
      body(mode, named("check_distance")),
      calls(["check_distance"]),
    ],
    [`${mode}: a named tool the policy blocks`, body(mode, named("book_train")), refused],
  );
}
cases.push(
  [
    "token: allowed_tools auto with a blocked and an allowed tool",
    body("token", allowedTools("auto", "book_train", "check_distance")),
    calls(["check_distance"]),
  ],
  // Unshielded, tool_choice alone decides: the one tool offered is called, blocked or not.
  [
    "none: allowed_tools required",
    body("none", allowedTools("required", "book_train")),
    calls(["book_train"]),
  ],
  ["none: a named tool", body("none", named("book_train")), calls(["book_train"])],
  [
    "token: required, one call per turn",
    body("token", "required", { parallel_tool_calls: false }),
    calls(["check_distance"]),
  ],
  [
    "token: none",
    body("token", "none", { max_tokens: 4 }),
    (outcome) => assert.deepEqual(outcome, { calls: [], finish_reason: "length" }),
  ],
  [
    "an allowed_tools entry outside tools",
    body("token", allowedTools("auto", "check_distance", "book_flight")),
    (outcome) =>
      assert.deepEqual(outcome, {
        status: 400,
        code: "MNT_ERR_BAD_INPUT",
        param: "tool_choice.allowed_tools.tools[1].function.name",
      }),
  ],
);

describe("tool_choice in every form, intersected with the policy", () => {
  it("through the openai npm client", async () => {
    const outcomes = await throughNode(cases.map(([, request]) => request));
    cases.forEach(([name, , check], index) => {
      const outcome = outcomes[index] as Outcome;
      assert.doesNotThrow(() => check(outcome), `${name}: ${JSON.stringify(outcome)}`);
    });
  });

  it("through the Python openai package", async () => {
    const outcomes = await throughPython(cases.map(([, request]) => request));
    cases.forEach(([name, , check], index) => {
      const outcome = outcomes[index] as Outcome;
      assert.doesNotThrow(() => check(outcome), `${name}: ${JSON.stringify(outcome)}`);
    });
  });
});

describe("tool_choice and parallel_tool_calls in proxy mode", () => {
  const endpoint = new ScriptedEndpoint();
  let proxy: RunningServer;
  let client: OpenAI;
  /** The upstream's answer: calls of these tools, Toronto to Chicago. */
  const calling = (...names: string[]) =>
    callsReply(names.map((name) => ({ name, arguments: { origin: "Toronto", destination: "Chicago" } })));
  const twoCalls = calling("check_distance", "book_train");
  before(async () => {
    proxy = await startServer({
      port: 0,
      logger: false,
      labeler: "rules",
      trustClientGrounding: true,
      upstream: { url: await endpoint.start(), model: "scripted" },
    });
    client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "none", maxRetries: 0 });
  });
  after(async () => {
    await proxy?.close();
    await endpoint.close();
  });
  beforeEach(() => endpoint.reset());

  /** The tools and tool_choice of the upstream's request `index`. */
  const sentUp = (index: number) => {
    const sent = endpoint.requests[index]?.body ?? {};
    const tools = (sent.tools ?? []) as { function: { name: string } }[];
    return { tools: tools.map((tool) => tool.function.name), tool_choice: sent.tool_choice };
  };
  const create = (mode: Mode, toolChoice: ToolChoice, extra: Record<string, unknown> = {}) =>
    client.chat.completions.create({
      ...body(mode, toolChoice, extra),
      model: `scripted:${mode}`,
    } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);

  it("sends allowed_tools up as the offered tools with required or auto, intersected with the policy", async () => {
    endpoint.script = [calling("book_train"), calling("check_distance")];
    await create("none", allowedTools("required", "book_train"));
    assert.deepEqual(sentUp(0), { tools: ["book_train"], tool_choice: "required" });
    // The policy allows only check_distance now, and the turn may not end: a call is required.
    await create("token", allowedTools("auto", "book_train", "check_distance"));
    assert.deepEqual(sentUp(1), { tools: ["check_distance"], tool_choice: "required" });
  });

  it("returns one call with parallel_tool_calls false, though the upstream wrote two", async () => {
    endpoint.script = [twoCalls, twoCalls];
    const single = await create("none", "required", { parallel_tool_calls: false });
    assert.equal(endpoint.requests[0]?.body.parallel_tool_calls, false);
    assert.deepEqual(
      single.choices[0]?.message.tool_calls?.map((call) => call.type === "function" && call.function.name),
      ["check_distance"],
    );
    const both = await create("none", "required");
    assert.equal(both.choices[0]?.message.tool_calls?.length, 2);
  });

  it("refuses with 422 when the policy allows none of the tools tool_choice offers", async () => {
    await assert.rejects(create("token", allowedTools("required", "book_train")), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 422);
      assert.equal((error.error as { code: string }).code, "MNT_ERR_NOTHING_ALLOWED");
      return true;
    });
    assert.equal(endpoint.requests.length, 0, "nothing goes up");
  });
});
