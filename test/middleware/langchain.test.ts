import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { StructuredTool, tool } from "@langchain/core/tools";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { z } from "zod";
import { createMonitor } from "../../src/evaluator/index.js";
import { shieldLangChainTools, ToolGuard } from "../../src/middleware/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { questions, runRecords } from "../support/monitor-records.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// The LangChain JS tools wrapper, driven the way LangChain's tool-calling loops drive tools: the
// model's AIMessage tool calls are invoked as ToolCalls and answered by ToolMessages.

const travel = loadPolicy(travelPolicyFile);
const task = [
  { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } },
];
const route = z.object({ origin: z.string(), destination: z.string() });
const toChicago = { origin: "Toronto", destination: "Chicago" };

function travelTools(ran: string[]) {
  return [
    tool(
      async () => {
        ran.push("check_distance");
        return "The distance is 843 km.";
      },
      { name: "check_distance", description: "Distance between two cities.", schema: route },
    ),
    tool(
      async () => {
        ran.push("book_train");
        return JSON.stringify({ status: "confirmed" });
      },
      { name: "book_train", description: "Book a train.", schema: route },
    ),
  ];
}

describe("the LangChain JS tools wrapper", () => {
  it("a refused call is not run and its ToolMessage is the shield's feedback; allowed ones run and are recorded", async () => {
    const ran: string[] = [];
    const records = mkdtempSync(join(tmpdir(), "mentor-langchain-records-"));
    after(() => rmSync(records, { recursive: true, force: true }));
    const guard = new ToolGuard(createMonitor(travel, { task, records }));
    const tools = shieldLangChainTools(travelTools(ran), guard);
    assert.ok(tools[0] instanceof StructuredTool);
    assert.equal(tools[1]?.name, "book_train");
    // The model's messages, scripted as LangChain's fake chat model streams them.
    const script = [
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "book_train", args: toChicago }] }),
      new AIMessage({ content: "", tool_calls: [{ id: "c2", name: "check_distance", args: toChicago }] }),
      new AIMessage({ content: "", tool_calls: [{ id: "c3", name: "book_train", args: toChicago }] }),
    ];
    const messages: BaseMessage[] = [new HumanMessage("Book me a train from Toronto to Chicago.")];
    for (const scripted of script) {
      const model = new FakeStreamingChatModel({ chunks: [scripted as never], sleep: 0 });
      const reply = (await model.invoke(messages)) as AIMessage;
      messages.push(reply);
      for (const call of reply.tool_calls ?? []) {
        const chosen = tools.find((candidate) => candidate.name === call.name);
        messages.push((await chosen?.invoke({ ...call, type: "tool_call" })) as ToolMessage);
      }
    }
    const results = messages.filter((message): message is ToolMessage => message instanceof ToolMessage);
    assert.deepEqual(
      results.map((message) => message.tool_call_id),
      ["c1", "c2", "c3"],
    );
    assert.match(
      String(results[0]?.content),
      /^\[SHIELD\] Blocked book_train\(origin="Toronto", destination="Chicago"\)\. Rule P1/,
    );
    assert.equal(results[1]?.content, "The distance is 843 km.");
    assert.equal(results[2]?.content, '{"status":"confirmed"}');
    assert.deepEqual(ran, ["check_distance", "book_train"]);
    assert.equal(guard.monitor.checkDone().allowed, true);
    // The run's flight records (`records`), as the dashboard reads them.
    assert.deepEqual(questions(runRecords(records)), [
      ["book_train", "block", ["P1"]],
      ["check_distance", "allow", []],
      ["book_train", "allow", []],
      ["end", true],
    ]);
  });

  it("the guard's done check gives a custom loop the shield's refusal while duties are open", () => {
    const guard = new ToolGuard(createMonitor(travel, { task }));
    assert.match(guard.doneRefusal() ?? "", /^\[SHIELD\] You cannot finish yet\. Open duties: P4/);
  });
});
