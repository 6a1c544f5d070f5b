import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { Evaluator } from "../../src/evaluator/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { buildServer, type ServerOptions } from "../../src/server/index.js";
import { questions, runRecords } from "../support/monitor-records.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// The monitor API (`/v1/monitor/check`, `/record`, `/done`) through inject(): the server grounds
// the conversation with the travel policy's rules and answers what `mentor check --call` prints.
// test/server/python-agent.test.ts runs the documented Python agent against `mentor serve`.
const travel = loadPolicy(travelPolicyFile);
const route = { origin: "Toronto", destination: "Chicago" };
const request = [{ role: "user", content: "Book me a train from Toronto to Chicago." }];
const apps: FastifyInstance[] = [];
const directory = mkdtempSync(join(tmpdir(), "mentor-monitor-api-"));
after(async () => {
  for (const app of apps) await app.close();
  rmSync(directory, { recursive: true, force: true });
});

async function build(options: ServerOptions = {}): Promise<FastifyInstance> {
  const app = await buildServer({
    generator: new ScriptedGenerator([]),
    modelId: "scripted",
    logger: false,
    labeler: "rules",
    ...options,
  });
  apps.push(app);
  return app;
}

async function post(app: FastifyInstance, path: string, body: unknown) {
  const answer = await app.inject({ method: "POST", url: `/v1/monitor/${path}`, payload: body as object });
  return { status: answer.statusCode, body: answer.json() as Record<string, unknown> & ErrorBody };
}

interface ErrorBody {
  error: { message: string; param: string | null; code: string };
}

describe("the monitor API", () => {
  it("check, record, done: a refused call with its rule and feedback, an allowed one recorded, the run's end", async () => {
    const app = await build({ recorderDirectory: directory });
    const book = { name: "book_train", arguments: route };
    const refused = await post(app, "check", { messages: request, call: book });
    assert.equal(refused.status, 200);
    // The decision and `next` are those `mentor check --call` prints for the grounded conversation.
    const { messages: grounded } = await new Labeler(travel).ground(request);
    const evaluator = new Evaluator(travel);
    assert.deepEqual(refused.body.decide, JSON.parse(JSON.stringify(evaluator.decide(grounded, book))));
    assert.deepEqual(refused.body.next, JSON.parse(JSON.stringify(evaluator.next(grounded))));
    const decision = refused.body.decide as { verdict: string; violations: { rule: string }[] };
    assert.equal(decision.verdict, "block");
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["P1"],
    );
    assert.match(String(refused.body.feedback), /^\[SHIELD\] Blocked book_train\(.*\)\. Rule P1/);
    assert.deepEqual(refused.body.ungrounded, []);
    // What to append: the call and the feedback as its result (read back as a refusal).
    const append = refused.body.append as { role: string; content: unknown }[];
    assert.deepEqual(
      append.map((message) => message.role),
      ["assistant", "tool"],
    );
    assert.equal(append[1]?.content, refused.body.feedback);
    let messages: unknown[] = [...request, ...append];

    const check = { name: "check_distance", arguments: JSON.stringify(route) };
    const allowed = await post(app, "check", { messages, call: check });
    assert.equal((allowed.body.decide as { verdict: string }).verdict, "allow");
    assert.deepEqual(allowed.body.append, []);
    const recorded = await post(app, "record", { messages, call: check, output: "The distance is 843 km." });
    assert.equal(recorded.status, 200);
    assert.deepEqual(recorded.body.outcome, { kind: "label", label: "long" });
    const done = recorded.body.done as { allowed: boolean; openDuties: { rule: string }[] };
    assert.equal(done.allowed, false);
    assert.deepEqual(
      done.openDuties.map((duty) => duty.rule),
      ["P4"],
    );
    assert.match(String(recorded.body.reminder), /P4/);
    messages = [...messages, ...(recorded.body.append as unknown[])];

    const early = await post(app, "done", { messages });
    assert.equal(early.body.allowed, false);
    assert.match(String(early.body.feedback), /^\[SHIELD\] You cannot finish yet\. Open duties: P4/);

    const booked = await post(app, "check", { messages, call: book });
    assert.equal((booked.body.decide as { verdict: string }).verdict, "allow");
    const made = await post(app, "record", {
      messages,
      call: { ...book, id: "call_7" },
      output: { status: "confirmed" },
    });
    assert.deepEqual(made.body.outcome, { kind: "json", value: { status: "confirmed" } });
    assert.deepEqual(made.body.append, [
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_7",
            type: "function",
            function: { name: "book_train", arguments: JSON.stringify(route) },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_7", content: '{"status":"confirmed"}' },
    ]);
    messages = [...messages, ...(made.body.append as unknown[])];
    const end = await post(app, "done", { messages });
    assert.deepEqual([end.body.allowed, end.body.openDuties, end.body.feedback], [true, [], undefined]);

    // Each check and done question is a flight record in the embedded monitor's shape.
    const records = runRecords(directory);
    assert.ok(records.every((record) => record.mode === "monitor" && record.policy === "travel"));
    assert.deepEqual(questions(records), [
      ["book_train", "block", ["P1"]],
      ["check_distance", "allow", []],
      ["end", false],
      ["book_train", "allow", []],
      ["end", true],
    ]);
  });

  it("selects the policy as the chat route does, and names the field of bad input", async () => {
    const app = await build();
    const call = { name: "book_train", arguments: route };
    const cases: [unknown, string, number, string, string | null, RegExp][] = [
      [{ messages: request }, "check", 400, "MNT_ERR_BAD_INPUT", "call", /call/],
      [
        { messages: request, call: { name: "" } },
        "check",
        400,
        "MNT_ERR_BAD_INPUT",
        "call.name",
        /tool name/,
      ],
      [
        { messages: request, call: { name: "book_train", arguments: "{not json" } },
        "check",
        400,
        "MNT_ERR_BAD_INPUT",
        "call.arguments",
        /not valid JSON/,
      ],
      [{ messages: "hi", call }, "check", 400, "MNT_ERR_BAD_INPUT", "messages", /array/],
      [{ messages: request, call }, "record", 400, "MNT_ERR_BAD_INPUT", "output", /the tool's result/],
      [
        { messages: request, mentor: { policy: "retail" } },
        "done",
        400,
        "MNT_ERR_POLICY_UNKNOWN",
        "mentor.policy",
        /no policy "retail"/,
      ],
      [
        { model: "gpt-4o", messages: request },
        "done",
        404,
        "MNT_ERR_MODEL_UNKNOWN",
        "model",
        /serves scripted/,
      ],
    ];
    for (const [body, path, status, code, param, message] of cases) {
      const answer = await post(app, path, body);
      assert.equal(answer.status, status, JSON.stringify(body));
      assert.equal(answer.body.error.code, code, JSON.stringify(body));
      assert.equal(answer.body.error.param, param, JSON.stringify(body));
      assert.match(answer.body.error.message, message);
    }
    // The served model with a mode suffix, and the policy by its name, are accepted.
    const named = await post(app, "done", {
      model: "scripted:prompt",
      messages: request,
      mentor: { policy: "travel" },
    });
    assert.equal(named.status, 200);
    assert.equal(named.body.allowed, false);
  });
});
