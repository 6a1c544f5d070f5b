import { summarize } from "../../bench/metrics.js";
import type { BenchResults, RunRecord } from "../../bench/report.js";

/** A run record with the given figures; a failed run gets a reason, every run 0.5 s per call. */
export function runRecord(
  where: { domain?: string; task?: string; condition: string; run: number },
  figures: Partial<RunRecord> & { pass: boolean },
): RunRecord {
  return {
    domain: where.domain ?? "travel",
    condition: where.condition,
    task: where.task ?? "t01",
    run: where.run,
    seed: where.run,
    solvable: true,
    reasons: figures.pass ? [] : ["P2: flight under 500 km"],
    proposed: 3,
    blocked: 0,
    repaired: 0,
    violations: 0,
    doneRefusals: 0,
    seconds: 1.5,
    shieldSeconds: 0.1,
    secondsPerCall: 0.5,
    stopped: "answer",
    trace: [],
    ...figures,
  };
}

/** A results.json of these runs (k runs per task), with the meta of a plain `npm run bench`. */
export function benchResults(
  runs: RunRecord[],
  k: number,
  meta: Partial<BenchResults["meta"]> = {},
): BenchResults {
  return {
    meta: {
      command: "npm run bench",
      started: "s",
      finished: "f",
      agent: "model",
      model: "m",
      domains: [...new Set(runs.map((run) => run.domain))],
      conditions: [...new Set(runs.map((run) => run.condition))],
      runs: k,
      seed: 1,
      temperature: 0.7,
      grounding: "oracle",
      maxTokens: 256,
      dataDir: "/data",
      ...meta,
    },
    summary: summarize(runs, k),
    runs,
  };
}
