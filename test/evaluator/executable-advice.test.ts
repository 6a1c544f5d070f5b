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

// SOPBench's healthcare: adding a provider needs a login and an active policy, which a lookup
// shows, and the lookup itself needs the login. Among sixty other lookups behind the same login
// (they share its component of the game, so the search cannot set them aside) the search for the
// whole sequence (login, lookup, add) runs out of its share of the budget, even from the login
// alone; the login, after which fewer of the same rules block the call, is still the step toward it.
describe("where several rules block a call, a step that leaves fewer of them blocking", () => {
  const lookups = Array.from({ length: 60 }, (_, index) => `lookup_${index}`);
  const policy = parsePolicy(
    `policy: provider_desk
manual:
  LOGIN: The user is logged in before a provider is added.
  ACTIVE: The policy is active before a provider is added.
  LOOKUP_LOGIN: The user is logged in before the policy is looked up.
${lookups.map((name) => `  ${name.toUpperCase()}: The user is logged in before ${name}.`).join("\n")}
tools:
  login_user:
    parameters: {username: string}
    output: text
    labels: {ok: logged in, failed: not logged in}
${lookups.map((name) => `  ${name}: {parameters: {username: string}, output: text, labels: {found: found, missing: missing}}`).join("\n")}
  get_policy_details:
    parameters: {username: string}
    output: text
    labels: {active: the policy is active, inactive: it is not}
  add_authorized_provider:
    parameters: {username: string, provider_id: string}
task:
  name_account: {parameters: {username: string}}
entities:
  account: {from: {name_account: {u: username}}}
propositions:
  logged_in(account): {tool: login_user, when: "a.username == u", outcome: "o.label == 'ok'"}
  looked_up(account): {tool: get_policy_details, when: "a.username == u"}
  active(account): {tool: get_policy_details, when: "a.username == u", outcome: "o.label == 'active'"}
  added(account): {tool: add_authorized_provider, when: "a.username == u"}
${lookups.map((name) => `  ${name}(account): {tool: ${name}, when: "a.username == u"}`).join("\n")}
rules:
  - {id: LOGIN, ltl: "G(added(account) -> O logged_in(account))"}
  - {id: ACTIVE, ltl: "G(added(account) -> O active(account))"}
  - {id: LOOKUP_LOGIN, ltl: "G(looked_up(account) -> O logged_in(account))"}
${lookups.map((name) => `  - {id: ${name.toUpperCase()}, ltl: "G(${name}(account) -> O logged_in(account))"}`).join("\n")}
`,
    "provider.yaml",
  );

  test("the login, advised as a prerequisite that does not unblock the call alone", () => {
    const messages = new Conversation([{ name: "name_account", arguments: { username: "henry" } }]).messages;
    const decision = new Evaluator(policy).decide(messages, {
      name: "add_authorized_provider",
      arguments: { username: "henry", provider_id: "p1" },
    });
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["LOGIN", "ACTIVE"],
    );
    assert.match(decision.searchStopped ?? "", /search for a sequence of steps/);
    assert.deepEqual(decision.advice, {
      kind: "prerequisite",
      call: { name: "login_user", arguments: { username: "henry" } },
    });
  });
});
