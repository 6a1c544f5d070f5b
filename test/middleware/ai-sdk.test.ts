import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { LanguageModelV3GenerateResult, LanguageModelV3Prompt } from "@ai-sdk/provider";
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { createMonitor } from "../../src/evaluator/index.js";
import { shieldAiModel, shieldAiTools, ToolGuard } from "../../src/middleware/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { questions, runRecords } from "../support/monitor-records.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// The AI SDK middleware on the SDK's own scripted model (ai/test MockLanguageModelV3): the tools'
// executions are judged, a refused one is not run and its result is the shield's feedback, and
// an answer that would end the run with duties open is refused.

const travel = loadPolicy(travelPolicyFile);
const opsPolicy = loadPolicy(
  fileURLToPath(new URL("../../../test/evaluator/fixtures/ops.yaml", import.meta.url)),
);
const task = [
  { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } },
];
const routeSchema = jsonSchema<{ origin: string; destination: string }>({
  type: "object",
  properties: { origin: { type: "string" }, destination: { type: "string" } },
  required: ["origin", "destination"],
});
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const route = { origin: "Toronto", destination: "Chicago" };

let callId = 0;
function calls(...proposed: { name: string; arguments: object }[]): LanguageModelV3GenerateResult {
  return {
    content: proposed.map((entry) => ({
      type: "tool-call" as const,
      toolCallId: `c${callId++}`,
      toolName: entry.name,
      input: JSON.stringify(entry.arguments),
    })),
    finishReason: { unified: "tool-calls", raw: undefined },
    usage,
    warnings: [],
  };
}
function answer(text: string): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: undefined },
    usage,
    warnings: [],
  };
}

/** A generation as the model streams it. */
function streamed(result: LanguageModelV3GenerateResult) {
  const parts = result.content.flatMap((part): unknown[] =>
    part.type === "text"
      ? [
          { type: "text-start" as const, id: "t" },
          { type: "text-delta" as const, id: "t", delta: part.text },
          { type: "text-end" as const, id: "t" },
        ]
      : [part],
  );
  return {
    stream: convertArrayToReadableStream([
      { type: "stream-start" as const, warnings: [] },
      ...parts,
      { type: "finish" as const, finishReason: result.finishReason, usage },
    ] as never[]),
  };
}

/** The travel tools, recording which ones ran. */
function travelTools(ran: string[]) {
  return {
    check_distance: tool({
      inputSchema: routeSchema,
      execute: async () => {
        ran.push("check_distance");
        return "The distance is 843 km.";
      },
    }),
    book_train: tool({
      inputSchema: routeSchema,
      execute: async () => {
        ran.push("book_train");
        return { status: "confirmed" };
      },
    }),
  };
}

/** The last user or tool text the model was shown. */
function lastText(prompt: LanguageModelV3Prompt): string {
  const message = prompt.at(-1);
  if (!message || typeof message.content === "string") return String(message?.content);
  return message.content
    .map((part) => {
      if (part.type === "text") return part.text;
      if (part.type === "tool-result" && part.output.type === "text") return part.output.value;
      return "";
    })
    .join("");
}

describe("the AI SDK middleware (MockLanguageModelV3)", () => {
  it("a refused call is not run: its tool result is the shield's feedback, and the model follows it", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        calls({ name: "book_train", arguments: route }),
        calls({ name: "check_distance", arguments: route }),
        calls({ name: "book_train", arguments: route }),
        answer("Booked."),
      ],
    });
    const ran: string[] = [];
    const records = mkdtempSync(join(tmpdir(), "mentor-ai-sdk-records-"));
    after(() => rmSync(records, { recursive: true, force: true }));
    const guard = new ToolGuard(createMonitor(travel, { task, records }));
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: shieldAiModel(guard) }),
      tools: shieldAiTools(travelTools(ran), guard),
      stopWhen: stepCountIs(6),
      prompt: "Book me a train from Toronto to Chicago.",
    });
    assert.deepEqual(ran, ["check_distance", "book_train"]);
    const first = result.steps[0]?.toolResults[0];
    assert.match(
      String(first?.output),
      /^\[SHIELD\] Blocked book_train\(origin="Toronto", destination="Chicago"\)\. Rule P1/,
    );
    assert.match(lastText(model.doGenerateCalls[1]?.prompt ?? []), /Rule P1: Check the distance/);
    assert.equal(result.text, "Booked.");
    assert.equal(guard.monitor.checkDone().allowed, true);
    assert.deepEqual(
      guard.monitor.run.calls.map((call) => [call.name, call.outcome]),
      [
        ["check_distance", { kind: "label", label: "long" }],
        ["book_train", { kind: "json", value: { status: "confirmed" } }],
      ],
    );
    // The run's flight records (`records`), as the dashboard reads them: each judged execution,
    // and the end of the run the model middleware asked about (then once more in the test above).
    assert.deepEqual(questions(runRecords(records)), [
      ["book_train", "block", ["P1"]],
      ["check_distance", "allow", []],
      ["book_train", "allow", []],
      ["end", true],
      ["end", true],
    ]);
  });

  it("an answer with duties open is refused with the shield's feedback, up to the policy's bound", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        answer("Done!"),
        calls({ name: "check_distance", arguments: route }),
        answer("Still done."),
        answer("Still done."),
        answer("Still done."),
      ],
    });
    const ran: string[] = [];
    const guard = new ToolGuard(createMonitor(travel, { task }));
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: shieldAiModel(guard) }),
      tools: shieldAiTools(travelTools(ran), guard),
      stopWhen: stepCountIs(3),
      prompt: "Book me a train from Toronto to Chicago.",
    });
    // The refused answer never reached the SDK: the model was asked again and called a tool.
    assert.match(
      lastText(model.doGenerateCalls[1]?.prompt ?? []),
      /^\[SHIELD\] You cannot finish yet\. Open duties: P4/,
    );
    assert.deepEqual(ran, ["check_distance"]);
    assert.equal(result.steps[0]?.toolCalls[0]?.toolName, "check_distance");
    // After the bound (done.max_refusals: 3, one used), the answer ends the run with the duty open.
    const refusals = model.doGenerateCalls.filter((call) =>
      /You cannot finish yet/.test(lastText(call.prompt)),
    );
    assert.equal(refusals.length, 3);
    assert.equal(result.text, "Still done.");
    assert.equal(guard.monitor.checkDone().allowed, false);
  });

  it("streamText: the same refusals; a refused answer is never streamed", async () => {
    const model = new MockLanguageModelV3({
      doStream: [
        streamed(answer("Done!")),
        streamed(calls({ name: "book_train", arguments: route })),
        streamed(calls({ name: "check_distance", arguments: route })),
        streamed(calls({ name: "book_train", arguments: route })),
        streamed(answer("Booked.")),
      ],
    });
    const ran: string[] = [];
    const guard = new ToolGuard(createMonitor(travel, { task }));
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: shieldAiModel(guard) }),
      tools: shieldAiTools(travelTools(ran), guard),
      stopWhen: stepCountIs(6),
      prompt: "Book me a train from Toronto to Chicago.",
    });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    assert.equal(text, "Booked.", "the refused 'Done!' never reached the stream");
    assert.deepEqual(ran, ["check_distance", "book_train"]);
    assert.match(lastText(model.doStreamCalls[1]?.prompt ?? []), /^\[SHIELD\] You cannot finish yet/);
    assert.match(lastText(model.doStreamCalls[2]?.prompt ?? []), /^\[SHIELD\] Blocked book_train/);
    assert.equal(guard.monitor.checkDone().allowed, true);
  });

  it("severities: ask goes to onAsk; a stop refuses every later call and lets the run end", async () => {
    const asked: string[] = [];
    const ran: string[] = [];
    const amountSchema = jsonSchema<{ amount: number }>({
      type: "object",
      properties: { amount: { type: "number" } },
    });
    const tools = {
      pay: tool({
        inputSchema: amountSchema,
        execute: async () => {
          ran.push("pay");
          return { paid: true };
        },
      }),
      drop_table: tool({
        inputSchema: jsonSchema<{ name: string }>({
          type: "object",
          properties: { name: { type: "string" } },
        }),
        execute: async () => {
          ran.push("drop_table");
          return { ok: true };
        },
      }),
      run_tests: tool({
        inputSchema: jsonSchema<object>({ type: "object" }),
        execute: async () => {
          ran.push("run_tests");
          return { ok: true };
        },
      }),
    };
    const guard = new ToolGuard(createMonitor(opsPolicy), {
      onAsk: (decision) => {
        asked.push(`${decision.call.name} ${decision.violations.map((finding) => finding.rule)}`);
        return decision.call.arguments.amount === 20;
      },
    });
    const model = new MockLanguageModelV3({
      doGenerate: [
        calls({ name: "pay", arguments: { amount: 20 } }, { name: "pay", arguments: { amount: 99 } }),
        calls({ name: "drop_table", arguments: { name: "users" } }),
        calls({ name: "run_tests", arguments: {} }),
        answer("Stopped."),
      ],
    });
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: shieldAiModel(guard) }),
      tools: shieldAiTools(tools, guard),
      stopWhen: stepCountIs(6),
      prompt: "Pay and clean up.",
    });
    assert.deepEqual(asked, ["pay S3", "pay S3"]);
    assert.deepEqual(
      ran,
      ["pay"],
      "the approved payment ran; the refused one, the dropped table and the tests did not",
    );
    const outputs = result.steps.flatMap((step) => step.toolResults.map((entry) => String(entry.output)));
    assert.match(outputs[1] as string, /needs a person's approval/);
    assert.match(outputs[2] as string, /Rule S1: Never drop a table\. The run is stopped/);
    assert.match(outputs[3] as string, /^\[SHIELD\] Blocked run_tests\(\)\. The run is stopped/);
    assert.equal(result.text, "Stopped.", "a stopped run may end");
  });

  it("refuses to wrap a tool without execute (the caller would run it unseen)", () => {
    const guard = new ToolGuard(createMonitor(travel, { task }));
    assert.throws(
      () => shieldAiTools({ book_train: tool({ inputSchema: routeSchema }) }, guard),
      /tool book_train has no execute/,
    );
  });
});
