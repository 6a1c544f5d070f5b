/**
 * npm run bench:args:breakdown — where a repair's time goes: the IPC round trip to the solver
 * process, the floor of one request (one trivial check), and, for realistic repairs run in this
 * process on the same Z3 build, the checks per repair and their share of the time against the
 * rest (encoding, model reading, the evaluator's re-check). Compared with the same repairs
 * through the client.
 *
 *   MENTOR_BENCH_REPAIRS=300 npm run bench:args:breakdown
 */
import os from "node:os";
import { performance } from "node:perf_hooks";
import { init } from "z3-solver";
import { seededRandom } from "../../src/base/random.js";
import { parseExpression } from "../../src/expression/index.js";
import { wireRepair } from "../../src/smt/client.js";
import { SolverClient } from "../../src/smt/index.js";
import { repair } from "../../src/smt/solve.js";
import { WasmSession } from "../../src/smt/wasm-session.js";
import { realisticRequest } from "./workload.js";

const repairs = Number(process.env.MENTOR_BENCH_REPAIRS ?? 300);

function percentiles(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
  return `p50 ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms (n=${sorted.length})`;
}

async function timed(count: number, body: (index: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await body(index);
    times.push(performance.now() - started);
  }
  return times;
}

console.log(
  `mentor bench:args:breakdown — node ${process.version}, ${os.cpus().length} CPUs, load average ${os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(" ")}, ${repairs} repairs`,
);
const requests = Array.from(
  { length: repairs },
  (
    (next) => () =>
      realisticRequest(next)
  )(seededRandom(1)),
);

const client = new SolverClient({ timeoutMs: 5000 });
await client.stats();
console.log(`IPC round trip (stats):                 ${percentiles(await timed(200, () => client.stats()))}`);
const trivial = { tool: { name: "t", parameters: [{ name: "x", type: "integer" as const }] } };
const greater = [parseExpression("a.x > 1")];
console.log(
  `one trivial check through the client:  ${percentiles(await timed(200, () => client.satisfiable({ ...trivial, constraints: greater, directFirst: false })))}`,
);
const throughClient = await timed(repairs, (index) =>
  client.repair({ ...(requests[index] as (typeof requests)[number]), candidatesFirst: false }),
);
await client.close();

// The same repairs in this process: few enough that z3-solver's finalizers cannot corrupt the heap.
const z3 = new (await init()).Context("main");
const solverPrototype = Object.getPrototypeOf(new z3.Solver()) as {
  check: (...args: unknown[]) => Promise<unknown>;
};
const check = solverPrototype.check;
let checks = 0;
let checkMs = 0;
solverPrototype.check = async function (this: unknown, ...args: unknown[]) {
  checks++;
  const started = performance.now();
  try {
    return await check.apply(this, args);
  } finally {
    checkMs += performance.now() - started;
  }
};
const inProcess = await timed(repairs, (index) => {
  const request = requests[index] as (typeof requests)[number];
  const session = new WasmSession(z3, "solver");
  return repair(session, wireRepair(request, 5000)).finally(() => session.release());
});
const total = inProcess.reduce((sum, time) => sum + time, 0);
console.log(`realistic repair through the client:    ${percentiles(throughClient)}`);
console.log(`the same repairs in this process:       ${percentiles(inProcess)}`);
console.log(
  `  checks per repair ${(checks / repairs).toFixed(2)}, ${(checkMs / checks).toFixed(2)} ms per check on average, ` +
    `checks ${((checkMs / total) * 100).toFixed(0)}% of the time (the rest: encoding, model reading, re-check)`,
);
process.exit(0);
