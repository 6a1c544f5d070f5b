import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { MentorError } from "../src/errors/index.js";

/** The repository root (this file runs from `dist/bench/`). */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** A file of the repository's `bench/` sources (data files are not copied into `dist`). */
export function benchSource(...parts: string[]): string {
  return resolve(repoRoot, "bench", ...parts);
}

/** The policy mentor ships under an id (`policies/<id>/policy.yaml`), which a domain benchmarks. */
export function shippedPolicy(id: string): string {
  return resolve(repoRoot, "policies", id, "policy.yaml");
}

/**
 * `--data`, else `MENTOR_BENCH_DATA`, else `../shared/bench-data` beside the repository: the
 * third-party data the tau2 domains read (travel's is in the repository). The tests read their
 * own made-up data in the same formats (`test/fixtures/bench-data`).
 */
export function resolveDataDir(given?: string): string {
  const fromEnvironment = process.env.MENTOR_BENCH_DATA || undefined;
  const dir = resolve(given ?? fromEnvironment ?? resolve(repoRoot, "../shared/bench-data"));
  if (!existsSync(dir)) {
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `the benchmark data directory ${dir} does not exist: give --data DIR or set MENTOR_BENCH_DATA to a directory with tau2-bench's domain files (https://github.com/sierra-research/tau2-bench, data/tau2/domains) and tau-bench v1's airline database and tool schemas (https://github.com/sierra-research/tau-bench), laid out as bench/README.md "Benchmark data" describes`,
    );
  }
  return dir;
}
