import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

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
