import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { lintConstraints, lintPolicy } from "../../src/game/index.js";
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
      fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url)),
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

describe("traps made by constraints", () => {
  const fixture = (name: string) =>
    fileURLToPath(new URL(`../../../test/game/fixtures/${name}`, import.meta.url));

  test("a constraint no train booking can meet traps a short route: located error with a shortest example", async () => {
    const findings = await lintConstraints(loadPolicy(fixture("train-trap.yaml")), solver);
    assert.deepEqual(
      findings.map((finding) => [finding.severity, finding.kind, finding.rules, finding.example]),
      [["error", "trap", ["T1"], ['check_distance(origin="<origin>", destination="<destination>") → short']]],
    );
    assert.deepEqual(
      { line: findings[0]?.location?.line, path: findings[0]?.location?.path },
      { line: 62, path: "constraints[0].require" },
    );
    assert.match(findings[0]?.message ?? "", /rule P4 can only be met by book_train/);
    assert.match(findings[0]?.message ?? "", /constraint T1 at .*train-trap\.yaml:62:14/);
  });

  test("the same policy with a constraint that can hold has no trap", async () => {
    const text = readFileSync(fixture("train-trap.yaml"), "utf8").replace(
      "a.seats >= last('quote_train').seats_left + 1",
      "a.seats >= 1",
    );
    assert.deepEqual(await lintConstraints(parsePolicy(text, "train.yaml"), solver), []);
  });

  test("an impossible call with a way around it is no trap: the flight remains for long routes", async () => {
    const text = readFileSync(fixture("train-trap.yaml"), "utf8").replace(
      '  - {id: P2, ltl: "G(short(route) -> G !flight(route))"}\n',
      "",
    );
    assert.deepEqual(await lintConstraints(parsePolicy(text, "train.yaml"), solver), []);
  });

  test("the travel policy and the patient-intake fixture lint clean", async () => {
    for (const file of [
      fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url)),
      fileURLToPath(new URL("../../../test/evaluator/fixtures/patient-intake.yaml", import.meta.url)),
    ]) {
      const policy = loadPolicy(file);
      assert.deepEqual([...lintPolicy(policy), ...(await lintConstraints(policy, solver))], [], file);
    }
  });
});
