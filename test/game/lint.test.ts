import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type LintFinding, lintPolicy } from "../../src/game/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";

// The lint vectors of ../shared/conformance/vectors.md §5.
function policyWith(rules: string): string {
  return `
policy: lint
manual:
  A: a sentence
  B: another sentence
tools:
  refund: {}
  escalate: {}
  verify: {}
propositions:
  refund: {tool: refund}
  escalate: {tool: escalate}
  verify: {tool: verify}
rules:
${rules}
`;
}

/** The findings a test is about: these small policies leave sentences and propositions unused on purpose. */
const withoutUnused = (findings: LintFinding[]) => findings.filter((finding) => finding.kind !== "unused");

describe("lintPolicy", () => {
  test("Existence(refund) with Absence(refund, 0) is a contradiction", () => {
    const findings = lintPolicy(
      parsePolicy(
        policyWith("  - {id: A, template: existence, a: refund}\n  - {id: B, template: absence, a: refund}"),
      ),
    );
    const errors = findings.filter((finding) => finding.severity === "error");
    // The rules that conflict, not only the duty left open, each with where it is written.
    assert.deepEqual(
      errors.map((finding) => [finding.kind, finding.rules.sort()]),
      [["contradiction", ["A", "B"]]],
    );
    assert.match(
      errors[0]?.message ?? "",
      /rules A \(<policy>:15:5\) and B \(<policy>:16:5\) cannot all be satisfied/,
    );
  });

  test("Existence(refund) with NotSuccession(escalate, refund) is a trap after escalate", () => {
    const findings = lintPolicy(
      parsePolicy(
        policyWith(
          "  - {id: A, template: existence, a: refund}\n  - {id: B, template: notSuccession, a: escalate, b: refund}",
        ),
      ),
    );
    const trap = findings.find((finding) => finding.kind === "trap");
    assert.equal(trap?.severity, "error");
    assert.deepEqual(trap?.example, ["escalate()"]);
  });

  test("a recorder broken only together with a seatbelt is shadowed", () => {
    const findings = lintPolicy(
      parsePolicy(
        policyWith(
          "  - {id: A, template: absence, a: refund}\n  - {id: B, template: precedence, a: verify, b: refund, mode: record}",
        ),
      ),
    );
    assert.deepEqual(
      withoutUnused(findings).map((finding) => [finding.kind, finding.rules]),
      [["shadowed", ["B", "A"]]],
    );
  });

  test("a vacuous rule is an error", () => {
    const text = policyWith('  - {id: A, ltl: "G(refund -> true)"}').replace(
      "  verify: {tool: verify}",
      '  verify: {tool: verify}\n  verified: {tool: verify, outcome: "o.ok == true"}',
    );
    assert.deepEqual(
      withoutUnused(lintPolicy(parsePolicy(text))).map((finding) => [finding.severity, finding.kind]),
      [["error", "vacuous"]],
    );
  });

  test("the travel policy lints clean", () => {
    const file = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
    assert.deepEqual(lintPolicy(loadPolicy(file)), []);
  });
});

describe("lint: unused declarations", () => {
  test("a manual sentence no rule cites and a proposition no rule reads are warnings", () => {
    const findings = lintPolicy(parsePolicy(policyWith("  - {id: A, template: existence, a: refund}")));
    const unused = findings.filter((finding) => finding.kind === "unused").map((finding) => finding.message);
    assert.deepEqual(unused, [
      "manual sentence B is cited by no rule or constraint (formalize it, or say in a comment why not)",
      "proposition escalate is read by no rule or constraint",
      "proposition verify is read by no rule or constraint",
    ]);
    assert.ok(
      findings
        .filter((finding) => finding.kind === "unused")
        .every((finding) => finding.severity === "warning"),
    );
  });

  test("a proposition that ties a tool's calls to bindings is used when last, count or values reads that tool", () => {
    const text = (require: string) => `
policy: refunds
manual:
  R1: Refund at most what the order cost.
task:
  request_refund: {parameters: {order_id: string}}
tools:
  get_order: {parameters: {order_id: string}}
  refund: {parameters: {order_id: string, amount: number}}
entities:
  order: {from: {request_refund: {oid: order_id}}}
propositions:
  looked_up(order): {tool: get_order, when: "a.order_id == oid"}
  refunded(order): {tool: refund, when: "a.order_id == oid"}
constraints:
  - {id: R1, on: refunded(order), require: "${require}"}
`;
    const unused = (require: string) =>
      lintPolicy(parsePolicy(text(require)))
        .filter((finding) => finding.kind === "unused")
        .map((finding) => finding.message);
    assert.deepEqual(unused("a.amount <= last('get_order').price"), []);
    assert.deepEqual(unused("a.amount <= 100"), [
      "proposition looked_up(order) is read by no rule or constraint",
    ]);
  });
});

describe("lint per group of linked rules", () => {
  // `groups` copies of: a duty to call r, and a rule that forbids r for good once a, b and c
  // were called in that order: a trap after a, b, c (three calls deep) in each copy. No call
  // links two copies.
  function copies(groups: number): string {
    const lines = ["policy: groups", "manual:"];
    for (let k = 0; k < groups; k++)
      lines.push(`  D${k}: Call r${k}.`, `  T${k}: "After a${k}, b${k}, c${k}: no r${k}."`);
    lines.push("tools:");
    for (let k = 0; k < groups; k++) for (const tool of ["a", "b", "c", "r"]) lines.push(`  ${tool}${k}: {}`);
    lines.push("propositions:");
    for (let k = 0; k < groups; k++)
      for (const tool of ["a", "b", "c", "r"]) lines.push(`  ${tool}${k}: {tool: ${tool}${k}}`);
    lines.push("rules:");
    for (let k = 0; k < groups; k++)
      lines.push(
        `  - {id: D${k}, template: existence, a: r${k}}`,
        `  - {id: T${k}, ltl: "G(a${k} -> WX G(b${k} -> WX G(c${k} -> WX G !r${k})))"}`,
      );
    return `${lines.join("\n")}\n`;
  }

  test("a trap three calls deep in each of 10 unlinked groups is found in each, with its shortest example", () => {
    // 50 states are plenty for one group, and far too few for the product of 10 of them.
    const findings = lintPolicy(parsePolicy(copies(10)), { maxStates: 50 });
    assert.deepEqual(
      findings.map((finding) => [finding.severity, finding.kind, finding.rules, finding.example]),
      Array.from({ length: 10 }, (_, k) => [
        "error",
        "trap",
        [`D${k}`, `T${k}`],
        [`a${k}()`, `b${k}()`, `c${k}()`],
      ]),
    );
  });

  test("a group whose game is larger than the budget is reported unchecked, not passed", () => {
    const findings = lintPolicy(parsePolicy(copies(2)), { maxStates: 3 });
    assert.deepEqual(
      findings.map((finding) => [finding.severity, finding.kind, finding.rules]),
      [
        ["warning", "unchecked", ["D0", "T0"]],
        ["warning", "unchecked", ["D1", "T1"]],
      ],
    );
    assert.match(
      findings[0]?.message ?? "",
      /rules D0 \(<policy>:\d+:\d+\) and T0 .* were not checked for .*traps: their game has more than 3 states/,
    );
  });
});
