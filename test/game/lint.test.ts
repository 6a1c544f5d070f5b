import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { lintPolicy } from "../../src/game/index.js";
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

describe("lintPolicy", () => {
  test("Existence(refund) with Absence(refund, 0) is a contradiction", () => {
    const findings = lintPolicy(
      parsePolicy(
        policyWith("  - {id: A, template: existence, a: refund}\n  - {id: B, template: absence, a: refund}"),
      ),
    );
    const errors = findings.filter((finding) => finding.severity === "error");
    assert.deepEqual(
      errors.map((finding) => [finding.kind, finding.rules.sort()]),
      [["contradiction", ["A"]]],
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
      findings.map((finding) => [finding.kind, finding.rules]),
      [["shadowed", ["B", "A"]]],
    );
  });

  test("vacuous rules and propositions that can never hold are warnings", () => {
    const text = policyWith('  - {id: A, ltl: "G(refund -> true)"}').replace(
      "  verify: {tool: verify}",
      '  verify: {tool: verify}\n  verified: {tool: verify, outcome: "o.ok == true"}',
    );
    assert.deepEqual(
      lintPolicy(parsePolicy(text)).map((finding) => [finding.severity, finding.kind]),
      [["warning", "vacuous"]],
    );
  });

  test("the travel policy lints clean", () => {
    const file = fileURLToPath(new URL("../../../bench/domains/travel/policy.yaml", import.meta.url));
    assert.deepEqual(lintPolicy(loadPolicy(file)), []);
  });
});
