/**
 * Stress: thousands of realistic repairs, many requests in flight at once, while the solver
 * process (started with --expose-gc) collects garbage every 25 ms, in-flight checks
 * included. Without the finalizer guard z3-solver corrupts its heap within ~2,000 repairs.
 * The child's memory must stay flat between the 1,000th and the last repair.
 * `npm test` runs 2,000 repairs; `npm run test:stress` runs 5,000.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { realisticRequest } from "../../bench/args/workload.js";
import { seededRandom } from "../../src/base/random.js";
import { holdsIn } from "../../src/expression/index.js";
import { SolverClient } from "../../src/smt/index.js";

// 2,000 in `npm test` (past the ~1,700 at which an unguarded z3-solver corrupted its heap);
// `npm run test:stress` runs 5,000.
const repairs = Number(process.env.MENTOR_SMT_STRESS_REPAIRS ?? 2000);
const concurrency = 16;
const megabyte = 1024 * 1024;

test(`stress: ${repairs} repairs, ${concurrency} in flight, forced GCs in the solver process`, async () => {
  const client = new SolverClient({ timeoutMs: 5000, forcedGcIntervalMs: 25, backend: "wasm" });
  const next = seededRandom(7);
  let done = 0;
  let repaired = 0;
  let rssAt1000 = 0;
  const started = performance.now();
  try {
    const first = await client.stats();
    const worker = async () => {
      while (done < repairs) {
        const request = realisticRequest(next);
        done++;
        const index = done;
        const result = await client.repair({ ...request, candidatesFirst: false });
        assert.notEqual(result.status, "unsupported", JSON.stringify(result));
        if (result.status === "repaired") {
          repaired++;
          const scope = { ...request.scope, arguments: result.arguments };
          assert.ok(request.constraints.every((constraint) => holdsIn(constraint, scope)));
        }
        if (index === 1000) rssAt1000 = (await client.stats()).rss;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const last = await client.stats();
    const growth = (last.rss - rssAt1000) / megabyte;
    console.log(
      `stress: ${repairs} repairs (${repaired} repaired, ${repairs - repaired} unsat), solver process ${last.pid}: ` +
        `rss ${(first.rss / megabyte).toFixed(1)} MB at start, ${(rssAt1000 / megabyte).toFixed(1)} MB at repair 1000, ` +
        `${(last.rss / megabyte).toFixed(1)} MB at the end (growth ${growth.toFixed(1)} MB), restarts ${client.starts - 1}, ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    assert.equal(client.starts, 1, "the solver process never crashed");
    assert.equal(last.pid, first.pid);
    assert.ok(growth < 50, `rss grew ${growth.toFixed(1)} MB`);
  } finally {
    await client.close();
  }
});
