import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// The rulebook of ../shared/conformance/vectors.md §5 (ltl-harness), as a mentor policy.
function policyWith(rules: string): string {
  return `
policy: refunds
manual:
  R1: Verify the customer before any refund.
  R2: Every case ends with a refund or an escalation.
  R3: After an escalation, never refund.
  R4: Refund the customer.
tools:
  lookup: {parameters: {customer: string}}
  verify:
    parameters: {customer: string}
    output: text
    labels: {ok: the customer is verified, fail: verification failed}
  refund: {parameters: {customer: string}}
  escalate: {parameters: {customer: string}}
propositions:
  lookup: {tool: lookup}
  verify_ok: {tool: verify, outcome: "o.label == 'ok'"}
  refund: {tool: refund}
  escalate: {tool: escalate}
rules:
${rules}
`;
}

const seatbelt = policyWith(`
  - {id: R1, template: precedence, a: verify_ok, b: refund}
  - {id: R2, ltl: "F(refund | escalate)"}
`);

describe("conformance §5 monitor decisions", () => {
  const evaluator = new Evaluator(parsePolicy(seatbelt, "refunds.yaml"));
  const customer = { customer: "c1" };

  test("a refund is denied at the start; verifying is allowed, since not all its outcomes are doomed", () => {
    const start = new Conversation([]);
    assert.equal(evaluator.decide(start.messages, { name: "refund", arguments: customer }).verdict, "block");
    assert.equal(evaluator.decide(start.messages, { name: "verify", arguments: customer }).verdict, "allow");
  });

  test("after a successful verification the refund is allowed", () => {
    const verified = new Conversation([]).call("verify", customer, { label: "ok" });
    assert.equal(
      evaluator.decide(verified.messages, { name: "refund", arguments: customer }).verdict,
      "allow",
    );
  });

  test("finishing after a lookup leaves R2 open; after an escalation the run is satisfied", () => {
    const looked = new Conversation([]).call("lookup", customer);
    const next = evaluator.next(looked.messages);
    assert.equal(next.done.allowed, false);
    assert.deepEqual(
      next.openDuties.map((duty) => duty.rule),
      ["R2"],
    );
    looked.call("escalate", customer);
    assert.equal(evaluator.next(looked.messages).done.allowed, true);
  });
});

describe("joint traps", () => {
  test("Existence(refund) with NotSuccession(escalate, refund): escalating is a trap and is blocked", () => {
    const evaluator = new Evaluator(
      parsePolicy(
        policyWith(`
  - {id: R4, template: existence, a: refund}
  - {id: R3, template: notSuccession, a: escalate, b: refund}
`),
        "trap.yaml",
      ),
    );
    const start = new Conversation([]);
    const decision = evaluator.decide(start.messages, { name: "escalate", arguments: { customer: "c1" } });
    // Neither rule alone is violated for good after an escalation; together they cannot both hold.
    assert.equal(decision.verdict, "block");
    assert.deepEqual(decision.violations.map((finding) => finding.rule).sort(), ["R4"]);
    // The customer the blocked escalation names (its argument of the same name).
    assert.deepEqual(decision.advice?.call, { name: "refund", arguments: { customer: "c1" } });
    const next = evaluator.next(start.messages);
    const classes = Object.fromEntries(next.tools.map((tool) => [tool.name, tool.class]));
    assert.equal(classes.escalate, "unsafe");
    assert.equal(classes.refund, "progressing");
  });
});

describe("a boolean argument is repaired to its other value", () => {
  const policy = parsePolicy(
    `
policy: approvals
manual:
  A1: A refund needs the manager's approval flag set.
tools:
  refund:
    parameters: {customer: string, approved: boolean}
    repairable: [approved]
propositions:
  refund: {tool: refund}
rules: []
constraints:
  - {id: A1, on: refund, require: "a.approved == true"}
`,
    "approvals.yaml",
  );
  test("true and false are candidates though the parameter declares no enum", () => {
    const decision = new Evaluator(policy).decide([{ role: "user", content: "refund c1" }], {
      name: "refund",
      arguments: { customer: "c1", approved: false },
    });
    assert.equal(decision.verdict, "block");
    assert.deepEqual(decision.advice, {
      kind: "repair",
      call: { name: "refund", arguments: { customer: "c1", approved: true } },
    });
  });
});
