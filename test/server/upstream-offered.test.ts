import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import type { ChatTool } from "../../src/openai/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { Conversation } from "../support/conversation.js";
import { callsReply, type Script, ScriptedEndpoint } from "../support/scripted-endpoint.js";

// Proxy mode returns only calls the request offers: a tool of its `tools` (and its tool_choice),
// with arguments its parameters declare. A scripted upstream answers what the policy would allow
// but the request did not offer; the shield blocks it with a reason and generates again, as it
// does with a tool the policy does not declare. No model.

const toronto = { origin: "Toronto", destination: "Chicago" };
const tool = (name: string): ChatTool => ({
  type: "function",
  function: {
    name,
    parameters: {
      type: "object",
      properties: { origin: { type: "string" }, destination: { type: "string" } },
      required: ["origin", "destination"],
    },
  },
});
const start = () =>
  new Conversation([{ name: "request_travel", arguments: { ...toronto, urgent: false } }]).messages;

const toolCall = (name: string, args: Record<string, unknown>): Script =>
  callsReply([{ name, arguments: args }]);

interface Answer {
  choices: {
    message: { content: string | null; tool_calls?: { function: { name: string; arguments: string } }[] };
  }[];
  mentor: {
    blocked: number;
    attempts: {
      calls: { call: { name: string }; verdict: string; failClosed?: string; feedback?: string }[];
    }[];
  };
}

describe("proxy mode returns only the calls a request offers", () => {
  const endpoint = new ScriptedEndpoint();
  const servers: Partial<Record<"prompt" | "token", RunningServer>> = {};
  before(async () => {
    const url = await endpoint.start();
    for (const shield of ["prompt", "token"] as const)
      servers[shield] = await startServer({
        port: 0,
        logger: false,
        shield,
        labeler: "rules",
        trustClientGrounding: true,
        upstream: { url, model: "scripted" },
      });
  });
  after(async () => {
    for (const server of Object.values(servers)) await server?.close();
    await endpoint.close();
  });
  beforeEach(() => endpoint.reset());

  const chat = async (
    shield: "prompt" | "token" | "none",
    body: { tools: ChatTool[]; tool_choice?: unknown },
  ): Promise<Answer> => {
    const server = servers[shield === "token" ? "token" : "prompt"] as RunningServer;
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "scripted", messages: start(), mentor: { shield }, ...body }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Answer;
  };
  const returned = (answer: Answer) =>
    (answer.choices[0]?.message.tool_calls ?? []).map((call) => [
      call.function.name,
      JSON.parse(call.function.arguments),
    ]);
  const firstCall = (answer: Answer) => answer.mentor.attempts[0]?.calls[0];

  for (const shield of ["prompt", "token"] as const) {
    it(`${shield}: a call to a tool the request did not offer is blocked with the reason, though the policy allows it`, async () => {
      // The policy allows check_distance first; this request offers only check_seats and book_train.
      endpoint.script = [toolCall("check_distance", toronto), toolCall("check_seats", toronto)];
      const answer = await chat(shield, { tools: [tool("check_seats"), tool("book_train")] });
      assert.deepEqual(returned(answer), [["check_seats", toronto]]);
      assert.equal(answer.mentor.blocked, 1);
      assert.equal(firstCall(answer)?.verdict, "block");
      assert.match(firstCall(answer)?.failClosed ?? "", /check_distance is not a tool this request offers/);
      assert.match(
        firstCall(answer)?.feedback ?? "",
        /^\[SHIELD\] Blocked check_distance: .*check_seats, book_train/,
      );
      // The regeneration went up with the shield's feedback.
      const second = endpoint.requests[1]?.body as { messages: { content?: string }[] };
      assert.match(second.messages.at(-1)?.content ?? "", /^\[SHIELD\] Blocked check_distance/);
    });

    it(`${shield}: a call with an argument its tool does not declare is blocked, not returned with it`, async () => {
      endpoint.script = [
        toolCall("check_distance", { ...toronto, upgrade: "business" }),
        toolCall("check_distance", toronto),
      ];
      const answer = await chat(shield, { tools: [tool("check_distance"), tool("book_train")] });
      assert.deepEqual(returned(answer), [["check_distance", toronto]]);
      assert.match(firstCall(answer)?.failClosed ?? "", /check_distance has no parameter upgrade/);
    });
  }

  it("prompt: a call other than the tool tool_choice names is blocked", async () => {
    endpoint.script = [toolCall("check_distance", toronto), toolCall("check_seats", toronto)];
    const answer = await chat("prompt", {
      tools: [tool("check_distance"), tool("check_seats")],
      tool_choice: { type: "function", function: { name: "check_seats" } },
    });
    assert.deepEqual(returned(answer), [["check_seats", toronto]]);
    assert.match(firstCall(answer)?.failClosed ?? "", /check_distance is not a tool this request offers/);
  });

  it("none (generate once, nothing regenerated): such a call is still not returned, only recorded", async () => {
    endpoint.script = [toolCall("check_distance", { ...toronto, upgrade: "business" })];
    const answer = await chat("none", { tools: [tool("check_distance")] });
    assert.deepEqual(returned(answer), []);
    assert.equal(answer.choices[0]?.message.content, null);
    assert.equal(endpoint.requests.length, 1);
    assert.equal(firstCall(answer)?.call.name, "check_distance");
    assert.match(firstCall(answer)?.failClosed ?? "", /no parameter upgrade/);
  });
});
