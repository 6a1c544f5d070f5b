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

// Hotel reads each task's SOP from the system prompt: a sentence the goal action's section leaves
// out switches its rule off, and the hours are the ones rendered.
describe("policies/sopbench-hotel: settings from the system prompt", () => {
  const policy = loadPolicy(
    fileURLToPath(new URL("../../../policies/sopbench-hotel/policy.yaml", import.meta.url)),
  );
  const system = [
    "### Actions with Constraints:",
    "",
    "* process_guest_checkin:",
    "ALL of these conditions must be met:",
    "• The current interaction time must be **on or after** the check-in time 14:00 on the interaction date.",
    "",
    "* process_guest_checkout:",
    'The guest "guest_name" must be listed in the room check-in records.',
    "",
    "### Internal Verification Functions:",
  ].join("\n");

  test("without a system prompt every sentence applies, with the default hours", () => {
    const { values } = policy.settings;
    assert.equal(values.checkout_time, true);
    assert.equal(values.checkin_id, true);
    assert.equal(values.check_in_hour, 15);
  });

  test("a rendered SOP: the sentences of each action's own section, its own hours", () => {
    const { values } = policyForSystem(policy, system).settings;
    assert.equal(values.checkout_listed, true);
    assert.equal(values.checkout_time, false);
    assert.equal(values.checkout_key, false);
    assert.equal(values.checkin_time, true);
    assert.equal(values.checkin_id, false);
    assert.equal(values.check_in_hour, 14);
    assert.equal(values.check_out_hour, 11);
    // The check-in section's time sentence is not read as the checkout's.
    assert.equal(values.service_hours, false);
  });
});
