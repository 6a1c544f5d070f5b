import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Evaluator, verifyConversation } from "../../src/evaluator/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { MessageReader, traceFromMessages } from "../../src/run/index.js";

// Issue 32, item 8: a binding introduced by a tool's output (every sent transfer is followed by
// a notice for that transfer) and a later message that amends or withdraws the request.
const policy = loadPolicy(
  fileURLToPath(new URL("../../../test/evaluator/fixtures/wire-transfer.yaml", import.meta.url)),
);

type Message = Record<string, unknown>;
let ids = 0;
const request = (beneficiary: string, amount = 100, change?: "amends" | "withdraws"): Message => ({
  role: "user",
  content: "…",
  mentor: {
    task: [
      {
        name: "request_transfer",
        arguments: change === "withdraws" ? {} : { beneficiary, amount },
        ...(change ? { [change]: true } : {}),
      },
    ],
  },
});
const call = (name: string, args: Record<string, unknown>, output: unknown = { ok: true }): Message[] => {
  const id = `call_${++ids}`;
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    },
    { role: "tool", tool_call_id: id, content: JSON.stringify(output) },
  ];
};
const screen = (beneficiary: string) => call("screen_beneficiary", { beneficiary });
const send = (beneficiary: string, transferId: string) =>
  call("send_transfer", { beneficiary, amount: 100 }, { transfer_id: transferId, status: "sent" });
const notice = (transferId: string) => call("send_notice", { transfer_id: transferId });

function judge(messages: Message[]) {
  const result = verifyConversation(policy, new Evaluator(policy), messages);
  const broken = result.rules
    .filter((rule) => !rule.satisfied)
    .map((rule) => `${rule.rule} ${JSON.stringify(rule.binding)}`);
  return { violated: result.violated, broken, verdicts: result.calls.map((entry) => entry.verdict) };
}

describe("wire transfers: an entity bound from a tool's output", () => {
  test("the notice for the sent transfer meets its duty", () => {
    const result = judge([request("Alice"), ...screen("Alice"), ...send("Alice", "T1"), ...notice("T1")]);
    assert.deepEqual(result, { violated: false, broken: [], verdicts: ["allow", "allow", "allow"] });
  });

  test("a notice for another transfer does not (any notice counted before)", () => {
    const result = judge([request("Alice"), ...screen("Alice"), ...send("Alice", "T1"), ...notice("T9")]);
    assert.equal(result.violated, true);
    assert.deepEqual(result.broken, ['W4 [{"t":"T1"}]']);
  });

  test("each of two transfers needs its own notice", () => {
    const messages = [
      request("Alice"),
      ...screen("Alice"),
      ...send("Alice", "T1"),
      ...send("Alice", "T2"),
      ...notice("T2"),
    ];
    assert.deepEqual(judge(messages).broken, ['W4 [{"t":"T1"}]']);
    assert.deepEqual(judge([...messages, ...notice("T1")]).broken, []);
  });

  test("after a send, the open duty is the notice for its id", () => {
    const messages = [request("Alice"), ...screen("Alice"), ...send("Alice", "T1")];
    const next = new Evaluator(policy).next(traceFromMessages(messages, policy));
    assert.equal(next.done.allowed, false);
    assert.ok(
      next.openDuties.some(
        (duty) => duty.rule === "W4" && JSON.stringify(duty.fulfil?.arguments) === '{"transfer_id":"T1"}',
      ),
      JSON.stringify(next.openDuties),
    );
  });

  test("a send whose output has no transfer id introduces no transfer", () => {
    const result = judge([
      request("Alice"),
      ...screen("Alice"),
      ...call("send_transfer", { beneficiary: "Alice", amount: 100 }, { status: "queued" }),
    ]);
    assert.deepEqual(result, { violated: false, broken: [], verdicts: ["allow", "allow"] });
  });

  test("the loader names a bad output source", () => {
    const text = `
policy: p
manual: {R1: x}
tools:
  send: {parameters: {to: string}}
  note: {parameters: {to: string}, output: text, labels: {ok: fine}}
entities:
  t1: {from: {send: {a: transfer_id}}}
  t2: {from: {note: {b: o.id}}}
  t3: {from: {mail: {c: o.id}}}
propositions: {}
`;
    assert.throws(
      () => parsePolicy(text, "p.yaml"),
      (error: Error) =>
        /p\.yaml:8:25 \(entities\.t1\.from\.send\.a\): .*o\.<field> \(o\.transfer_id\), not "transfer_id"/.test(
          error.message,
        ) &&
        /entities\.t2\.from\.note\.b\): note has a text output/.test(error.message) &&
        /entities\.t3\.from\.mail\): entity t3 is bound from mail, which is neither a task call nor a tool/.test(
          error.message,
        ),
    );
  });
});

describe("wire transfers: a request amended or withdrawn by a later message", () => {
  const amended = [request("Alice"), { role: "assistant", content: "Noted." }, request("Bob", 100, "amends")];

  test("the amended beneficiary is the duty; the replaced one lapses", () => {
    const result = judge([...amended, ...screen("Bob"), ...send("Bob", "T1"), ...notice("T1")]);
    assert.deepEqual(result, { violated: false, broken: [], verdicts: ["allow", "allow", "allow"] });
    assert.deepEqual(judge(amended).broken, ['W2 [{"b":"Bob"}]']);
  });

  test("a transfer to the replaced beneficiary is not progress: it is a transfer not asked for", () => {
    const result = judge([...amended, ...screen("Alice"), ...send("Alice", "T1"), ...notice("T1")]);
    assert.equal(result.violated, true);
    assert.deepEqual(result.verdicts, ["allow", "block", "allow"]);
    assert.deepEqual(result.broken, ['W2 [{"b":"Bob"}]', 'W3 [{"b":"Alice"}]']);
  });

  test("a withdrawn request leaves no duty, and a transfer after it is one not asked for", () => {
    const withdrawn = [request("Alice"), request("", 0, "withdraws")];
    assert.deepEqual(judge(withdrawn), { violated: false, broken: [], verdicts: [] });
    const sent = judge([...withdrawn, ...screen("Alice"), ...send("Alice", "T1"), ...notice("T1")]);
    assert.deepEqual(sent.broken, ['W3 [{"b":"Alice"}]']);
  });

  test("a withdrawal names the call it withdraws by the arguments it gives", () => {
    const two = [request("Alice"), request("Carol")];
    const withdrawCarol: Message = {
      role: "user",
      content: "…",
      mentor: { task: [{ name: "request_transfer", arguments: { beneficiary: "Carol" }, withdraws: true }] },
    };
    assert.deepEqual(traceFromMessages([...two, withdrawCarol], policy).task, [
      { name: "request_transfer", arguments: { beneficiary: "Alice", amount: 100 } },
    ]);
    assert.deepEqual(traceFromMessages([...two, request("", 0, "withdraws")], policy).task, [
      { name: "request_transfer", arguments: { beneficiary: "Alice", amount: 100 } },
    ]);
  });

  test("the rules labeler grounds amendments and withdrawals by the task's words", async () => {
    const labeler = new Labeler(policy);
    const grounded = await labeler.ground([
      { role: "user", content: "Please send 100 EUR to Alice." },
      { role: "assistant", content: "Sure." },
      { role: "user", content: "Actually send 250 to Bob instead." },
    ]);
    assert.deepEqual(traceFromMessages(grounded.messages, policy).task, [
      { name: "request_transfer", arguments: { beneficiary: "Bob", amount: 250 } },
    ]);
    const cancelled = await labeler.ground([
      { role: "user", content: "Please send 100 EUR to Alice." },
      { role: "user", content: "Never mind, cancel the transfer." },
    ]);
    assert.deepEqual(traceFromMessages(cancelled.messages, policy).task, []);
    const added = await labeler.ground([
      { role: "user", content: "Please send 100 EUR to Alice." },
      { role: "user", content: "And send 50 to Bob." },
    ]);
    assert.equal(traceFromMessages(added.messages, policy).task.length, 2);
  });

  test("the message reader (the server's run cache) reads the same task as the whole trace", () => {
    let reader = MessageReader.start(policy);
    const changes: boolean[] = [];
    amended.forEach((message, index) => {
      const step = reader.read(message, index);
      if ("reread" in step) throw new Error(step.reread);
      changes.push(step.taskChanged);
      reader = step.reader;
    });
    assert.deepEqual(changes, [true, false, true]);
    assert.deepEqual(reader.task, traceFromMessages(amended, policy).task);
  });

  test("a flag that is not a boolean is an error naming it", () => {
    const bad = {
      role: "user",
      mentor: { task: [{ name: "request_transfer", arguments: {}, amends: "yes" }] },
    };
    assert.throws(
      () => traceFromMessages([bad], policy),
      /messages\[0\]\.mentor\.task\[0\]\.amends must be true or false/,
    );
  });
});
