import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { MentorError } from "../../src/errors/index.js";
import { mergedMeta } from "../merge.js";
import { readResults } from "../results-file.js";
import { readRuns, savedSummary, saveResults } from "./results.js";

/**
 * The runs saved under several `--out` folders of `npm run bench:sopbench` (shards, or days of
 * one measurement) as one results.json and report.html: a run is keyed by its file's place
 * (domain, env mode, condition, task, run index), so a run present in two folders counts once.
 */
async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("npm run bench:sopbench:merge --")
    .description(
      "Merge the runs of several bench:sopbench --out folders: Pass@1 and Pass^k per domain × condition",
    )
    .argument("<dirs...>", "--out folders of bench:sopbench")
    .requiredOption("--out <dir>", "where the merged results.json and report.html go");
  program.parse(argv);
  const dirs = program.args.map((dir) => resolve(dir));
  const seen = new Set<string>();
  const runs = readRuns(dirs).filter((run) => {
    const key = JSON.stringify([run.domain, run.envMode, run.condition, run.action, run.index, run.run]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const metas = dirs.map((dir) => readResults(join(dir, "results.json")).meta);
  const out = resolve(program.opts().out);
  mkdirSync(out, { recursive: true });
  const results = saveResults(out, runs, {
    ...mergedMeta(metas),
    runs: Math.max(...metas.map((meta) => meta.runs)),
  });
  process.stdout.write(savedSummary(out, results));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await main(process.argv);
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    process.stderr.write(`bench:sopbench:merge: ${error.code}: ${error.message}\n`);
    process.exitCode = 2;
  }
}
