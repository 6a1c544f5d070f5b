/**
 * Benchmark of argument repair: solver start-up, check and repair latency on realistic
 * constraints and on a string-heavy set, and the solver process's memory over many repairs —
 * on both Z3 builds in the same run (the WASM build is the baseline; the native `z3` binary is
 * measured where it is installed), each workload by default (direct reasoning first) and
 * straight through the solver.
 *
 *   npm run bench:args
 *   MENTOR_BENCH_REPAIRS=1000 MENTOR_BENCH_STRING_REPAIRS=300 MENTOR_BENCH_MEMORY_REPAIRS=10000 npm run bench:args
 *   MENTOR_BENCH_BACKENDS=native npm run bench:args     (one build only)
 */
import os from "node:os";
import { performance } from "node:perf_hooks";
import { seededRandom } from "../../src/base/random.js";
import { parseExpression } from "../../src/expression/index.js";
import { MentorError, type RepairRequest, type SolverBackend, SolverClient } from "../../src/index.js";
import { findZ3Binary } from "../../src/smt/native.js";
import { realisticRequest, stringRequest } from "./workload.js";

const repairs = Number(process.env.MENTOR_BENCH_REPAIRS ?? 1000);
const stringRepairs = Number(process.env.MENTOR_BENCH_STRING_REPAIRS ?? 300);
const memoryRepairs = Number(process.env.MENTOR_BENCH_MEMORY_REPAIRS ?? 2000);
const timeoutMs = Number(process.env.MENTOR_BENCH_TIMEOUT_MS ?? 1000);
const targetMs = 20;
const megabyte = 1024 * 1024;
const backends = (process.env.MENTOR_BENCH_BACKENDS ?? "wasm,native")
  .split(",")
  .filter((backend): backend is SolverBackend => backend === "wasm" || backend === "native")
  .filter((backend) => backend === "wasm" || findZ3Binary() !== undefined);

const at = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
const sortedOf = (times: number[]) => [...times].sort((a, b) => a - b);

function percentiles(times: number[]): string {
  const sorted = sortedOf(times);
  return `p50 ${at(sorted, 0.5).toFixed(1)} ms, p95 ${at(sorted, 0.95).toFixed(1)} ms, max ${at(sorted, 1).toFixed(1)} ms (n=${sorted.length})`;
}

const loadAverage = () =>
  os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(" ");

async function measure(
  client: SolverClient,
  make: (next: () => number) => RepairRequest,
  count: number,
  seed: number,
) {
  const next = seededRandom(seed);
  const times: Record<Kind, number[]> = { checkDefault: [], check: [], repairDefault: [], repair: [] };
  const outcomes: Record<string, number> = {};
  for (let index = 0; index < count; index++) {
    const request = make(next);
    const question = { tool: request.tool, constraints: request.constraints, scope: request.scope };
    for (const [kind, run] of [
      ["checkDefault", () => client.satisfiable(question)],
      ["check", () => client.satisfiable({ ...question, directFirst: false })],
      ["repair", () => client.repair({ ...request, candidatesFirst: false })],
      ["repairDefault", () => client.repair(request)],
    ] as const) {
      const started = performance.now();
      let outcome: string;
      try {
        outcome = (await run()).status;
      } catch (error) {
        outcome = error instanceof MentorError ? error.code : "error";
      }
      times[kind].push(performance.now() - started);
      if (kind === "repair") outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  }
  return { times, outcomes };
}

type Kind = "checkDefault" | "check" | "repairDefault" | "repair";
const kinds: [Kind, string][] = [
  ["checkDefault", "check (satisfiable), default"],
  ["check", "check through Z3"],
  ["repairDefault", "repair, default"],
  ["repair", "repair through Z3"],
];
const workloads = [
  ["realistic", "realistic (equality, membership, enums, arithmetic bounds)", realisticRequest, repairs, 1],
  ["strings", "string-heavy (contains, prefix, suffix, length)", stringRequest, stringRepairs, 2],
] as const;

const command = `node ${process.argv.slice(1).join(" ")}`;
console.log(`command: ${command}`);
console.log(
  `configuration: node ${process.version}, z3-solver 5.2.0 (wasm), ${findZ3Binary() ?? "no z3 binary"} (native), ` +
    `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load average ${loadAverage()}, timeoutMs ${timeoutMs}, ` +
    `backends ${backends.join(", ")}, repairs ${repairs}, string repairs ${stringRepairs}, memory repairs ${memoryRepairs}`,
);

/** p50 and p95 per backend, workload and kind. */
const summary = new Map<string, { p50: number; p95: number }>();

for (const backend of backends) {
  console.log(`\n== backend ${backend} (load average ${loadAverage()})`);
  const started = performance.now();
  const client = new SolverClient({ timeoutMs, backend });
  const stats = await client.stats();
  const ready = performance.now() - started;
  const firstStarted = performance.now();
  await client.satisfiable({
    tool: { name: "t", parameters: [{ name: "x", type: "integer" }] },
    constraints: [parseExpression("a.x > 1")],
    directFirst: false,
  });
  console.log(
    `solver init: process ready in ${ready.toFixed(0)} ms (Z3 init ${stats.initMs.toFixed(0)} ms), ` +
      `first check ${(performance.now() - firstStarted).toFixed(0)} ms`,
  );
  for (const [key, name, make, count, seed] of workloads) {
    const result = await measure(client, make, count, seed);
    console.log(`${name}:`);
    for (const [kind, label] of kinds) {
      const sorted = sortedOf(result.times[kind]);
      summary.set(`${backend}/${key}/${kind}`, { p50: at(sorted, 0.5), p95: at(sorted, 0.95) });
      const extra = kind === "repair" ? `  outcomes ${JSON.stringify(result.outcomes)}` : "";
      console.log(`  ${label.padEnd(30)} ${percentiles(result.times[kind])}${extra}`);
    }
  }

  const before = await client.stats();
  const next = seededRandom(3);
  const memoryStarted = performance.now();
  let failures = 0;
  for (let index = 0; index < memoryRepairs; index++) {
    try {
      await client.repair({ ...realisticRequest(next), candidatesFirst: false });
    } catch {
      failures++;
    }
  }
  const after = await client.stats();
  console.log(
    `memory over ${memoryRepairs} repairs through Z3 (${((performance.now() - memoryStarted) / 1000).toFixed(0)} s, ` +
      `${failures} failures, ${client.starts - 1} restarts): solver process rss ${(before.rss / megabyte).toFixed(1)} MB → ` +
      `${(after.rss / megabyte).toFixed(1)} MB`,
  );
  await client.close();
}

console.log(`\nsummary (p50 / p95 in ms; target p95 ≤ ${targetMs} ms; load average now ${loadAverage()}):`);
const header = ["workload", ...backends.map((backend) => `${backend} p50 / p95`)];
if (backends.length === 2) header.push("native/wasm p50", "native/wasm p95");
console.log(`| ${header.join(" | ")} |`);
console.log(`| ${header.map(() => "---").join(" | ")} |`);
for (const [key] of workloads) {
  for (const [kind, label] of kinds) {
    const cells = backends.map((backend) => {
      const figures = summary.get(`${backend}/${key}/${kind}`);
      if (figures === undefined) return "–";
      const mark = figures.p95 <= targetMs ? "✓" : "✗";
      return `${figures.p50.toFixed(1)} / ${figures.p95.toFixed(1)} ${mark}`;
    });
    if (backends.length === 2) {
      const wasm = summary.get(`wasm/${key}/${kind}`);
      const native = summary.get(`native/${key}/${kind}`);
      if (wasm !== undefined && native !== undefined) {
        cells.push(`${(native.p50 / wasm.p50).toFixed(2)}×`, `${(native.p95 / wasm.p95).toFixed(2)}×`);
      }
    }
    console.log(`| ${key}: ${label} | ${cells.join(" | ")} |`);
  }
}
