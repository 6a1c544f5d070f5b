import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { MentorError } from "../src/errors/index.js";
import type { BenchResults } from "./report.js";

/** Settings that must agree for runs of several results files to be scored together. */
export const sameSettings = [
  "agent",
  "model",
  "runs",
  "seed",
  "temperature",
  "grounding",
  "maxTokens",
  "eta",
  "intent",
] as const;

/** The first setting on which two results differ, as a sentence naming both files; undefined if none. */
export function settingsMismatch(
  results: { path: string; meta: BenchResults["meta"] },
  first: { path: string; meta: BenchResults["meta"] },
): string | undefined {
  for (const field of sameSettings)
    if (results.meta[field] !== first.meta[field])
      return `${results.path}: meta.${field} is ${JSON.stringify(results.meta[field])}, but ${first.path} has ${JSON.stringify(first.meta[field])}`;
  return undefined;
}

export function readResults(path: string): BenchResults {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new MentorError("MNT_ERR_BENCH_INPUT", `${path}: ${(error as Error).message}`);
  }
  let results: BenchResults;
  try {
    results = JSON.parse(text) as BenchResults;
  } catch (error) {
    throw new MentorError("MNT_ERR_BENCH_INPUT", `${path}: not JSON (${(error as Error).message})`);
  }
  if (typeof results?.meta !== "object" || !Array.isArray(results.runs))
    throw new MentorError("MNT_ERR_BENCH_INPUT", `${path}: not a benchmark results.json (meta and runs)`);
  return results;
}

/**
 * The build that runs: the checkout's commit, `+dirty` when tracked files differ from it
 * (RESULTS.md names the build of each shard); undefined outside a git checkout.
 */
export function currentBuild(directory: string): string | undefined {
  try {
    const git = (...args: string[]) =>
      execFileSync("git", args, {
        cwd: directory,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
    const commit = git("rev-parse", "--short", "HEAD");
    return git("status", "--porcelain", "--untracked-files=no") === "" ? commit : `${commit}+dirty`;
  } catch {
    return undefined;
  }
}
