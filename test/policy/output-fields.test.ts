import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// Values read from a text output (docs/policy.md, "Values read from a text output"): a balance
// written as `(True, 650)` is compared with the amount of the transfer it has to cover.
const policyText = `policy: balance_desk
manual:
  CHECK: Check the balance before a transfer.
  COVER: The balance covers the amount transferred.
tools:
  get_balance:
    parameters: {username: string}
    output: text
    labels: {ok: the balance, failed: no such account}
    labeler: {rules: [{label: ok, regex: '^\\(True,'}, {label: failed, regex: '^False$'}]}
    fields:
      balance: {number: '^\\(True,\\s*(-?[\\d,.]+)\\)$'}
      currency: {text: '\\b([A-Z]{3})\\b'}
  transfer:
    parameters: {username: string, amount: number}
    output: text
    labels: {ok: sent}
    labeler: {rules: [{label: ok, regex: '^True$'}]}
task:
  open_request: {parameters: {username: string}}
entities:
  account: {from: {open_request: {u: username}}}
propositions:
  checked(account): {tool: get_balance, when: "a.username == u", outcome: "o.label == 'ok'"}
  transfer(account): {tool: transfer, when: "a.username == u"}
rules:
  - {id: CHECK, ltl: "G(transfer(account) -> O checked(account))"}
constraints:
  - id: COVER
    on: transfer(account)
    require: "last('get_balance').balance != null && a.amount <= last('get_balance').balance"
`;

const user = { username: "ana" };
const task = [{ name: "open_request", arguments: user }];
const evaluator = new Evaluator(parsePolicy(policyText, "desk.yaml"));
const afterBalance = (text: string): Conversation =>
  new Conversation(task, "Send 300 from ana's account.").call("get_balance", user, { label: "ok", text });
const verdict = (messages: unknown, amount: number): { verdict: string; rules: string[] } => {
  const decision = evaluator.decide(messages, { name: "transfer", arguments: { ...user, amount } });
  return { verdict: decision.verdict, rules: decision.violations.map((finding) => finding.rule) };
};

describe("values read from a text output", () => {
  it("a constraint compares an argument with a number read from the output", () => {
    const seen = afterBalance("(True, 1,250.5)").messages;
    assert.deepEqual(verdict(seen, 300), { verdict: "allow", rules: [] });
    assert.deepEqual(verdict(seen, 1250.5), { verdict: "allow", rules: [] });
    assert.deepEqual(verdict(seen, 1300), { verdict: "block", rules: ["COVER"] });
  });

  it("fails closed where nothing was read: no lookup, or a value that is not a number", () => {
    const none = new Conversation(task, "Send 300.").messages;
    assert.deepEqual(verdict(none, 300), { verdict: "block", rules: ["CHECK", "COVER"] });
    assert.deepEqual(verdict(afterBalance("(True, unknown)").messages, 300), {
      verdict: "block",
      rules: ["COVER"],
    });
  });

  it("the latest lookup counts, and a flight record's fields read back as they were", () => {
    const twice = afterBalance("(True, 1000)").call("get_balance", user, {
      label: "ok",
      text: "(True, 100)",
    });
    assert.equal(verdict(twice.messages, 300).verdict, "block");
    // A flight record keeps the label and the values read, not the text.
    const recorded = afterBalance("label: ok").messages;
    const tool = recorded.at(-1) as Record<string, unknown>;
    tool.mentor = { label: "ok", fields: { balance: 1000, currency: null } };
    assert.equal(verdict(recorded, 300).verdict, "allow");
    tool.mentor = { label: "ok", fields: { balanse: 1000 } };
    assert.throws(
      () => verdict(recorded, 300),
      /mentor\.fields must be an object of get_balance's fields \(balance, currency\)/,
    );
  });

  it("a misspelt field, a proposition reading a field, and bad declarations are errors with their places", () => {
    const broken = policyText
      .replace("a.amount <= last('get_balance').balance\"", "a.amount <= last('get_balance').balanse\"")
      .replace("outcome: \"o.label == 'ok'\"", 'outcome: "o.balance > 0"')
      .replace(
        "      currency: {text: '\\b([A-Z]{3})\\b'}",
        "      label: {text: '(x)'}\n      code: {text: 'x', number: '(1)'}\n      name: {text: 'no group'}",
      )
      .replace("task:\n", "  lookup:\n    fields: {x: {text: '(x)'}}\ntask:\n");
    assert.throws(
      () => parsePolicy(broken, "desk.yaml"),
      (error: unknown) => {
        assert.ok(error instanceof MentorError);
        assert.match(error.message, /unknown field 'balanse'/);
        assert.match(error.message, /desk\.yaml:\d+:\d+.*'balance'/);
        assert.match(error.message, /the field name label is the output's label/);
        assert.match(
          error.message,
          /output field code needs exactly one of number, text \(found number, text\)/,
        );
        assert.match(error.message, /output field name: its regex needs a group/);
        assert.match(error.message, /tool lookup reads fields from its output but its output is not text/);
        return true;
      },
    );
  });
});
