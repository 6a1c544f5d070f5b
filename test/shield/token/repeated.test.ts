import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { type GenerationRequest, givenGrounding, runTurn } from "../../../src/agent/index.js";
import { Evaluator } from "../../../src/evaluator/index.js";
import type { ChatMessage } from "../../../src/openai/index.js";
import { loadPolicy, parsePolicy } from "../../../src/policy/index.js";
import { planGeneration, shieldSetsFor, turnSets } from "../../../src/shield/token/index.js";
import { Conversation } from "../../support/conversation.js";
import { ScriptedGenerator, type Step } from "../../support/scripted-generator.js";
import { travelPolicyFile, travelTool } from "../../support/tiny-travel.js";

// A repeat of a call whose outcome is a fact tells nothing new: the token shield steers a name
// that can only become it to the call that progresses instead (SOPBench: login ×10 to the limit).

const route = { origin: "Toronto", destination: "Chicago" };
const task = [{ name: "request_travel", arguments: { ...route, urgent: false } }];

function checked(label: string | null): Conversation {
  return new Conversation(task, "Book me a train from Toronto to Chicago.").call("check_distance", route, {
    text: label === null ? "no route found" : "720 km",
    label,
  });
}

describe("a tool whose every listed call repeats an observation", () => {
  const evaluator = new Evaluator(loadPolicy(travelPolicyFile));

  it("is marked by next once the call was made and answered, and steered to the progressing call", () => {
    const before = evaluator.next(new Conversation(task).messages);
    assert.equal(before.tools.find((tool) => tool.name === "check_distance")?.repeats, undefined);
    const conversation = checked("long");
    const next = evaluator.next(conversation.messages);
    assert.deepEqual(
      next.tools.filter((tool) => tool.repeats),
      [{ name: "check_distance", class: "neutral", repeats: true }],
    );
    const sets = shieldSetsFor(evaluator, conversation.messages, next);
    assert.deepEqual(sets.repeated, { to: "book_train", arguments: route, tools: ["check_distance"] });
  });

  it("is no repeat where the answer told nothing (no label) or the tool is volatile", () => {
    const unread = evaluator.next(checked(null).messages);
    assert.equal(unread.tools.find((tool) => tool.name === "check_distance")?.repeats, undefined);
    const volatile = new Evaluator(
      parsePolicy(
        readFileSync(travelPolicyFile, "utf8").replace(
          "description: Distance in km between two cities.",
          "description: Distance in km between two cities.\n    volatile: true",
        ),
        travelPolicyFile,
      ),
    );
    const next = volatile.next(checked("long").messages);
    assert.equal(next.tools.find((tool) => tool.name === "check_distance")?.repeats, undefined);
    assert.deepEqual(shieldSetsFor(volatile, checked("long").messages, next).repeated?.tools, []);
  });

  it("is left to the model where nothing progresses instead", () => {
    // The train booked: nothing is open, ending is the progressing move, and travel has no done tool.
    const booked = checked("long").call("book_train", route, { json: { status: "confirmed" } });
    const next = evaluator.next(booked.messages);
    assert.equal(next.done.allowed, true);
    assert.equal(next.tools.find((tool) => tool.name === "check_distance")?.repeats, true);
    assert.equal(shieldSetsFor(evaluator, booked.messages, next).repeated, undefined);
  });
});

describe("the turn's sets with a repeated tool", () => {
  const repeated = { to: "book_train", tools: ["check_distance"] };
  const tools = ["check_distance", "book_train"];

  it("leave the repeated tool out of what may be called, and redirect its name", () => {
    const turn = turnSets({ tools, sets: { repeated } });
    assert.deepEqual(turn.allowed, ["book_train"]);
    const plan = planGeneration(
      { messages: [], shield: { mode: "token", sets: { repeated } } },
      tools.map((name) => ({ name, parameters: { type: "object", properties: {} } })),
      { prefix: '<tool_call>\n{"name": "', paramsPrefix: '", "arguments": ', suffix: "}\n</tool_call>" },
    );
    assert.ok(typeof plan === "object");
    assert.deepEqual(plan.names, ["book_train"]);
    assert.deepEqual([...plan.redirects], [["check_distance", "book_train"]]);
  });

  it("keep the repeated tool allowed where the turn may not call the progressing one", () => {
    assert.deepEqual(turnSets({ tools, sets: { repeated, unsafeTools: ["book_train"] } }).allowed, [
      "check_distance",
    ]);
    const named = { type: "function", function: { name: "check_distance" } } as const;
    assert.deepEqual(turnSets({ tools, toolChoice: named, sets: { repeated } }).allowed, ["check_distance"]);
  });
});

describe("a turn whose call repeats an observation that next could not mark by name", () => {
  const evaluator = new Evaluator(loadPolicy(travelPolicyFile));
  const back = { origin: "Chicago", destination: "Toronto" };
  // Two routes asked for: check_distance has a call still to make, so the name stays the model's.
  const checkedOne = new Conversation(
    [task[0] as (typeof task)[number], { name: "request_travel", arguments: { ...back, urgent: false } }],
    "Book me a train from Toronto to Chicago and one back.",
  ).call("check_distance", route, { text: "720 km", label: "long" });
  const turn = async (steps: Step[]) => {
    const scripted = new ScriptedGenerator(steps);
    const generator = {
      tokenShield: true,
      generate: (request: GenerationRequest) => scripted.generate(request),
    };
    const result = await runTurn({
      messages: checkedOne.messages as ChatMessage[],
      tools: ["check_distance", "check_seats", "book_train", "book_flight"].map(travelTool),
      evaluator,
      grounder: givenGrounding,
      generator,
      mode: "token",
    });
    return { result, requests: scripted.requests };
  };

  it("is not returned: the turn generates again with the tool steered to the progressing call", async () => {
    const first = evaluator.next(checkedOne.messages);
    assert.equal(first.tools.find((tool) => tool.name === "check_distance")?.repeats, undefined);
    const { result, requests } = await turn([
      { calls: [{ name: "check_distance", arguments: route }] },
      { calls: [{ name: "book_train", arguments: route }] },
    ]);
    assert.equal(result.mentor.attempts[0]?.repeated, "check_distance");
    assert.deepEqual(requests[0]?.tokenShield?.sets.repeated?.tools, []);
    assert.deepEqual(requests[1]?.tokenShield?.sets.repeated?.tools, ["check_distance"]);
    assert.equal(result.message.tool_calls?.[0]?.function.name, "book_train");
  });

  it("leaves a call that asks something new alone", async () => {
    const { result } = await turn([{ calls: [{ name: "check_distance", arguments: back }] }]);
    assert.equal(result.mentor.attempts.length, 1);
    assert.equal(result.mentor.attempts[0]?.repeated, undefined);
    assert.deepEqual(JSON.parse(result.message.tool_calls?.[0]?.function.arguments ?? "{}"), back);
  });
});

describe("a repeat that is progress", () => {
  // The score is owed first, the card needs a login not undone by a logout: after login and
  // logout, logging in again repeats an observation and is progress all the same.
  const desk = new Evaluator(
    parsePolicy(
      `policy: login_desk
manual:
  SCORE: Read the user's score.
  APPLY: Apply for the card asked for.
  LOGIN: The user is logged in (and not logged out since) when applying.
tools:
  check_score: {parameters: {username: string}}
  login_user: {parameters: {username: string}}
  logout_user: {parameters: {username: string}}
  apply_credit_card: {parameters: {username: string}}
task:
  request_card: {asks_for: [apply_credit_card], parameters: {username: string}}
entities:
  account: {from: {request_card: {u: username}}}
propositions:
  score_read(account): {tool: check_score, when: "a.username == u"}
  logged_in(account): {tool: login_user, when: "a.username == u"}
  logged_out(account): {tool: logout_user, when: "a.username == u"}
  apply(account): {tool: apply_credit_card, when: "a.username == u"}
rules:
  - {id: SCORE, ltl: "F score_read(account)", applies_to: requested}
  - {id: APPLY, ltl: "F apply(account)", applies_to: requested}
  - {id: LOGIN, ltl: "G(apply(account) -> (!logged_out(account) S logged_in(account)))"}
`,
      "login-desk.yaml",
    ),
  );
  const ann = { username: "ann" };
  const loggedOut = new Conversation([{ name: "request_card", arguments: ann }])
    .call("login_user", ann, { json: true })
    .call("logout_user", ann, { json: true });

  it("is returned, not generated again toward the first duty's call", async () => {
    const next = desk.next(loggedOut.messages);
    assert.deepEqual(
      next.calls.filter(({ call }) => call.name === "login_user").map((verdict) => verdict.class),
      ["progressing"],
    );
    const scripted = new ScriptedGenerator([{ calls: [{ name: "login_user", arguments: ann }] }]);
    const result = await runTurn({
      messages: loggedOut.messages as ChatMessage[],
      tools: ["check_score", "login_user", "logout_user", "apply_credit_card"].map((name) => ({
        type: "function" as const,
        function: { name, parameters: { type: "object", properties: { username: { type: "string" } } } },
      })),
      evaluator: desk,
      grounder: givenGrounding,
      generator: { tokenShield: true, generate: (request: GenerationRequest) => scripted.generate(request) },
      mode: "token",
    });
    assert.equal(scripted.requests[0]?.tokenShield?.sets.repeated?.to, "check_score");
    assert.equal(result.mentor.attempts.length, 1);
    assert.equal(result.message.tool_calls?.[0]?.function.name, "login_user");
  });
});
