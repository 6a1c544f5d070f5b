import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { pickTasks, runSopbench, sopbenchDataDir } from "../../bench/sopbench/run.js";
import { benchRecords } from "../../src/dashboard/bench-runs.js";
import { runView } from "../../src/dashboard/index.js";
import { MentorError } from "../../src/errors/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { sopbench, sopbenchSkip } from "../support/sopbench.js";

// SOPBench's own harness (its task initializer, tools, agent loop and evaluator, from the snapshot
// in ../shared/bench-data/sopbench: third-party code the project does not copy) against the real
// server in process, whose model is a scripted agent, on the first bank task.
const policyDir = fileURLToPath(new URL("../../../test/fixtures/sopbench-policies", import.meta.url));
const out = mkdtempSync(join(tmpdir(), "mentor-sopbench-"));
after(() => rmSync(out, { recursive: true, force: true }));

const exit = { calls: [{ name: "exit_conversation", arguments: {} }] };
const login = {
  calls: [{ name: "login_user", arguments: { username: "john_doe", identification: "secret" } }],
};
const options = (generator: ScriptedGenerator, more: { resume?: boolean } = {}) => ({
  domains: ["bank"],
  limit: 1,
  runs: 1,
  conditions: ["none", "prompt"],
  envMode: "prompt" as const,
  out,
  contextSize: 4096,
  policyDir,
  labeler: "rules" as const,
  generator,
  ...more,
});

describe("npm run bench:sopbench", () => {
  it("picks tasks round-robin over the actions, in the file's order", () => {
    const file = join(out, "tasks.json");
    writeFileSync(file, JSON.stringify({ a: [1, 2, 3], b: [1], c: [1, 2] }));
    assert.deepEqual(
      pickTasks(file, 5).map(({ action, index }) => `${action}/${index}`),
      ["a/0", "b/0", "c/0", "a/1", "c/1"],
    );
    assert.equal(pickTasks(file).length, 6);
  });

  it("names the data folder it cannot find, and the policy it lacks", async () => {
    const missing = join(out, "nowhere");
    assert.throws(
      () => sopbenchDataDir(missing),
      (error: unknown) =>
        error instanceof MentorError &&
        error.code === "MNT_ERR_BENCH_INPUT" &&
        error.message.includes(missing),
    );
    if (sopbench === undefined) return;
    await assert.rejects(
      runSopbench({ ...options(new ScriptedGenerator([exit])), domains: ["dmv"] }),
      (error: unknown) =>
        error instanceof MentorError &&
        error.message.includes(join(policyDir, "sopbench-dmv", "policy.yaml")),
    );
  });

  it("runs SOPBench's loop through the server, reads back its evaluator's verdict and saves each run", {
    skip: sopbenchSkip,
  }, async () => {
    // none: the agent exits at once. prompt: its exit is refused (the fixture's duty: log in
    // first), it logs in through SOPBench's own tool, then its exit is allowed.
    const generator = new ScriptedGenerator([exit, exit, login, exit]);
    const results = await runSopbench(options(generator));
    const run = (condition: string) => results.runs.find((entry) => entry.condition === condition);
    const none = run("none");
    const prompt = run("prompt");
    assert.ok(none && prompt, "one run per condition");
    assert.deepEqual(none.trace, [{ kind: "answer", text: "(exit_conversation)" }]);
    assert.equal(prompt.doneRefusals, 1);
    const loggedIn = prompt.trace.find((event) => event.kind === "call");
    assert.deepEqual(loggedIn && { name: loggedIn.name, output: loggedIn.output }, {
      name: "login_user",
      output: "False",
    });
    // Their evaluator's verdict: the task (apply_credit_card) was never attempted.
    assert.equal(prompt.pass, false);
    assert.deepEqual(prompt.reasons, ["action_called_correctly"]);
    const saved = JSON.parse(
      readFileSync(join(out, "runs", "bank", "prompt", "prompt", "apply_credit_card-0-r0.json"), "utf8"),
    ) as { evaluation: { num_function_calls: number; success: boolean }; interaction: unknown[] };
    assert.equal(saved.evaluation.num_function_calls, 1);
    assert.equal(saved.evaluation.success, false);
    assert.ok(saved.interaction.length >= 3, "the conversation is saved");
    // The dashboard's run view of the saved conversation: what the shield did, request by request.
    const records = benchRecords(prompt, "sopbench", "");
    assert.ok(typeof records !== "string", String(records));
    const view = runView(loadPolicy(join(policyDir, "sopbench-bank", "policy.yaml")), records);
    assert.deepEqual(
      view.columns.map((column) => [
        column.kind,
        column.call?.name,
        column.action,
        column.rules,
        column.request,
      ]),
      [
        ["answer", undefined, "block", ["L1"], 0],
        ["made", "login_user", "allow", [], 0],
        ["proposed", "exit_conversation", "allow", [], 1],
      ],
      "the exit refused while L1 was open, the login made, then the exit returned",
    );
    assert.deepEqual(records[0]?.messages?.[0], {
      role: "system",
      content: "(the manual of sopbench_bank_fixture, left out of results.json)",
    });
    assert.ok(existsSync(join(out, "report.html")));
    assert.deepEqual(
      results.summary.map((row) => [row.domain, row.condition, row.tasks]),
      [
        ["sopbench-bank", "none", 1],
        ["sopbench-bank", "prompt", 1],
      ],
    );
    // --resume runs nothing already saved.
    const again = new ScriptedGenerator([exit]);
    const resumed = await runSopbench(options(again, { resume: true }));
    assert.equal(again.requests.length, 0);
    assert.equal(resumed.runs.length, 2);
  });
});
