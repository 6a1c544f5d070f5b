import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import type { ChatTool } from "../../src/openai/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { hermesSyntax } from "../../src/shield/upstream/index.js";
import { Conversation } from "../support/conversation.js";
import { Gbnf } from "../support/gbnf.js";
import { reply, type Script, ScriptedEndpoint } from "../support/scripted-endpoint.js";

// The token shield over an upstream (`mentor serve --upstream URL --shield token`): a real local
// HTTP server stands in for the engine, keeps the request bodies mentor sends it and answers
// scripted completions. No model.

const toronto = { origin: "Toronto", destination: "Chicago" };
const route = { origin: { type: "string" }, destination: { type: "string" } };
const tool = (name: string, extra: Record<string, unknown> = {}): ChatTool => ({
  type: "function",
  function: {
    name,
    parameters: { type: "object", properties: { ...route, ...extra }, required: ["origin", "destination"] },
  },
});
const tools = [
  tool("check_distance"),
  tool("check_seats"),
  tool("book_train"),
  tool("book_flight", { travel_class: { type: "string", enum: ["economy", "business"] } }),
];
const start = () => new Conversation([{ name: "request_travel", arguments: { ...toronto, urgent: false } }]);

const completion = (message: Record<string, unknown>, finish: string): Script =>
  reply(200, {
    id: "up",
    object: "chat.completion",
    created: 0,
    model: "scripted",
    choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", ...message } }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
/** The upstream parsed the call itself (OpenAI's tool_calls). */
const toolCall = (name: string, args: Record<string, unknown>): Script =>
  completion(
    {
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name, arguments: JSON.stringify(args) } }],
    },
    "tool_calls",
  );
/** The upstream answered the call as text (tool_choice none under a grammar, as llama.cpp does). */
const textCall = (name: string, args: Record<string, unknown>): Script =>
  completion(
    {
      content: `${hermesSyntax.prefix}${name}${hermesSyntax.paramsPrefix}${JSON.stringify(args)}${hermesSyntax.suffix}`,
    },
    "stop",
  );

interface Body {
  tools?: ChatTool[];
  tool_choice?: unknown;
  grammar?: string;
  messages: { role: string; content?: string }[];
}

describe("the token shield over an upstream endpoint", () => {
  const endpoint = new ScriptedEndpoint();
  let servers: { plain: RunningServer; grammar: RunningServer };
  before(async () => {
    const url = await endpoint.start();
    const options = {
      port: 0,
      logger: false,
      shield: "token" as const,
      labeler: "rules" as const,
      trustClientGrounding: true,
    };
    servers = {
      plain: await startServer({ ...options, upstream: { url, model: "scripted" } }),
      grammar: await startServer({ ...options, upstream: { url, model: "scripted", grammar: "gbnf" } }),
    };
  });
  after(async () => {
    await servers.plain.close();
    await servers.grammar.close();
    await endpoint.close();
  });
  beforeEach(() => endpoint.reset());

  const chat = async (server: RunningServer, messages: unknown[]) => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "scripted", messages, tools, tool_choice: "auto" }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as {
      choices: { message: { tool_calls?: { function: { name: string; arguments: string } }[] } }[];
      mentor: {
        blocked: number;
        attempts: {
          finishReason: string;
          calls: { verdict: string; rules: string[] }[];
          done?: { refused: boolean };
        }[];
      };
    };
  };
  const sent = (index: number) =>
    endpoint.requests.filter((entry) => entry.path.endsWith("/chat/completions"))[index]
      ?.body as unknown as Body;
  const names = (body: Body) => (body.tools ?? []).map((entry) => entry.function.name);

  it("sends only the safe tools with tool_choice required, and still blocks an unsafe call the upstream returns", async () => {
    // An upstream that ignores what it is sent: the booking it returns is blocked all the same.
    endpoint.script = [
      toolCall("book_flight", { ...toronto, travel_class: "economy" }),
      toolCall("check_distance", toronto),
    ];
    const answer = await chat(servers.plain, start().messages);
    assert.deepEqual(names(sent(0)), ["check_distance", "check_seats"]);
    assert.equal(sent(0).tool_choice, "required");
    assert.equal(sent(0).grammar, undefined);
    assert.equal(answer.mentor.blocked, 1);
    assert.deepEqual(
      answer.mentor.attempts[0]?.calls.map((call) => [call.verdict, call.rules]),
      [["block", ["P1", "P5"]]],
    );
    assert.equal(answer.choices[0]?.message.tool_calls?.[0]?.function.name, "check_distance");
    // The regeneration went up with the shield's feedback, and the same narrowed tools.
    assert.match(sent(1).messages.at(-1)?.content ?? "", /^\[SHIELD\] Blocked book_flight/);
    assert.deepEqual(names(sent(1)), ["check_distance", "check_seats"]);
  });

  it("a call the upstream writes as text (no tool parsing, as llama-cpp-python's templates) is read and judged", async () => {
    endpoint.script = [textCall("book_train", toronto), textCall("check_distance", toronto)];
    const answer = await chat(servers.plain, start().messages);
    assert.deepEqual(
      answer.mentor.attempts[0]?.calls.map((call) => [call.verdict, call.rules]),
      [["block", ["P1"]]],
    );
    assert.equal(answer.choices[0]?.message.tool_calls?.[0]?.function.name, "check_distance");
  });

  it("a text call cut by max_tokens is a cut answer (finish_reason length), not a call", async () => {
    endpoint.script = [
      completion({ content: `${hermesSyntax.prefix}book_train", "arguments": {"origin": "Tor` }, "length"),
      toolCall("check_distance", toronto),
    ];
    const answer = await chat(servers.plain, start().messages);
    // Cut while a duty is open: refused like any answer without a call, then generated again.
    assert.deepEqual(
      answer.mentor.attempts.map((attempt) => [
        attempt.finishReason,
        attempt.calls.length,
        attempt.done?.refused,
      ]),
      [
        ["length", 0, true],
        ["tool_calls", 1, undefined],
      ],
    );
    assert.equal(answer.choices[0]?.message.tool_calls?.[0]?.function.name, "check_distance");
  });

  it("narrows the enum to the allowed values; a business class returned anyway is blocked", async () => {
    const ready = start()
      .call("check_distance", toronto, { label: "long" })
      .call("check_seats", toronto, { label: "available" }).messages;
    endpoint.script = [
      toolCall("book_flight", { ...toronto, travel_class: "business" }),
      toolCall("book_flight", { ...toronto, travel_class: "economy" }),
    ];
    const answer = await chat(servers.plain, ready);
    const flight = sent(0).tools?.find((entry) => entry.function.name === "book_flight");
    assert.deepEqual(flight?.function.parameters?.properties?.travel_class?.enum, ["economy"]);
    assert.equal(sent(0).tool_choice, "required");
    assert.deepEqual(
      answer.mentor.attempts[0]?.calls.map((call) => [call.verdict, call.rules]),
      [["block", ["P3"]]],
    );
    assert.deepEqual(JSON.parse(answer.choices[0]?.message.tool_calls?.[0]?.function.arguments ?? "{}"), {
      ...toronto,
      travel_class: "economy",
    });
  });

  it("with --upstream-grammar gbnf: a grammar that cannot spell the unsafe name or value, calls read from the text", async () => {
    endpoint.script = [textCall("book_train", toronto), textCall("check_distance", toronto)];
    const first = await chat(servers.grammar, start().messages);
    assert.deepEqual(names(sent(0)), ["check_distance", "check_seats"]);
    // llama.cpp's server takes a grammar with tools only under tool_choice none.
    assert.equal(sent(0).tool_choice, "none");
    const grammar = new Gbnf(sent(0).grammar as string);
    for (const name of ["book_train", "book_flight"]) {
      assert.equal(grammar.viablePrefix(`${hermesSyntax.prefix}${name}`), false, name);
      assert.equal(
        grammar.matches(
          `${hermesSyntax.prefix}${name}", "arguments": {"origin": "Toronto", "destination": "Chicago"}}\n</tool_call>`,
        ),
        false,
      );
    }
    assert.ok(
      grammar.matches(
        `${hermesSyntax.prefix}check_distance", "arguments": {"origin": "Toronto", "destination": "Chicago"}}\n</tool_call>`,
      ),
    );
    // Open duties: an answer without a call is not in the language.
    assert.equal(grammar.matches("All done."), false);
    // The text call the upstream wrote anyway is read and blocked; the next one is returned as a call.
    assert.deepEqual(
      first.mentor.attempts[0]?.calls.map((call) => [call.verdict, call.rules]),
      [["block", ["P1"]]],
    );
    assert.equal(first.choices[0]?.message.tool_calls?.[0]?.function.name, "check_distance");

    endpoint.reset();
    const ready = start()
      .call("check_distance", toronto, { label: "long" })
      .call("check_seats", toronto, { label: "available" }).messages;
    endpoint.script = [textCall("book_flight", { ...toronto, travel_class: "economy" })];
    const second = await chat(servers.grammar, ready);
    const flightGrammar = new Gbnf(sent(0).grammar as string);
    const flight = (travelClass: string) =>
      `${hermesSyntax.prefix}book_flight", "arguments": {"origin": "Toronto", "destination": "Chicago", "travel_class": "${travelClass}"}}\n</tool_call>`;
    assert.ok(flightGrammar.matches(flight("economy")));
    assert.equal(flightGrammar.matches(flight("business")), false);
    assert.equal(flightGrammar.viablePrefix(flight("b").slice(0, -'"}}\n</tool_call>'.length)), false);
    assert.equal(second.mentor.blocked, 0);
    assert.equal(second.choices[0]?.message.tool_calls?.[0]?.function.name, "book_flight");
  });
});
