/**
 * npm run bench:tau2 — what a run of a tau2 domain costs outside the model: loading the tasks
 * (with the solvability rule), a fresh environment per run (copy-on-write view vs a full
 * structuredClone of the database, the baseline it replaces), replaying a task's reference
 * and evaluating it (which replays the reference once more and diffs the touched records),
 * and the policy's decision per reference call. Then the checks of the policies against the
 * real data that the tests (which read made-up data, test/fixtures/bench-data) cannot make:
 * the oracle passes every solvable task, the mock policy cites tau2's manual word for word, and
 * how the policies' patterns ground the real openings next to the oracle grounding.
 *
 *   npm run bench:tau2
 *   MENTOR_BENCH_DATA=/path/to/bench-data npm run bench:tau2
 */
import { performance } from "node:perf_hooks";
import { Evaluator } from "../../src/evaluator/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { tau2Airline } from "../domains/tau2-airline/index.js";
import { tau2Mock } from "../domains/tau2-mock/index.js";
import { tau2Retail } from "../domains/tau2-retail/index.js";
import {
  blockedReferenceCalls,
  compareGrounding,
  countKinds,
  replayCalls,
} from "../domains/tau2-shared/reference-policy.js";
import { resolveDataDir } from "../paths.js";

const dataDir = resolveDataDir();
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

/** Per domain, the reference calls its policy blocks with no grounding (the timed replay below). */
const ungroundedBlocks = new Map<string, ReturnType<typeof blockedReferenceCalls>>();
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
  ungroundedBlocks.set(domain.name, blocked);

  // Per rule, the reference calls it blocks, and of those the ones no other rule blocks too.
  const byRule = new Map<string, { all: number; alone: number }>();
  for (const block of blocked)
    for (const rule of block.rules) {
      const count = byRule.get(rule) ?? { all: 0, alone: 0 };
      count.all++;
      if (block.rules.length === 1) count.alone++;
      byRule.set(rule, count);
    }
  const view = median(views);
  const clone = median(clones);
  process.stdout.write(
    [
      `${domain.name}: ${tasks.length} train tasks, ${solvable} solvable as one opening message`,
      `  first load (parse + freeze the database): ${firstLoad.toFixed(0)} ms; tasks with solvability: ${taskLoad.toFixed(0)} ms`,
      `  fresh environment: ${(view * 1000).toFixed(1)} µs (median of ${ENVIRONMENTS}); structuredClone of the database: ${clone.toFixed(1)} ms (median of ${CLONES}); ratio ${(clone / view).toFixed(0)}×`,
      `  reference replay + evaluation: median ${median(replays).toFixed(2)} ms per task, max ${Math.max(...replays).toFixed(2)} ms`,
      `  policy over the reference traces: ${policyTime.toFixed(0)} ms for ${calls} calls (${(policyTime / calls).toFixed(1)} ms per call, first call included); ${blocked.length} blocked in ${new Set(blocked.map((block) => block.task)).size} traces`,
      `  blocks per rule (alone: no other rule blocks the call): ${[...byRule]
        .map(([rule, { all, alone }]) => `${rule} ${all} (alone ${alone})`)
        .join(", ")}`,
      "",
    ].join("\n"),
  );
}

process.stdout.write("checks against the real data\n");
const mockTasks = tau2Mock.tasks({ dataDir });
for (const task of mockTasks.filter((one) => one.solvable)) {
  const environment = tau2Mock.environment(task, dataDir);
  const run = (task.reference ?? []).map((action) => ({
    ...action,
    ...environment.call(action.name, action.arguments),
  }));
  if (!tau2Mock.evaluate(task, run, environment, dataDir).pass) throw new Error(`oracle failed: ${task.id}`);
}
const mockManual = tau2Mock.manual(dataDir);
const uncited = Object.entries(loadPolicy(tau2Mock.policyPath).manual).filter(
  ([, sentence]) => !mockManual.includes(sentence),
);
if (uncited.length > 0) {
  throw new Error(
    `tau2-mock's policy cites sentences its manual lacks: ${uncited.map(([id]) => id).join(", ")}`,
  );
}
process.stdout.write(
  `  tau2-mock: the oracle passes the ${mockTasks.filter((one) => one.solvable).length} solvable of ${mockTasks.length} tasks; every rule's manual sentence is in policy.md\n`,
);
for (const domain of [tau2Mock, tau2Retail, tau2Airline]) {
  const tasks = domain.tasks({ dataDir });
  const counts = countKinds(await compareGrounding(domain, tasks));
  const evaluator = new Evaluator(loadPolicy(domain.policyPath));
  const solvable = tasks.filter((task) => task.solvable);
  const replays = solvable.map((task) =>
    replayCalls(
      evaluator,
      task,
      task.reference ?? [],
      domain.grounding?.(task) ?? [],
      domain.environment(task, dataDir),
    ),
  );
  const finished = replays.filter((replay) => replay.doneAllowed).length;
  // The reference calls blocked only with the grounding (by rules that read the request), with their rules.
  const ungrounded = new Set(
    (
      ungroundedBlocks.get(domain.name) ??
      solvable.flatMap(
        (task) =>
          replayCalls(evaluator, task, task.reference ?? [], [], domain.environment(task, dataDir)).blocked,
      )
    ).map((block) => `${block.task} ${block.position}`),
  );
  const requestBlocks = replays
    .flatMap((replay) => replay.blocked)
    .filter((block) => !ungrounded.has(`${block.task} ${block.position}`));
  process.stdout.write(
    `  ${domain.name}: patterns vs oracle grounding over ${tasks.length} openings: ${counts.agree} agree, ${counts.partial} partly, ${counts.extra} with a request the oracle lacks, ${counts.none} ground nothing the oracle grounds; the reference with the oracle grounding ends with done allowed in ${finished} of ${solvable.length} solvable tasks; it blocks ${requestBlocks.length} reference calls that pass without it${requestBlocks.map((block) => ` (task ${block.task}: ${block.rules.join(", ")})`).join("")}\n`,
  );
}
