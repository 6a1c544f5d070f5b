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

function verify(calls: string[]): { compliance: { score: number; label: string } } {
  const dir = mkdtempSync(join(tmpdir(), "mentor-agentltl-"));
  writeFileSync(join(dir, "policy.yaml"), policy);
  const trace = { tool_calls: calls.map((tool_name) => ({ tool_name, tool_args: {}, tool_result: "ok" })) };
  writeFileSync(join(dir, "trace.json"), JSON.stringify(trace));
  const run = spawnSync(
    process.execPath,
    [main, "verify", "-p", join(dir, "policy.yaml"), "-m", join(dir, "trace.json")],
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
