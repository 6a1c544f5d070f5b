import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { type Decision, Evaluator } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { SolverClient } from "../../src/smt/index.js";
import { Conversation } from "../support/conversation.js";
import { historyPolicy } from "../support/history-policy.js";

const evaluator = new Evaluator(parsePolicy(historyPolicy, "history.yaml"));

/** Order A1 (limit 100) looked up and checked for `checked`; then the refunds of `amounts`. */
function refunded(amounts: number[], checked = 50): Conversation {
  const conversation = new Conversation([{ name: "request_refund", arguments: { order: "A1", limit: 100 } }])
    .call("lookup", { order: "A1" }, { json: { balance: 80 } })
    .call("check", { order: "A1", amount: checked }, { json: { ok: true } });
  for (const amount of amounts)
    conversation.call("refund", { order: "A1", amount, reason: "late" }, { json: { amount } });
  return conversation;
}

const refund = (amount: number, reason = "late") => ({
  name: "refund",
  arguments: { order: "A1", amount, reason } as Record<string, Value>,
});
const rules = (decision: Decision) => ({
  violations: decision.violations.map((finding) => finding.rule).sort(),
  warnings: decision.warnings.map((finding) => finding.rule).sort(),
});

describe("history functions read the calls before the call judged", () => {
  test("count: the call judged is not counted (the second refund is allowed, the third is not)", () => {
    assert.ok(!rules(evaluator.decide(refunded([30]).messages, refund(20))).violations.includes("H3"));
    assert.ok(rules(evaluator.decide(refunded([30, 20]).messages, refund(10))).violations.includes("H3"));
  });

  test("values: the call's own argument is not among them", () => {
    assert.ok(!rules(evaluator.decide(refunded([]).messages, refund(30))).violations.includes("H4"));
    assert.deepEqual(rules(evaluator.decide(refunded([30]).messages, refund(30))).violations, ["H4"]);
    assert.deepEqual(rules(evaluator.decide(refunded([30]).messages, refund(20))).violations, []);
  });

  test("last: a constraint on a tool reads the result of its previous call", () => {
    assert.deepEqual(rules(evaluator.decide(refunded([30]).messages, refund(40))).violations, ["H2"]);
    assert.equal(evaluator.decide(refunded([30]).messages, refund(20)).verdict, "allow");
  });

  test("a history function in a `when`: the rules and the constraints agree on the first refund and the second", () => {
    const first = evaluator.decide(refunded([]).messages, refund(30, ""));
    assert.deepEqual(rules(first), { violations: [], warnings: [] });
    const second = evaluator.decide(refunded([30]).messages, refund(20, ""));
    assert.deepEqual(rules(second), { violations: ["H5"], warnings: ["H7"] });
    assert.deepEqual(rules(evaluator.decide(refunded([30]).messages, refund(20))), {
      violations: [],
      warnings: ["H7"],
    });
  });

  test("held reads the task: a check within the request's limit holds, one above it does not", () => {
    assert.ok(!rules(evaluator.decide(refunded([], 50).messages, refund(30))).violations.includes("H6"));
    assert.ok(rules(evaluator.decide(refunded([], 150).messages, refund(30))).violations.includes("H6"));
  });

  test("the reference computation (rebuilt runs) gives the same verdicts", () => {
    const reference = new Evaluator(evaluator.policy, { incremental: false });
    for (const [amounts, proposed] of [
      [[], refund(30, "")],
      [[30], refund(30)],
      [[30], refund(40)],
      [[30], refund(20, "")],
      [[30, 20], refund(10)],
    ] as const) {
      const messages = refunded([...amounts]).messages;
      assert.deepEqual(
        rules(reference.decide(messages, proposed)),
        rules(evaluator.decide(messages, proposed)),
        JSON.stringify(proposed),
      );
    }
  });

  test("next: a value is classed by the history before the call (an amount not refunded yet is not unsafe)", () => {
    const amounts = (messages: unknown) =>
      evaluator
        .next(messages)
        .arguments.find((entry) => entry.tool === "refund" && entry.argument === "amount");
    assert.deepEqual(amounts(refunded([]).messages)?.unsafe ?? [], []);
    // After a refund of 30: 30 again breaks H4; 80 (the balance looked up) and 100 (the task's limit) exceed it (H2).
    assert.deepEqual(
      [...((amounts(refunded([30]).messages)?.unsafe ?? []) as number[])].sort((x, y) => x - y),
      [30, 80, 100],
    );
  });

  describe("repair", () => {
    const solver = new SolverClient({ timeoutMs: 20_000 });
    after(() => solver.close());

    test("the solver repairs against the previous refund, not against the call itself", async () => {
      const decision = await evaluator.decideWithRepair(refunded([30]).messages, refund(40), solver);
      assert.deepEqual(rules(decision).violations, ["H2"]);
      assert.equal(decision.advice?.kind, "repair");
      const amount = decision.advice?.call.arguments.amount as number;
      assert.ok(amount <= 30 && amount !== 30, String(amount));
      assert.equal(
        evaluator.decide(refunded([30]).messages, decision.advice?.call ?? refund(0)).verdict,
        "allow",
      );
    });
  });
});

describe("a constraint that reads what a check was asked: the check advised", () => {
  // As SOPBench hotel's REASON_checked: the reason of a room change is one a check accepted.
  const checks = new Evaluator(
    parsePolicy(
      `
policy: checks
manual:
  R1: A room change follows a check of its reason.
  C1: The reason of a room change is one the hotel's check was asked about.
tools:
  change_room: {parameters: {reason: string}}
  check_reason: {parameters: {reason: string}}
propositions:
  change: {tool: change_room}
  checked: {tool: check_reason}
rules:
  - {id: R1, ltl: "G(change -> O checked)"}
constraints:
  - {id: C1, on: change, require: "a.reason in values('check_reason', 'reason')"}
`,
      "checks.yaml",
    ),
  );
  const change = (reason: string) => ({ name: "change_room", arguments: { reason } });

  test("the check of the reason the blocked call gives; again for another reason, never a repeat", () => {
    const none = new Conversation([]);
    const first = checks.decide(none.messages, change("noise"));
    assert.deepEqual(
      first.violations.map((finding) => finding.rule),
      ["R1", "C1"],
    );
    assert.deepEqual(first.advice?.call, { name: "check_reason", arguments: { reason: "noise" } });
    const checked = none.call("check_reason", { reason: "noise" }, { json: { ok: true } });
    assert.equal(checks.decide(checked.messages, change("noise")).verdict, "allow");
    const other = checks.decide(checked.messages, change("view"));
    assert.deepEqual(
      other.violations.map((finding) => finding.rule),
      ["C1"],
    );
    assert.deepEqual(other.advice, {
      kind: "prerequisite",
      call: { name: "check_reason", arguments: { reason: "view" } },
      reads: ["C1"],
    });
  });
});
