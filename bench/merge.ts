import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { MentorError } from "../src/errors/index.js";
import { summarize } from "./metrics.js";
import { type BenchResults, renderReport } from "./report.js";
import { readResults, settingsMismatch } from "./results-file.js";
import { summaryTable } from "./run.js";

/**
 * Results of several benchmark processes (task shards run at once, or a benchmark continued
 * after an interruption) as one: the runs concatenated, a run present twice (same domain, task,
 * condition and run number) kept from the first file, the summary recomputed.
 */
export function mergeResults(files: readonly { path: string; results: BenchResults }[]): {
  merged: BenchResults;
  duplicates: number;
} {
  const [first, ...rest] = files;
  if (!first) throw new MentorError("MNT_ERR_BENCH_INPUT", "merge needs at least one results file");
  for (const { path, results } of rest) {
    const mismatch = settingsMismatch(
      { path, meta: results.meta },
      { path: first.path, meta: first.results.meta },
    );
    if (mismatch !== undefined) throw new MentorError("MNT_ERR_BENCH_INPUT", mismatch);
  }
  const seen = new Set<string>();
  const runs: BenchResults["runs"] = [];
  let duplicates = 0;
  for (const { results } of files)
    for (const run of results.runs) {
      const key = JSON.stringify([run.domain, run.task, run.condition, run.run]);
      if (seen.has(key)) duplicates++;
      else {
        seen.add(key);
        runs.push(run);
      }
    }
  const merged: BenchResults = {
    meta: mergedMeta(files.map(({ results }) => results.meta)),
    summary: summarize(runs, first.results.meta.runs),
    runs,
  };
  return { merged, duplicates };
}

/**
 * The settings of several results files as one: the first file's, with the commands joined, the
 * earliest start, the latest finish, and the domains, conditions and builds of all.
 */
export function mergedMeta(metas: readonly BenchResults["meta"][]): BenchResults["meta"] {
  const [first] = metas;
  if (!first) throw new MentorError("MNT_ERR_BENCH_INPUT", "merge needs at least one results file");
  const union = (pick: (meta: BenchResults["meta"]) => string[]) => [...new Set(metas.flatMap(pick))];
  return {
    ...first,
    command: metas.map((meta) => meta.command).join(" && "),
    started: metas.map((meta) => meta.started).sort()[0] as string,
    finished: metas
      .map((meta) => meta.finished)
      .sort()
      .at(-1) as string,
    domains: union((meta) => meta.domains),
    conditions: union((meta) => meta.conditions),
    ...(metas.some((meta) => meta.build)
      ? { build: union((meta) => (meta.build ? [meta.build] : [])).join(", ") }
      : {}),
  };
}

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("npm run bench:merge --")
    .description("Merge results.json files of benchmark runs into one results.json and report.html")
    .argument("<results...>", "results.json files")
    .requiredOption("--out <dir>", "where the merged results.json and report.html go");
  program.parse(argv);
  const paths = program.args.map((path) => resolve(path));
  const { merged, duplicates } = mergeResults(paths.map((path) => ({ path, results: readResults(path) })));
  const out = resolve(program.opts().out);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "results.json"), `${JSON.stringify(merged, null, 1)}\n`);
  writeFileSync(join(out, "report.html"), renderReport(merged));
  process.stdout.write(`${summaryTable(merged.summary)}\n\n`);
  if (duplicates > 0) process.stdout.write(`${duplicates} run(s) present twice: kept from the first file\n`);
  process.stdout.write(`results: ${join(out, "results.json")}\nreport:  ${join(out, "report.html")}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await main(process.argv);
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    process.stderr.write(`bench:merge: ${error.code}: ${error.message}\n`);
    process.exitCode = 2;
  }
}
