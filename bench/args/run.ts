/**
 * Benchmark of argument repair: solver start-up, check and repair latency on realistic
 * constraints and on a string-heavy set, and the solver process's memory over many repairs.
 *
 *   npm run bench:args
 *   MENTOR_BENCH_REPAIRS=1000 MENTOR_BENCH_STRING_REPAIRS=300 MENTOR_BENCH_MEMORY_REPAIRS=10000 npm run bench:args
 */
import os from "node:os";
import { performance } from "node:perf_hooks";
import { MentorError, type RepairRequest, SolverClient } from "../../src/index.js";
import { random, realisticRequest, stringRequest } from "./workload.js";

const repairs = Number(process.env.MENTOR_BENCH_REPAIRS ?? 1000);
const stringRepairs = Number(process.env.MENTOR_BENCH_STRING_REPAIRS ?? 300);
const memoryRepairs = Number(process.env.MENTOR_BENCH_MEMORY_REPAIRS ?? 10000);
const timeoutMs = Number(process.env.MENTOR_BENCH_TIMEOUT_MS ?? 1000);
const megabyte = 1024 * 1024;

function percentiles(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
  return `p50 ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, max ${at(1).toFixed(1)} ms (n=${sorted.length})`;
}

async function measure(
  client: SolverClient,
  make: (next: () => number) => RepairRequest,
  count: number,
  seed: number,
) {
  const next = random(seed);
  const check: number[] = [];
  const solver: number[] = [];
  const endToEnd: number[] = [];
  const outcomes: Record<string, number> = {};
  for (let index = 0; index < count; index++) {
    const request = make(next);
    for (const [times, run] of [
      [
        check,
        () =>
          client.satisfiable({
            tool: request.tool,
            constraints: request.constraints,
            scope: request.scope,
            directFirst: false,
          }),
      ],
      [solver, () => client.repair({ ...request, candidatesFirst: false })],
      [endToEnd, () => client.repair(request)],
    ] as const) {
      const started = performance.now();
      let outcome: string;
      try {
        outcome = (await run()).status;
      } catch (error) {
        outcome = error instanceof MentorError ? error.code : "error";
      }
      times.push(performance.now() - started);
      if (times === solver) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  }
  return { check, solver, endToEnd, outcomes };
}

const command = `node ${process.argv.slice(1).join(" ")}`;
console.log(`command: ${command}`);
console.log(
  `configuration: node ${process.version}, z3-solver 5.2.0, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), ` +
    `load average ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")}, timeoutMs ${timeoutMs}, ` +
    `repairs ${repairs}, string repairs ${stringRepairs}, memory repairs ${memoryRepairs}`,
);

const started = performance.now();
const client = new SolverClient({ timeoutMs });
const stats = await client.stats();
const ready = performance.now() - started;
const firstStarted = performance.now();
await client.satisfiable({
  tool: { name: "t", parameters: [{ name: "x", type: "integer" }] },
  constraints: [(await import("../../src/expression/index.js")).parseExpression("a.x > 1")],
  directFirst: false,
});
console.log(
  `solver init: process ready in ${ready.toFixed(0)} ms (z3-solver init ${stats.initMs.toFixed(0)} ms), ` +
    `first check ${(performance.now() - firstStarted).toFixed(0)} ms`,
);

for (const [name, make, count, seed] of [
  ["realistic (equality, membership, enums, arithmetic bounds)", realisticRequest, repairs, 1],
  ["string-heavy (contains, prefix, suffix)", stringRequest, stringRepairs, 2],
] as const) {
  const result = await measure(client, make, count, seed);
  console.log(`${name}:`);
  console.log(`  check (satisfiable):              ${percentiles(result.check)}`);
  console.log(
    `  repair through Z3:                ${percentiles(result.solver)}  outcomes ${JSON.stringify(result.outcomes)}`,
  );
  console.log(`  repair, default (without Z3 where exact): ${percentiles(result.endToEnd)}`);
}

const before = await client.stats();
const next = random(3);
const memoryStarted = performance.now();
let failures = 0;
for (let index = 0; index < memoryRepairs; index++) {
  try {
    await client.repair({ ...realisticRequest(next), candidatesFirst: false });
  } catch {
    failures++;
  }
  if ((index + 1) % 2500 === 0 && index + 1 < memoryRepairs) {
    const now = await client.stats();
    console.log(`  after ${index + 1} repairs: solver process rss ${(now.rss / megabyte).toFixed(1)} MB`);
  }
}
const after = await client.stats();
console.log(
  `memory over ${memoryRepairs} repairs through Z3 (${((performance.now() - memoryStarted) / 1000).toFixed(0)} s, ` +
    `${failures} failures, ${client.starts - 1} restarts): solver process rss ${(before.rss / megabyte).toFixed(1)} MB → ` +
    `${(after.rss / megabyte).toFixed(1)} MB, heap ${(before.heapUsed / megabyte).toFixed(1)} MB → ` +
    `${(after.heapUsed / megabyte).toFixed(1)} MB`,
);
await client.close();
