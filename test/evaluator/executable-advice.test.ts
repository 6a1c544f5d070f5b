import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// SOPBench's bank: a card application needs the account to exist, which a login or an existence
// check shows. The user gave a username but no identification, so the login is a call the agent
// cannot make without asking; the existence check it can make now, and it is the advice.
const policy = parsePolicy(
  `policy: card_desk
manual:
  EXISTS: The username must exist before a card application.
tools:
  login_user:
    parameters: {username: string, identification: string}
    output: text
    labels: {ok: logged in, failed: not logged in}
  check_username_exist:
    parameters: {username: string}
    output: text
    labels: {exists: it exists, missing: it does not}
  apply_credit_card:
    parameters: {username: string, monthly_income: number}
task:
  name_account: {parameters: {username: string}}
  give_identification: {parameters: {identification: string}}
entities:
  account: {from: {name_account: {u: username}}}
propositions:
  logged_in(account): {tool: login_user, when: "a.username == u", outcome: "o.label == 'ok'"}
  exists(account): {tool: check_username_exist, when: "a.username == u", outcome: "o.label == 'exists'"}
  apply(account): {tool: apply_credit_card, when: "a.username == u"}
rules:
  - {id: EXISTS, ltl: "G(apply(account) -> O(exists(account) | logged_in(account)))"}
`,
  "card.yaml",
);

describe("advice the agent can make with what is known comes first", () => {
  const evaluator = new Evaluator(policy);
  const apply = { name: "apply_credit_card", arguments: { username: "john_doe", monthly_income: 4500 } };

  test("of two checks that unblock the call, the one with every argument known", () => {
    const messages = new Conversation([{ name: "name_account", arguments: { username: "john_doe" } }])
      .messages;
    const decision = evaluator.decide(messages, apply);
    assert.equal(decision.verdict, "block");
    assert.deepEqual(decision.advice, {
      kind: "prerequisite",
      call: { name: "check_username_exist", arguments: { username: "john_doe" } },
      unblocks: true,
    });
  });

  test("where the request gives the identification too, the first declared check, filled", () => {
    const messages = new Conversation([
      { name: "name_account", arguments: { username: "john_doe" } },
      { name: "give_identification", arguments: { identification: "ID-7" } },
    ]).messages;
    assert.deepEqual(evaluator.decide(messages, apply).advice?.call, {
      name: "login_user",
      arguments: { username: "john_doe", identification: "ID-7" },
    });
  });
});
