import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../src/errors/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { Run, type Trace } from "../../src/run/index.js";

// Our own rulebook in the harness's format (the shape of its bundled refund example).
const file = fileURLToPath(new URL("../../../test/policy/fixtures/returns.rules.yaml", import.meta.url));
const text = readFileSync(file, "utf8");

type Step = [tool: string, result?: Record<string, boolean>];

/**
 * A run as the harness's hooks drive it: each call decided on the run so far and, if allowed,
 * made; then whether the run may end and which rules the finished run breaks.
 */
function drive(steps: Step[]): { decisions: string[]; mayEnd: boolean; violated: string[] } {
  const policy = loadPolicy(file);
  const evaluator = new Evaluator(policy);
  const trace: Trace = { task: [], calls: [] };
  const decisions = steps.map(([tool, result = {}]) => {
    const name = `shop__${tool}`;
    const { verdict } = evaluator.decide(trace, { name, arguments: {} });
    if (verdict !== "block")
      trace.calls.push({
        id: `c${trace.calls.length}`,
        name,
        arguments: {},
        outcome: { kind: "json", value: result },
      });
    return verdict === "block" ? "deny" : "allow";
  });
  const run = Run.fromTrace(policy, trace);
  const violated = run.instances.flatMap((instance, index) =>
    run.satisfies(index) ? [] : [instance.rule.id],
  );
  return { decisions, mayEnd: evaluator.next(trace).done.allowed, violated };
}

describe("an ltl-harness rulebook loads as it is", () => {
  test("activities, templates by their names, any-of lists, a raw formula and postures", () => {
    const policy = loadPolicy(file);
    assert.deepEqual(
      policy.rules.map((rule) => [rule.id, rule.mode]),
      [
        ["pay_only_after_valid_proof", "block"],
        ["log_right_after_paying", "block"],
        ["ask_for_proof_twice_at_most", "block"],
        ["no_payment_once_handed_over", "block"],
        ["close_the_case", "block"],
        ["start_by_finding_the_order", "warn"],
        ["order_found_at_some_point", "record"],
      ],
    );
    assert.equal(policy.tools.size, 7);
    assert.equal(policy.propositions.get("proof_valid")?.outcomeText, "o.valid == true");
    assert.equal(policy.manual.close_the_case, "Every case ends paid back, declined or handed over.");
    // Each rule is located in the rulebook, not in the policy it is written as.
    assert.deepEqual(
      [policy.rules[4]?.location.file, policy.rules[4]?.location.line],
      [file, text.split("\n").indexOf("  - id: close-the-case") + 1],
    );
  });

  // The harness's demo scenarios (happy, rogue, sloppy) on this rulebook: the verdicts ltl-harness
  // gives its own refund rulebook on them (bench:ltl-harness compares the two call by call).
  test("happy: proof valid on the second check, paid back, logged", () => {
    const run = drive([
      ["find_order"],
      ["ask_for_proof"],
      ["check_proof", { valid: false }],
      ["check_proof", { valid: true }],
      ["pay_back"],
      ["log_payment"],
    ]);
    assert.deepEqual(run, { decisions: Array(6).fill("allow"), mayEnd: true, violated: [] });
  });

  test("rogue: the payment without a valid proof is denied; handing over closes the case", () => {
    const run = drive([
      ["find_order"],
      ["check_proof", { valid: false }],
      ["check_proof", { valid: false }],
      ["pay_back"],
      ["hand_over"],
    ]);
    assert.deepEqual(run, {
      decisions: ["allow", "allow", "allow", "deny", "allow"],
      mayEnd: true,
      violated: [],
    });
  });

  test("sloppy: paid back without the log, the run may not end", () => {
    const run = drive([["find_order"], ["check_proof", { valid: true }], ["pay_back"]]);
    assert.deepEqual(run, {
      decisions: ["allow", "allow", "allow"],
      mayEnd: false,
      violated: ["log_right_after_paying"],
    });
  });

  test("the first activity whose result matches is the call's; one without a result only when none does", () => {
    const policy = parsePolicy(
      [
        "activities:",
        "  checked_any: {tool: check}",
        "  checked_ok: {tool: check, result: {path: r.ok, equals: true}}",
        "rules:",
        "  - {id: x, template: Existence, params: {a: checked_any}, posture: seatbelt}",
      ].join("\n"),
      "any.rules.yaml",
    );
    assert.equal(policy.propositions.get("checked_ok")?.outcomeText, "o.r.ok == true");
    assert.equal(policy.propositions.get("checked_any")?.outcomeText, "!(o.r.ok == true)");
  });

  test("an unknown template, posture, param or activity is an error at its place in the rulebook", () => {
    const broken = text
      .replace("template: Precedence", "template: Precedense")
      .replace("posture: tripwire", "posture: tripwir")
      .replace("{ a: ask_for_proof, n: 2 }", "{ a: ask_for_proof, n: 2, m: 1 }")
      .replace("{ a: hand_over, b: pay_back }", "{ a: hand_over, b: pay_out }");
    let problems: readonly MentorError[] = [];
    try {
      parsePolicy(broken, "returns.rules.yaml");
    } catch (error) {
      assert.ok(error instanceof MentorError);
      assert.equal(error.code, "MNT_ERR_POLICY_INVALID");
      problems = error.problems;
    }
    const lines = broken.split("\n");
    const at = (needle: string, column: string) => {
      const line = lines.findIndex((entry) => entry.includes(needle));
      return { line: line + 1, column: (lines[line] as string).indexOf(column) + 1 };
    };
    assert.deepEqual(
      problems.map((problem) => [problem.location?.path, problem.location?.line, problem.location?.column]),
      [
        ["rules[0].template", at("Precedense", "Precedense").line, at("Precedense", "Precedense").column],
        ["rules[2].params.m", at("m: 1", "m: 1").line, at("m: 1", "m: 1").column],
        ["rules[3].params.b", at("pay_out", "pay_out").line, at("pay_out", "pay_out").column],
        ["rules[5].posture", at("tripwir", "tripwir").line, at("tripwir", "tripwir").column],
      ],
    );
    assert.match(problems[0]?.message ?? "", /unknown DECLARE template Precedense/);
  });
});
