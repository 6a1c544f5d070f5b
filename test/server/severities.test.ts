import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import type { TurnRecord } from "../../src/agent/index.js";
import type { ChatMessage, ChatTool } from "../../src/openai/index.js";
import { buildServer } from "../../src/server/index.js";
import { ScriptedGenerator, type Step } from "../support/scripted-generator.js";

// Severities through the server (fastify inject, scripted generator): the ask round trip, the
// latched stop, escalation and override within a turn. test/evaluator/severities.test.ts covers
// the decisions themselves.
const policyFile = fileURLToPath(new URL("../../../test/evaluator/fixtures/ops.yaml", import.meta.url));
const apps: FastifyInstance[] = [];
after(async () => {
  for (const app of apps) await app.close();
});

async function build(steps: Step[]): Promise<{ app: FastifyInstance; generator: ScriptedGenerator }> {
  const generator = new ScriptedGenerator(steps);
  const app = await buildServer({
    generator,
    modelId: "scripted",
    shield: "prompt",
    logger: false,
    policies: [policyFile],
  });
  apps.push(app);
  return { app, generator };
}

function tool(name: string, properties: Record<string, { type: string }> = {}): ChatTool {
  return {
    type: "function",
    function: { name, parameters: { type: "object", properties, required: Object.keys(properties) } },
  };
}

const tools = [
  tool("pay", { amount: { type: "number" } }),
  tool("drop_table", { name: { type: "string" } }),
  tool("send_email", { to: { type: "string" } }),
  tool("refund", { amount: { type: "number" } }),
  tool("run_tests"),
];
const user: ChatMessage = { role: "user", content: "Handle the queue." };

interface Answer {
  choices: { message: ChatMessage; finish_reason: string }[];
  mentor: TurnRecord;
  error?: { code: string; pending?: unknown; stopped?: unknown };
}

async function ask(app: FastifyInstance, messages: ChatMessage[]): Promise<{ status: number; body: Answer }> {
  const response = await app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    payload: { model: "scripted", messages, tools },
  });
  return { status: response.statusCode, body: response.json() as Answer };
}

describe("severities through the server", () => {
  it("ask: 409 with the pending call; the approval returns it without generating; the next one is asked again", async () => {
    const payment = { name: "pay", arguments: { amount: 20 } };
    const { app, generator } = await build([{ calls: [payment] }]);
    const held = await ask(app, [user]);
    assert.equal(held.status, 409);
    assert.equal(held.body.error?.code, "MNT_ERR_APPROVAL_REQUIRED");
    assert.deepEqual(held.body.error?.pending, { ...payment, rules: ["S3"] });
    assert.equal(generator.requests.length, 1);

    const approval: ChatMessage = {
      role: "user",
      content: "Approved.",
      mentor: { approve: held.body.error?.pending },
    };
    const approved = await ask(app, [user, approval]);
    assert.equal(approved.status, 200);
    assert.equal(generator.requests.length, 1, "the approved call is answered without generating");
    const message = approved.body.choices[0]?.message as ChatMessage;
    assert.equal(approved.body.choices[0]?.finish_reason, "tool_calls");
    assert.equal(message.tool_calls?.[0]?.function.name, "pay");
    assert.deepEqual(JSON.parse(message.tool_calls?.[0]?.function.arguments ?? ""), payment.arguments);
    assert.deepEqual(approved.body.mentor.approved, payment);

    // The call made, the same payment proposed again is held again: an approval is for one call.
    const made: ChatMessage[] = [
      user,
      approval,
      message,
      { role: "tool", tool_call_id: message.tool_calls?.[0]?.id as string, content: '{"paid": true}' },
    ];
    const again = await ask(app, made);
    assert.equal(again.status, 409);
    assert.equal(again.body.error?.code, "MNT_ERR_APPROVAL_REQUIRED");
  });

  it("ask, streamed: the pending call comes as the stream's error event; the approval streams the call", async () => {
    const payment = { name: "pay", arguments: { amount: 20 } };
    const { app } = await build([{ calls: [payment] }]);
    const stream = async (messages: ChatMessage[]) =>
      app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        payload: { model: "scripted", messages, tools, stream: true },
      });
    const held = await stream([user]);
    const events = held.body
      .split("\n\n")
      .filter((block) => block.startsWith("data: {"))
      .map((block) => JSON.parse(block.slice(6)) as { error?: { code: string; pending?: unknown } });
    const error = events.find((event) => event.error)?.error;
    assert.equal(error?.code, "MNT_ERR_APPROVAL_REQUIRED");
    assert.deepEqual(error?.pending, { ...payment, rules: ["S3"] });
    assert.doesNotMatch(held.body, /"tool_calls"/, "the held call is never streamed");
    const approved = await stream([
      user,
      { role: "user", content: "Approved.", mentor: { approve: payment } },
    ]);
    assert.match(approved.body, /"name":"pay"/);
    assert.match(approved.body, /"finish_reason":"tool_calls"/);
  });

  it("stop: the turn ends with the stop message; later requests get 409 until a resume", async () => {
    const { app, generator } = await build([
      { calls: [{ name: "drop_table", arguments: { name: "users" } }] },
    ]);
    const stopped = await ask(app, [user]);
    assert.equal(stopped.status, 200);
    const message = stopped.body.choices[0]?.message as ChatMessage;
    assert.match(
      String(message.content),
      /^\[SHIELD\] Stopped the run at drop_table\(name="users"\)\. Rule S1/,
    );
    assert.equal(message.tool_calls, undefined);
    assert.deepEqual(stopped.body.mentor.stopped?.rules, ["S1"]);

    const later = await ask(app, [user, message, { role: "user", content: "Go on." }]);
    assert.equal(later.status, 409);
    assert.equal(later.body.error?.code, "MNT_ERR_RUN_STOPPED");
    assert.equal(generator.requests.length, 1, "a stopped run is not generated for");

    const resumed = await ask(app, [
      user,
      message,
      { role: "user", content: "Go on.", mentor: { resume: true } },
    ]);
    assert.equal(resumed.status, 200);
    assert.deepEqual(resumed.body.mentor.stopped?.rules, ["S1"], "the scripted model drops the table again");
  });

  it("escalate: refusals within the turn count; the third email stops the run", async () => {
    const email = { name: "send_email", arguments: { to: "press" } };
    const { app } = await build([{ calls: [email] }]);
    const answer = await ask(app, [user]);
    assert.equal(answer.status, 200);
    assert.deepEqual(
      answer.body.mentor.attempts.map((attempt) => attempt.calls.map((call) => call.action)),
      [["retry"], ["retry"], ["stop"]],
    );
    assert.match(String(answer.body.choices[0]?.message.content), /^\[SHIELD\] Stopped/);
  });

  it("override: the identical call regenerated after the refusal is returned, with the rule as a warning", async () => {
    const refund = { name: "refund", arguments: { amount: 500 } };
    const { app, generator } = await build([{ calls: [refund] }]);
    const answer = await ask(app, [user]);
    assert.equal(answer.status, 200);
    const attempts = answer.body.mentor.attempts.map((attempt) => attempt.calls[0]);
    assert.deepEqual(
      attempts.map((call) => [call?.action, call?.warnings]),
      [
        ["block", []],
        ["warn", ["S5"]],
      ],
    );
    assert.match(String(attempts[0]?.feedback), /To override S5 deliberately/);
    assert.equal(answer.body.choices[0]?.message.tool_calls?.[0]?.function.name, "refund");
    // The model saw its refused call and the feedback before proposing it again.
    const seen = generator.requests[1]?.messages.at(-1);
    assert.match(String(seen?.content), /^\[SHIELD\] Blocked refund\(amount=500\)/);
  });
});
