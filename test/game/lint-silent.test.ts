import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type LintFinding, lintConstraints, lintPolicy } from "../../src/game/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { SolverClient } from "../../src/smt/index.js";

// Mistakes a new user made that lint did not report (issue 32, items 1 and 2): rules that can
// never fire or never be broken, and traps whose shortest example needs two outcomes of one call
// that no output gives together.

const pharmacyText = readFileSync(
  fileURLToPath(new URL("../../../test/evaluator/fixtures/pharmacy.yaml", import.meta.url)),
  "utf8",
);

/** The pharmacy fixture with one rule (by id) written otherwise, and propositions added. */
function pharmacyWith(rule: string, ltl: string, propositions = ""): string {
  const line = pharmacyText.split("\n").find((candidate) => candidate.includes(`{id: ${rule},`)) as string;
  return pharmacyText
    .replace(line, `  - {id: ${rule}, ltl: "${ltl}"}`)
    .replace("propositions:\n", `propositions:\n${propositions}`);
}

const errors = (findings: LintFinding[]) =>
  findings
    .filter((finding) => finding.severity === "error")
    .map((finding) => [finding.kind, finding.message]);

describe("lint finds rules that can never fire or never be broken", () => {
  test("an entity-free trigger in a per-entity rule: never seen by its instances, so vacuous (an error with file:line:col)", () => {
    // `any_dispense` has no entity; the rule is per allergy, and no dispense names an allergy.
    const policy = parsePolicy(pharmacyWith("M6", "G(any_dispense -> O recorded(allergy))"), "pharmacy.yaml");
    assert.deepEqual(errors(lintPolicy(policy)), [
      [
        "dead-proposition",
        "in rule M6 (pharmacy.yaml:78:5), any_dispense can never hold: any_dispense has no entity, and no dispense call names a allergy (no proposition over allergy on dispense), while each instance of the rule is about one allergy and reads only the calls that name it",
      ],
      [
        "vacuous",
        "rule M6 (pharmacy.yaml:78:5) can never be broken (any_dispense can never hold in it): it constrains nothing",
      ],
    ]);
    // As written in the fixture (the dispense names the prescription, the rule is per pair) it is live.
    assert.deepEqual(errors(lintPolicy(parsePolicy(pharmacyText))), []);
  });

  test("a when that cannot hold (asked of the solver): the proposition is dead and the rule vacuous", async () => {
    const text = pharmacyWith(
      "M7",
      "G(long_dispense(rx) -> F counselled(rx))",
      '  long_dispense(rx): {tool: dispense, when: "a.rx_id == r && a.days_supply > 90 && a.days_supply < 30"}\n',
    );
    const policy = parsePolicy(text, "pharmacy.yaml");
    const solver = new SolverClient();
    try {
      assert.deepEqual(errors(await lintConstraints(policy, solver)), [
        [
          "dead-proposition",
          'in rule M7 (pharmacy.yaml:80:5), long_dispense(rx) can never hold: its when can never hold: "a.rx_id == r && a.days_supply > 90 && a.days_supply < 30"',
        ],
        [
          "vacuous",
          "rule M7 (pharmacy.yaml:80:5) can never be broken (long_dispense(rx) can never hold in it): it constrains nothing",
        ],
      ]);
      // A when that can hold is not reported.
      const live = parsePolicy(text.replace("a.days_supply < 30", "a.days_supply < 120"), "pharmacy.yaml");
      assert.deepEqual(errors(await lintConstraints(live, solver)), []);
    } finally {
      await solver.close();
    }
  });

  test("an outcome no output gives: no call makes the proposition true", () => {
    const text = pharmacyWith(
      "M3",
      "G(dispensed(rx) -> O odd_refills(rx))",
      `  odd_refills(rx): {tool: check_refill_count, when: "a.rx_id == r", outcome: "o.refills > 5 && o.refills < 3"}\n`,
    );
    const kinds = lintPolicy(parsePolicy(text, "pharmacy.yaml"))
      .filter((finding) => finding.severity === "error")
      .map((finding) => [finding.kind, finding.rules]);
    assert.deepEqual(kinds, [["dead-proposition", ["M3"]]]);
  });

  test("a proposition whose when does not say which binding a call names is a warning", () => {
    const unpinned = lintPolicy(parsePolicy(pharmacyText, "pharmacy.yaml")).filter(
      (finding) => finding.kind === "unpinned",
    );
    assert.deepEqual(
      unpinned.map((finding) => [finding.severity, finding.rules, finding.message]),
      [
        [
          "warning",
          ["M7"],
          "proposition counselled(rx) (pharmacy.yaml:70:3) does not say which rx a add_note call is about (its when has no a.<argument> == r): every add_note call it holds for is about every rx",
        ],
      ],
    );
  });

  test("every shipped policy lints without errors or warnings", async () => {
    const solver = new SolverClient();
    try {
      for (const name of ["travel", "tau2-airline", "tau2-retail", "tau2-mock"]) {
        const policy = loadPolicy(
          fileURLToPath(new URL(`../../../policies/${name}/policy.yaml`, import.meta.url)),
        );
        const findings = [...lintPolicy(policy), ...(await lintConstraints(policy, solver))];
        assert.deepEqual(
          findings.map((finding) => finding.message),
          [],
          name,
        );
      }
    } finally {
      await solver.close();
    }
  });
});

/** Checked once, dispensed or declined; a dispense only when not schedule II, a decline only when it is. */
function schedulePolicy(dispenseNeeds: string): string {
  return `
policy: schedule
manual:
  S1: Every refill request ends dispensed or declined.
  S2: Dispense only what the check allows.
  S3: Decline only a schedule II drug.
  S4: Check a prescription once.
tools:
  check: {parameters: {rx_id: string}}
  dispense: {parameters: {rx_id: string}}
  decline: {parameters: {rx_id: string}}
task:
  request_refill: {parameters: {rx_id: string}}
entities:
  rx: {from: {request_refill: {r: rx_id}}}
propositions:
  checked(rx): {tool: check, when: "a.rx_id == r"}
  controlled(rx): {tool: check, when: "a.rx_id == r", outcome: "o.schedule == 'II'"}
  allowed(rx): {tool: check, when: "a.rx_id == r", outcome: "${dispenseNeeds}"}
  dispensed(rx): {tool: dispense, when: "a.rx_id == r"}
  declined(rx): {tool: decline, when: "a.rx_id == r"}
rules:
  - {id: S1, ltl: "F(dispensed(rx) | declined(rx))", applies_to: requested}
  - {id: S2, ltl: "G(dispensed(rx) -> O allowed(rx))"}
  - {id: S3, ltl: "G(declined(rx) -> O controlled(rx))"}
  - {id: S4, template: absence, a: "checked(rx)", n: 1}
`;
}

describe("outcomes of one call are one choice of the environment", () => {
  test("o.schedule == 'II' and o.schedule != 'II' never hold together: no trap whose example needs neither", () => {
    const findings = lintPolicy(parsePolicy(schedulePolicy("o.schedule != 'II'")));
    assert.deepEqual(
      findings.filter((finding) => finding.kind === "trap"),
      [],
    );
  });

  test("a real trap is still reported: refills left and schedule II are independent fields", () => {
    const trap = lintPolicy(parsePolicy(schedulePolicy("o.refills > 0"))).find(
      (finding) => finding.kind === "trap",
    );
    assert.equal(trap?.severity, "error");
    assert.deepEqual(trap?.example, ['check(rx_id="<rx_id>") → no outcome condition holds']);
  });

  test("the game's call of the check has the two outcomes one output can give, not four", async () => {
    const { candidateCalls } = await import("../../src/game/candidates.js");
    const { Run } = await import("../../src/run/index.js");
    const policy = parsePolicy(schedulePolicy("o.schedule != 'II'"));
    const run = Run.start(policy, [{ name: "request_refill", arguments: { rx_id: "RX1" } }]);
    const check = candidateCalls(run).find(
      (candidate) => candidate.tool === "check" && candidate.arguments.rx_id === "RX1",
    );
    assert.deepEqual(
      check?.cases.map((outcome) => outcome.description),
      ["o.schedule == 'II'", "o.schedule != 'II'"],
    );
  });
});
