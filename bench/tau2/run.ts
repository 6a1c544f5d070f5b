/**
 * npm run bench:tau2 — what a run of a tau2 domain costs outside the model: loading the tasks
 * (with the solvability rule), a fresh environment per run (copy-on-write view vs a full
 * structuredClone of the database, the baseline it replaces), replaying a task's reference
 * and evaluating it (which replays the reference once more and diffs the touched records),
 * and the policy's decision per reference call.
 *
 *   npm run bench:tau2
 *   MENTOR_BENCH_DATA=/path/to/bench-data npm run bench:tau2
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { tau2Airline } from "../domains/tau2-airline/index.js";
import { tau2Retail } from "../domains/tau2-retail/index.js";
import { blockedReferenceCalls } from "../domains/tau2-shared/reference-policy.js";

const repository = fileURLToPath(new URL("../../../", import.meta.url));
const dataDir = process.env.MENTOR_BENCH_DATA ?? join(repository, "..", "shared", "bench-data");
const ENVIRONMENTS = 2000;
const CLONES = 5;

function median(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function timed<T>(run: () => T): [T, number] {
  const started = performance.now();
  const result = run();
  return [result, performance.now() - started];
}

for (const domain of [tau2Retail, tau2Airline]) {
  const [, firstLoad] = timed(() => domain.freshEnvironment(dataDir));
  const [tasks, taskLoad] = timed(() => domain.tasks({ dataDir }));
  const solvable = tasks.filter((task) => task.solvable).length;

  const views: number[] = [];
  for (let index = 0; index < ENVIRONMENTS; index++)
    views.push(timed(() => domain.freshEnvironment(dataDir))[1]);
  const state = domain.freshEnvironment(dataDir).state();
  const clones: number[] = [];
  for (let index = 0; index < CLONES; index++) clones.push(timed(() => structuredClone(state))[1]);

  const replays: number[] = [];
  for (const task of tasks) {
    replays.push(
      timed(() => {
        const environment = domain.environment(task, dataDir);
        const run = (task.reference ?? []).map((action) => ({
          ...action,
          ...environment.call(action.name, action.arguments),
        }));
        if (!domain.evaluate(task, run, environment, dataDir).pass)
          throw new Error(`oracle failed: ${task.id}`);
      })[1],
    );
  }
  const calls = tasks.reduce((sum, task) => sum + (task.reference?.length ?? 0), 0);
  const [blocked, policyTime] = timed(() =>
    blockedReferenceCalls(domain.policyPath, tasks, () => domain.freshEnvironment(dataDir)),
  );

  const view = median(views);
  const clone = median(clones);
  process.stdout.write(
    [
      `${domain.name}: ${tasks.length} train tasks, ${solvable} solvable as one opening message`,
      `  first load (parse + freeze the database): ${firstLoad.toFixed(0)} ms; tasks with solvability: ${taskLoad.toFixed(0)} ms`,
      `  fresh environment: ${(view * 1000).toFixed(1)} µs (median of ${ENVIRONMENTS}); structuredClone of the database: ${clone.toFixed(1)} ms (median of ${CLONES}); ratio ${(clone / view).toFixed(0)}×`,
      `  reference replay + evaluation: median ${median(replays).toFixed(2)} ms per task, max ${Math.max(...replays).toFixed(2)} ms`,
      `  policy over the reference traces: ${policyTime.toFixed(0)} ms for ${calls} calls (${(policyTime / calls).toFixed(1)} ms per call, first call included); ${blocked.length} blocked in ${new Set(blocked.map((block) => block.task)).size} traces`,
      "",
    ].join("\n"),
  );
}
