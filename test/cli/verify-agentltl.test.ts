import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

// AgentLTL's README walkthrough: fetch → process → save with weights 2, 2, 1.
const policy = `policy: pipeline
manual: {fetch_first: Fetch before processing., process_first: Process before saving., save_once: Save once.}
tools: {fetch_data: {}, process_data: {}, save_results: {}}
propositions: {fetch_data: {tool: fetch_data}, process_data: {tool: process_data}, save_results: {tool: save_results}}
rules:
  - {id: fetch_first, template: Before, a: fetch_data, b: process_data, weight: 2}
  - {id: process_first, template: Before, a: process_data, b: save_results, weight: 2}
  - {id: save_once, template: CalledNTimes, a: save_results, n: 1, op: "==", weight: 1}
`;

function verify(calls: string[], policyText = policy): { compliance: { score: number; label: string } } {
  const dir = mkdtempSync(join(tmpdir(), "mentor-agentltl-"));
  writeFileSync(join(dir, "policy.yaml"), policyText);
  const trace = { tool_calls: calls.map((tool_name) => ({ tool_name, tool_args: {}, tool_result: "ok" })) };
  writeFileSync(join(dir, "trace.json"), JSON.stringify(trace));
  const run = spawnSync(
    process.execPath,
    // AgentLTL judges a trace whatever its constraints: some here conflict on purpose.
    [main, "verify", "-p", join(dir, "policy.yaml"), "-m", join(dir, "trace.json"), "--allow-lint-errors"],
    {
      encoding: "utf8",
    },
  );
  return JSON.parse(run.stdout);
}

test("verify reads AgentLTL's trace JSON and gives its weighted score and label", () => {
  assert.deepEqual(verify(["fetch_data", "process_data", "save_results"]).compliance, {
    score: 1,
    label: "FULL",
    violated: [],
  });
  assert.deepEqual(verify(["process_data"]).compliance, {
    score: 0,
    label: "VIOLATION",
    violated: [
      { id: "fetch_first", weight: 2 },
      { id: "process_first", weight: 2 },
      { id: "save_once", weight: 1 },
    ],
  });
  // Only save_once fails: 1 − 1/5, as AgentLTL's README says.
  assert.equal(verify(["fetch_data", "process_data", "save_results", "save_results"]).compliance.score, 0.8);
});

test("verify scores an AgentLTL trace with no calls, as AgentLTL does", () => {
  // Both Before fail (nothing occurs), save_once fails (0 saves): 0, as agentltl 0.2.1 gives.
  assert.deepEqual(verify([]).compliance, {
    score: 0,
    label: "VIOLATION",
    violated: [
      { id: "fetch_first", weight: 2 },
      { id: "process_first", weight: 2 },
      { id: "save_once", weight: 1 },
    ],
  });
});

test("a rule the finished trace satisfies is met, though a call was refused for a conflict it is part of", () => {
  // WithinSteps(a, a, 0) needs an a, CalledNTimes(a, 0) forbids one: the first call (b) leaves
  // no compliant finish and names both. On [b, a] the first holds (agentltl 0.2.1: 0.5, PARTIAL,
  // only no_a failing).
  const conflicting = `policy: conflict
manual: {soon: a within zero calls of a., no_a: a is never called.}
tools: {a: {}, b: {}}
propositions: {a: {tool: a}}
rules:
  - {id: soon, template: WithinSteps, a: a, b: a, n: 0}
  - {id: no_a, template: CalledNTimes, a: a, n: 0, op: "=="}
`;
  assert.deepEqual(verify(["b", "a"], conflicting).compliance, {
    score: 0.5,
    label: "PARTIAL",
    violated: [{ id: "no_a", weight: 1 }],
  });
});
