import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Replica, startReplica, stopReplica } from "../../bench/replicas/cluster.js";
import { makeTravelModel } from "../support/tiny-travel.js";

// The Python agent of docs/server.md ("The monitor over HTTP") against `mentor serve` on a tiny model:
// python3 (standard library only) runs docs/examples/guarded_agent.py, which asks the model for
// calls over the chat endpoint and guards its own tools through /v1/monitor/*.
const root = fileURLToPath(new URL("../../../", import.meta.url));
const script = join(root, "docs", "examples", "guarded_agent.py");
const directory = mkdtempSync(join(tmpdir(), "mentor-python-agent-"));
let replica: Replica | undefined;
after(async () => {
  if (replica) await stopReplica(replica);
  rmSync(directory, { recursive: true, force: true });
});

describe("the Python agent of docs/server.md", () => {
  it("a refused call is not run and names its rule, the advised and the allowed calls run, the run's end is asked", async () => {
    const model = await makeTravelModel(join(directory, "tiny.gguf"));
    replica = await startReplica(
      ["--model", model, "--policy", "travel", "--labeler", "rules", "--gpu", "cpu", "--sequences", "1"],
      { ...process.env, MENTOR_CONTEXT_SIZE: "2048" },
    );
    const { stdout } = await promisify(execFile)("python3", [script, "--url", replica.url], {
      timeout: 120_000,
    });
    // The output docs/server.md shows, line for line (the tiny model's final words aside).
    const documented = readFileSync(join(root, "docs", "server.md"), "utf8");
    const shown = /```\n(model tiny; goal book_train\n[^`]*?)answer: …\n```/.exec(documented)?.[1];
    assert.ok(shown, "docs/server.md shows the agent's output");
    const lines = stdout.split("\n").filter((line) => line !== "" && !line.startsWith("answer: "));
    assert.deepEqual(lines, shown.trim().split("\n"), stdout);
    assert.match(stdout, /^refused book_train: P1: /m);
    assert.ok(stdout.indexOf("executing check_distance") < stdout.indexOf("executing book_train"));
    assert.match(stdout, /\ndone\? allowed\nanswer: /);
  });
});
