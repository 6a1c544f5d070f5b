import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadPolicy, policyForSystem } from "../../src/policy/index.js";

// No model. The SOPBench policies of bank, dmv, healthcare and hotel (policies/sopbench-<domain>/),
// as a user checks them in CI: `mentor lint` is clean and `mentor verify --suite` agrees with every
// labelled conversation of the policy's suite (compliant runs and runs that break a sentence).
const mentor = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const domains = ["bank", "dmv", "healthcare", "hotel"];

function run(args: string[]): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(process.execPath, [mentor, ...args], { encoding: "utf8" });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

interface Suite {
  manual: Record<string, string>;
  conversations: { id: string; expected: { compliant: boolean; sentence?: string } }[];
}

for (const domain of domains) {
  const policy = fileURLToPath(new URL(`../../../policies/sopbench-${domain}/policy.yaml`, import.meta.url));
  const suiteFile = fileURLToPath(
    new URL(`../../../policies/sopbench-${domain}/suite.json`, import.meta.url),
  );

  describe(`policies/sopbench-${domain}`, () => {
    test("mentor lint: no error, no warning", () => {
      const result = run(["lint", policy]);
      assert.equal(result.status, 0, result.stdout + result.stderr);
      assert.match(result.stdout, /0 error\(s\), 0 warning\(s\)/);
    });

    test("the suite has compliant runs and violating runs that name a manual sentence", () => {
      const suite = JSON.parse(readFileSync(suiteFile, "utf8")) as Suite;
      const compliant = suite.conversations.filter((entry) => entry.expected.compliant);
      const violating = suite.conversations.filter((entry) => !entry.expected.compliant);
      assert.ok(compliant.length >= 3 && violating.length >= 3, `${compliant.length} + ${violating.length}`);
      for (const entry of violating)
        assert.ok(Object.hasOwn(suite.manual, entry.expected.sentence ?? ""), entry.id);
    });

    test("mentor verify --suite: the policy agrees with every label", () => {
      const result = run(["verify", "--policy", policy, "--suite", suiteFile]);
      const answer = JSON.parse(result.stdout) as {
        conversations: number;
        agree: number;
        disagreements: unknown[];
      };
      assert.deepEqual(answer.disagreements, []);
      assert.equal(answer.agree, answer.conversations);
      assert.equal(result.status, 0);
    });
  });
}

// The healthcare policy reads the SOP rendered for the task: the coverage percentage from
// update_policy's section, and the provider conditions as an "ANY ONE of these" group.
describe("policies/sopbench-healthcare reads the system prompt", () => {
  const base = loadPolicy(
    fileURLToPath(new URL("../../../policies/sopbench-healthcare/policy.yaml", import.meta.url)),
  );
  test("the defaults without a prompt, the prompt's figures and groups with one", () => {
    assert.equal(base.settings.values.max_coverage_percentage, 20);
    assert.equal(base.settings.values.provider_any_submit_claim, false);
    const read = policyForSystem(
      base,
      [
        "### Actions with Constraints:",
        "",
        "* update_policy:",
        "ALL of these conditions must be met:",
        '• The requested coverage amount "coverage_amount" **MUST NOT EXCEED** 10 percent of the annual income "annual_income" provided by the user.',
        "",
        "* submit_claim:",
        "ALL of these conditions must be met:",
        "• ANY ONE of these conditions must be met:",
        '  • The provider with ID "provider_id" **MUST HAVE** the service type that match the policy type of the user "username" in order to perform this action.',
        '  • The provider with ID "provider_id" **MUST BE** authorized for the user "username".',
        "",
      ].join("\n"),
    );
    assert.equal(read.settings.values.max_coverage_percentage, 10);
    assert.equal(read.settings.values.provider_any_submit_claim, true);
    assert.equal(read.settings.values.pending_update_policy, false);
    assert.equal(read.settings.values.enrollment_update_policy, false);
  });
});
