import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { lintConstraints } from "../../src/game/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { SolverClient } from "../../src/smt/index.js";

const solver = new SolverClient({ timeoutMs: 20_000 });
after(() => solver.close());

function refunds(constraints: string): string {
  return `
policy: refunds
manual:
  R1: Refunds are at most 100.
  R2: Refunds are above 200.
  R3: Refunds stay within the case's limit.
  R4: Refunds exceed the case's limit.
  R5: Refunds carry a reason.
tools:
  refund: {parameters: {customer: string, amount: number, reason: string}}
task:
  open_case: {parameters: {customer: string, limit: number}}
entities:
  customer: {from: {open_case: {c: customer}}}
propositions:
  refund(customer): {tool: refund, when: "a.customer == c"}
rules: []
constraints:
${constraints}
`;
}

describe("lintConstraints", () => {
  test("two bounds that exclude each other are an error naming both, not the unrelated constraint", async () => {
    const policy = parsePolicy(
      refunds(`
  - {id: R1, on: "refund(customer)", require: "a.amount <= 100"}
  - {id: R5, on: "refund(customer)", require: "len(a.reason) > 0"}
  - {id: R2, on: "refund(customer)", require: "a.amount > 200"}
`),
      "refunds.yaml",
    );
    const findings = await lintConstraints(policy, solver);
    assert.deepEqual(
      findings.map((finding) => [finding.severity, finding.kind, finding.rules]),
      [["error", "unsatisfiable-constraints", ["R1", "R2"]]],
    );
    assert.match(findings[0]?.message ?? "", /R1, R2 on refund can never hold together/);
  });

  test("task fields are free: a bound by the task's limit and its negation conflict for every task", async () => {
    const policy = parsePolicy(
      refunds(`
  - {id: R3, on: "refund(customer)", require: "a.amount <= task.open_case.limit"}
  - {id: R4, on: "refund(customer)", require: "a.amount > task.open_case.limit"}
`),
      "refunds.yaml",
    );
    const findings = await lintConstraints(policy, solver);
    assert.deepEqual(
      findings.map((finding) => finding.rules),
      [["R3", "R4"]],
    );
  });

  test("satisfiable constraints give no finding (travel; the task's limit alone)", async () => {
    const travel = loadPolicy(
      fileURLToPath(new URL("../../../bench/domains/travel/policy.yaml", import.meta.url)),
    );
    assert.deepEqual(await lintConstraints(travel, solver), []);
    const limit = parsePolicy(
      refunds(`  - {id: R3, on: "refund(customer)", require: "a.amount <= task.open_case.limit"}`),
      "refunds.yaml",
    );
    assert.deepEqual(await lintConstraints(limit, solver), []);
  });

  test("a solver that cannot answer gives a warning, not a verdict", async () => {
    const closed = new SolverClient();
    await closed.close();
    const policy = parsePolicy(
      refunds(`  - {id: R1, on: "refund(customer)", require: "a.amount <= 100"}`),
      "refunds.yaml",
    );
    const findings = await lintConstraints(policy, closed);
    assert.deepEqual(
      findings.map((finding) => [finding.severity, finding.rules]),
      [["warning", ["R1"]]],
    );
    assert.match(findings[0]?.message ?? "", /not checked/);
  });
});
