import { type Estimate, meanWithError } from "../src/dashboard/charts.js";
import { MentorError } from "../src/errors/index.js";

// The mean with its standard error is drawn by the charts too (src/dashboard/charts.ts).
export { type Estimate, meanWithError };

/** C(n, k), exact for the small n of benchmark runs. */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let result = 1;
  for (let i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
  return result;
}

function checkCounts(n: number, c: number, k: number): void {
  if (
    !(
      Number.isInteger(n) &&
      Number.isInteger(c) &&
      Number.isInteger(k) &&
      0 <= c &&
      c <= n &&
      1 <= k &&
      k <= n
    )
  ) {
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `pass estimators need integers 0 <= c <= n and 1 <= k <= n (n=${n}, c=${c}, k=${k})`,
    );
  }
}

/** Unbiased Pass^k of one task: the chance that k runs drawn from the n all pass, C(c,k)/C(n,k). */
export function passHatK(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  return binomial(c, k) / binomial(n, k);
}

/** Unbiased Pass@k of one task: the chance that at least one of k runs drawn from the n passes. */
export function passAtK(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  return 1 - binomial(n - c, k) / binomial(n, k);
}

/** A mean over tasks with its standard error (sample standard deviation / √tasks; 0 for one task). */
/** What the metrics read from one run of one task under one condition. */
export interface RunFigures {
  domain: string;
  condition: string;
  task: string;
  /** Left out of the pass scores when false. */
  solvable: boolean;
  pass: boolean;
  /** Tool calls the model proposed (executed or blocked). */
  proposed: number;
  blocked: number;
  repaired: number;
  /** Wall time of the model's turns in the run. */
  seconds: number;
  /** Of that, the shield's own time as the server reports it (grounding, the evaluator's questions). */
  shieldSeconds: number;
}

export interface ConditionSummary {
  domain: string;
  condition: string;
  /** Solvable tasks scored, and the runs per task (the smallest count over those tasks). */
  tasks: number;
  runs: number;
  passAt1: Estimate;
  passAtK: Estimate;
  passHatK: Estimate;
  k: number;
  /** Means per task (all tasks, solvable or not). */
  proposedPerTask: Estimate;
  blockedPerTask: Estimate;
  repairedPerTask: Estimate;
  /** Total model time / total proposed calls. */
  secondsPerCall: number;
  /** secondsPerCall minus that of the `none` condition of the same domain (NaN without one). */
  overheadPerCall: number;
  /** Total shield time / total proposed calls (measured in the server, any condition). */
  shieldSecondsPerCall: number;
}

/**
 * Pass@1, Pass@k and Pass^k (unbiased, averaged over solvable tasks, with standard errors) and
 * the cost figures, per domain × condition. k is capped by the runs each task has.
 */
export function summarize(runs: readonly RunFigures[], k: number): ConditionSummary[] {
  const groups = new Map<string, RunFigures[]>();
  for (const run of runs) {
    const key = `${run.domain}\u0000${run.condition}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const summaries = [...groups.values()].map((group) => summarizeGroup(group, k));
  for (const summary of summaries) {
    const baseline = summaries.find((other) => other.domain === summary.domain && other.condition === "none");
    summary.overheadPerCall = baseline ? summary.secondsPerCall - baseline.secondsPerCall : Number.NaN;
  }
  return summaries;
}

function summarizeGroup(group: RunFigures[], k: number): ConditionSummary {
  const first = group[0] as RunFigures;
  const byTask = new Map<string, RunFigures[]>();
  for (const run of group) byTask.set(run.task, [...(byTask.get(run.task) ?? []), run]);
  const scored = [...byTask.values()].filter((runs) => runs.every((run) => run.solvable));
  const counts = scored.map((runs) => ({ n: runs.length, c: runs.filter((run) => run.pass).length }));
  const runsPerTask = counts.length > 0 ? Math.min(...counts.map(({ n }) => n)) : 0;
  const kUsed = Math.max(1, Math.min(k, runsPerTask));
  const perTask = (estimator: (n: number, c: number, k: number) => number, at: number) =>
    meanWithError(counts.map(({ n, c }) => estimator(n, c, at)));
  const sumOf = (runs: RunFigures[], field: "proposed" | "blocked" | "repaired") =>
    runs.reduce((sum, run) => sum + run[field], 0) / runs.length;
  const tasks = [...byTask.values()];
  const proposed = group.reduce((sum, run) => sum + run.proposed, 0);
  const seconds = group.reduce((sum, run) => sum + run.seconds, 0);
  const shieldSeconds = group.reduce((sum, run) => sum + (run.shieldSeconds ?? 0), 0);
  return {
    domain: first.domain,
    condition: first.condition,
    tasks: counts.length,
    runs: runsPerTask,
    passAt1: perTask(passAtK, 1),
    passAtK: perTask(passAtK, kUsed),
    passHatK: perTask(passHatK, kUsed),
    k: kUsed,
    proposedPerTask: meanWithError(tasks.map((runs) => sumOf(runs, "proposed"))),
    blockedPerTask: meanWithError(tasks.map((runs) => sumOf(runs, "blocked"))),
    repairedPerTask: meanWithError(tasks.map((runs) => sumOf(runs, "repaired"))),
    secondsPerCall: proposed > 0 ? seconds / proposed : Number.NaN,
    overheadPerCall: Number.NaN,
    shieldSecondsPerCall: proposed > 0 ? shieldSeconds / proposed : Number.NaN,
  };
}
