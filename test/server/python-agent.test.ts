import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Replica, startReplica, stopReplica } from "../../bench/replicas/cluster.js";
import { makeTravelModel } from "../support/tiny-travel.js";

// The Python agent of docs/server.md ("The monitor API") against `mentor serve` on a tiny model:
// python3 (standard library only) runs docs/examples/guarded_agent.py, which asks the model for
// calls over the chat endpoint and guards its own tools through /v1/monitor/*.
const script = fileURLToPath(new URL("../../../docs/examples/guarded_agent.py", import.meta.url));
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
    const lines = stdout.trim().split("\n");
    assert.deepEqual(
      lines.filter((line) => !line.startsWith("answer: ")),
      [
        "model tiny; goal book_train",
        'proposed book_train({"origin": "Toronto", "destination": "Chicago"}) by the model',
        'refused book_train: P1: [SHIELD] Blocked book_train(origin="Toronto", destination="Chicago"). Rule P1: Check the distance of a route before any booking for it. First: check_distance(origin="Toronto", destination="Chicago")',
        'proposed check_distance({"origin": "Toronto", "destination": "Chicago"}) by the shield\'s advice',
        "  executing check_distance(Toronto, Chicago)",
        'ran check_distance: outcome {"kind": "label", "label": "long"}',
        'proposed book_train({"origin": "Toronto", "destination": "Chicago"}) by the model',
        "  executing book_train(Toronto, Chicago)",
        'ran book_train: outcome {"kind": "json", "value": {"status": "confirmed", "route": "Toronto-Chicago"}}',
        "done? allowed",
      ],
      stdout,
    );
  });
});
