import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// SOPBench's healthcare: a user asks to add a provider and gives their identification. The duty is
// met by the addition, or excused by a login that failed with the identification the user gave
// (a login the agent wrote with another one, or with none, shows nothing about the request). On
// the token shield the model wrote the login with `identification: null`, it failed, and the
// failure excused the request: the model ended the conversation. Here the login's parameter is
// `password`: only the `when` says where the identification goes.
const policy = parsePolicy(
  `policy: provider_desk
manual:
  LOGIN: The user is logged in before a provider is added.
  U0: Add the provider asked for, unless the login with the user's identification failed.
tools:
  login_user:
    parameters: {username: string, password: string}
    output: text
    labels: {ok: logged in, failed: not logged in}
  add_provider:
    parameters: {username: string}
    output: text
    labels: {ok: added, failed: not added}
task:
  give_identification: {parameters: {identification: string}}
  request_addition: {parameters: {username: string}, asks_for: [add_provider]}
entities:
  account: {from: {request_addition: {u: username}}}
propositions:
  logged_in(account): {tool: login_user, when: "a.username == u", outcome: "o.label == 'ok'"}
  login_failed(account):
    tool: login_user
    when: "a.username == u && (task.give_identification.identification == null || a.password == task.give_identification.identification)"
    outcome: "o.label == 'failed'"
  add(account): {tool: add_provider, when: "a.username == u"}
  added(account): {tool: add_provider, when: "a.username == u", outcome: "o.label == 'ok'"}
rules:
  - {id: LOGIN, ltl: "G(add(account) -> O logged_in(account))"}
  - {id: U0, ltl: "F(added(account) | login_failed(account))", applies_to: requested}
`,
  "provider.yaml",
);

const task: { name: string; arguments: Record<string, Value> }[] = [
  { name: "give_identification", arguments: { identification: "hs-pass" } },
  { name: "request_addition", arguments: { username: "henry" } },
];
const failedLogin = (identification: string | null) =>
  new Conversation(task).call(
    "login_user",
    { username: "henry", password: identification },
    { text: "False", label: "failed" },
  );

describe("a failed login excuses a request only with the identification the user gave", () => {
  test("the login listed as progressing carries that identification: a `when` compares the argument with it", () => {
    const next = new Evaluator(policy).next(new Conversation(task).messages);
    const login = next.calls.find(
      (verdict) => verdict.call.name === "login_user" && verdict.class === "progressing",
    );
    assert.deepEqual(login?.call.arguments, { username: "henry", password: "hs-pass" });
  });

  test("a login that failed with another identification, or none, leaves the request owed", () => {
    const evaluator = new Evaluator(policy);
    for (const identification of [null, "guess"]) {
      const duties = evaluator.next(failedLogin(identification).messages).openDuties;
      assert.deepEqual(
        duties.map((duty) => duty.rule),
        ["U0"],
        String(identification),
      );
    }
    assert.deepEqual(evaluator.next(failedLogin("hs-pass").messages).openDuties, []);
  });
});
