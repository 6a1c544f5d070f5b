import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { Command } from "commander";
import type { TurnGenerator } from "../../src/agent/index.js";
import { apiBase } from "../../src/agent/index.js";
import { MentorError } from "../../src/errors/index.js";
import { type GpuChoice, parseGpuChoice } from "../../src/llm/gpu.js";
import { loadRegistry } from "../../src/models/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { ensureVenvFromRequirements } from "../conformance/venv.js";
import { benchSource, repoRoot } from "../paths.js";
import type { BenchResults } from "../report.js";
import { currentBuild } from "../results-file.js";
import { integer, list, servedModel } from "../run.js";
import { readRuns, runFile, type SopbenchRun, savedSummary, saveResults } from "./results.js";

export const sopbenchDomains = [
  "bank",
  "dmv",
  "healthcare",
  "hotel",
  "library",
  "online_market",
  "university",
];

export interface SopbenchOptions {
  domains: string[];
  /** Tasks per domain, taken round-robin over the actions of data/<domain>_tasks.json. Default all. */
  limit?: number;
  runs: number;
  conditions: string[];
  envMode: "prompt" | "program";
  /** Skip runs already saved in `out` (those that failed with an error run again). */
  resume?: boolean;
  out: string;
  /** The SOPBench folder (default MENTOR_BENCH_DATA/sopbench, else ../shared/bench-data/sopbench). */
  dataDir?: string;
  /** A running server's URL; default one started in this process. */
  server?: string;
  model?: string;
  gpu?: GpuChoice;
  threads?: number;
  contextSize: number;
  /** The in-process server's search time (`searchMs`); default 30,000 ms, so its decision budget alone shapes the advice. */
  searchMs?: number;
  /** Where `sopbench-<domain>/policy.yaml` are (default the repository's policies/). */
  policyDir?: string;
  /** The in-process server's labeler (default its own: the model). */
  labeler?: "model" | "rules";
  /** Any generator of turns instead of a model, for the in-process server (tests: a scripted agent). */
  generator?: TurnGenerator;
  python?: string;
  command?: string;
}

/** The SOPBench folder: `given`, else `MENTOR_BENCH_DATA/sopbench`, else `../shared/bench-data/sopbench`. */
export function sopbenchDataDir(given?: string): string {
  const fromEnvironment = process.env.MENTOR_BENCH_DATA
    ? join(process.env.MENTOR_BENCH_DATA, "sopbench")
    : undefined;
  const dir = resolve(given ?? fromEnvironment ?? resolve(repoRoot, "../shared/bench-data/sopbench"));
  if (!existsSync(join(dir, "run_simulation.py")) || !existsSync(join(dir, "data")))
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `${dir} is not a SOPBench folder (run_simulation.py, env/, swarm/, data/): give --data DIR (a clone of https://github.com/Leezekun/SOPBench) or set MENTOR_BENCH_DATA to a folder holding sopbench/`,
    );
  return dir;
}

/**
 * `limit` tasks of a domain spread over its actions: the first task of each action in the file's
 * order, then the second of each, and so on (deterministic).
 */
export function pickTasks(tasksFile: string, limit?: number): { action: string; index: number }[] {
  const byAction = JSON.parse(readFileSync(tasksFile, "utf8")) as Record<string, unknown[]>;
  const picked: { action: string; index: number }[] = [];
  const deepest = Math.max(0, ...Object.values(byAction).map((tasks) => tasks.length));
  for (let index = 0; index < deepest; index++)
    for (const [action, tasks] of Object.entries(byAction))
      if (index < tasks.length) picked.push({ action, index });
  return limit === undefined ? picked : picked.slice(0, limit);
}

/** The policy of a domain: its file under `policyDir` (a missing one is an error naming it). */
export function domainPolicy(policyDir: string, domain: string): { file: string; name: string } {
  const file = join(policyDir, `sopbench-${domain}`, "policy.yaml");
  if (!existsSync(file))
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `no policy for SOPBench domain ${domain}: ${file} does not exist (policies/sopbench-<domain>/policy.yaml, or --policy-dir)`,
    );
  return { file, name: loadPolicy(file).name };
}

/** The venv with what SOPBench's harness imports (bench/sopbench/requirements.txt), under the user's cache. */
export function sopbenchPython(python: string): string {
  const requirements = benchSource("sopbench", "requirements.txt");
  const hash = createHash("sha256").update(readFileSync(requirements)).digest("hex").slice(0, 12);
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  return ensureVenvFromRequirements(
    join(cache, "mentor", "venvs", `sopbench-${hash}`),
    python,
    requirements,
    (message) => {
      throw new MentorError("MNT_ERR_BENCH_INPUT", message);
    },
  );
}

/** Runs SOPBench's harness on the chosen tasks, runs and conditions; saves each run, then results.json and report.html. */
export async function runSopbench(options: SopbenchOptions): Promise<BenchResults> {
  for (const domain of options.domains)
    if (!sopbenchDomains.includes(domain))
      throw new MentorError(
        "MNT_ERR_BENCH_INPUT",
        `unknown SOPBench domain ${JSON.stringify(domain)} (${sopbenchDomains.join(", ")})`,
      );
  const dataDir = sopbenchDataDir(options.dataDir);
  const policyDir = resolve(options.policyDir ?? join(repoRoot, "policies"));
  const policies = new Map(options.domains.map((domain) => [domain, domainPolicy(policyDir, domain)]));
  const python = sopbenchPython(options.python ?? process.env.MENTOR_PYTHON ?? "python3");
  const driver = benchSource("sopbench", "driver.py");
  let server: RunningServer | undefined;
  let url = options.server;
  if (url === undefined) {
    server = await startServer({
      ...(options.generator
        ? { generator: options.generator, modelId: "scripted" }
        : { model: options.model ?? loadRegistry().default }),
      policies: [...policies.values()].map((policy) => policy.file),
      port: 0,
      sequences: 1,
      contextSize: options.contextSize,
      searchMs: options.searchMs ?? 30_000,
      requestTimeoutMs: 15 * 60 * 1000,
      ...(options.threads !== undefined ? { threads: options.threads } : {}),
      ...(options.gpu !== undefined ? { gpu: options.gpu } : {}),
      ...(options.labeler !== undefined ? { labeler: options.labeler } : {}),
      logger: false,
    });
    url = server.url;
  }
  mkdirSync(options.out, { recursive: true });
  const started = new Date().toISOString();
  try {
    const model = await servedModel(url, url === options.server ? options.model : undefined);
    for (const domain of options.domains) {
      const policy = policies.get(domain) as { name: string };
      for (const { action, index } of pickTasks(join(dataDir, "data", `${domain}_tasks.json`), options.limit))
        for (let run = 0; run < options.runs; run++)
          for (const condition of options.conditions) {
            const where = { domain, envMode: options.envMode, condition, action, index, run };
            const file = runFile(options.out, where);
            if (
              options.resume &&
              existsSync(file) &&
              (JSON.parse(readFileSync(file, "utf8")) as SopbenchRun).evaluation
            )
              continue;
            process.stderr.write(
              `sopbench ${domain} ${action}/${index} run ${run + 1} ${condition} (${options.envMode})\n`,
            );
            mkdirSync(resolve(file, ".."), { recursive: true });
            const served = `${model}:${condition}`;
            await promisify(execFile)(
              python,
              [
                driver,
                "--sopbench",
                dataDir,
                "--domain",
                domain,
                "--action",
                action,
                "--index",
                String(index),
                "--env-mode",
                options.envMode,
                "--base-url",
                apiBase(url),
                "--model",
                served,
                "--policy",
                policy.name,
                "--out",
                file,
              ],
              { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, PYTHONUNBUFFERED: "1" } },
            ).catch((error: Error & { stderr?: string }) => {
              throw new MentorError(
                "MNT_ERR_BENCH_INPUT",
                `SOPBench's harness failed on ${domain} ${action}/${index}: ${(error.stderr ?? error.message).trim().split("\n").slice(-6).join("\n")}`,
              );
            });
            const saved = JSON.parse(readFileSync(file, "utf8")) as Omit<SopbenchRun, keyof typeof where>;
            writeFileSync(
              file,
              `${JSON.stringify({ ...where, ...saved, model: served, policy: policy.name }, null, 1)}\n`,
            );
          }
    }
    return saveResults(options.out, readRuns([options.out]), {
      command: options.command ?? "",
      started,
      finished: new Date().toISOString(),
      agent: "sopbench",
      model,
      server: options.server ?? "in-process",
      domains: options.domains.map((domain) => `sopbench-${domain}`),
      conditions: options.conditions,
      runs: options.runs,
      seed: 0,
      temperature: 0,
      grounding: "server",
      maxTokens: 512,
      ...optionalBuild(),
      dataDir,
    });
  } finally {
    await server?.close();
  }
}

function optionalBuild(): { build?: string } {
  const build = currentBuild(repoRoot);
  return build === undefined ? {} : { build };
}

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("npm run bench:sopbench --")
    .description("SOPBench's own harness and scorer against mentor serve (in process, or --server)")
    .option(
      "--domains <names>",
      `SOPBench domains, comma-separated (${sopbenchDomains.join(", ")})`,
      list,
      sopbenchDomains,
    )
    .option("--limit <n>", "tasks per domain, spread round-robin over its actions", integer("--limit", 1))
    .option("--runs <k>", "runs per task and condition (Pass^k uses k = runs)", integer("--runs", 1), 1)
    .option("--conditions <names>", "shield conditions, comma-separated (the model id suffix)", list, [
      "none",
      "prompt",
      "token",
    ])
    .option(
      "--env-mode <mode>",
      "prompt (the agent checks the SOP) or program (the tools check it: SOPBench's code guard)",
      "prompt",
    )
    .option("--resume", "skip runs already saved in --out")
    .option("--out <dir>", "where runs/, results.json and report.html go", "bench/results/sopbench")
    .option(
      "--data <dir>",
      "the SOPBench folder (default MENTOR_BENCH_DATA/sopbench or ../shared/bench-data/sopbench)",
    )
    .option(
      "--server <url>",
      "a running mentor server with the sopbench-<domain> policies; default: one started in this process",
    )
    .option(
      "--model <model>",
      "registry name, cached file or .gguf path of the in-process server's model; with --server its model id",
    )
    .option("--policy-dir <dir>", "the folder of sopbench-<domain>/policy.yaml (default policies/)")
    .option(
      "--gpu <backend>",
      "the in-process server's llama.cpp backend: auto, cpu, cuda, vulkan, metal",
      "auto",
    )
    .option("--threads <n>", "the in-process server's threads", integer("--threads", 1))
    .option(
      "--context-size <n>",
      "context of the in-process server's model, in tokens",
      integer("--context-size", 512),
      16384,
    )
    .option(
      "--search-ms <ms>",
      "the in-process server's time for one search for advice or redirects (default 30000: the decision budget decides, not the load)",
      integer("--search-ms", 1),
    );
  program.parse(argv);
  const raw = program.opts();
  for (const condition of raw.conditions as string[])
    if (!["none", "prompt", "token"].includes(condition))
      throw new MentorError(
        "MNT_ERR_BENCH_INPUT",
        `unknown condition ${JSON.stringify(condition)} (none, prompt, token)`,
      );
  if (raw.envMode !== "prompt" && raw.envMode !== "program")
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `--env-mode must be prompt or program, not ${JSON.stringify(raw.envMode)}`,
    );
  const out = resolve(raw.out);
  const results = await runSopbench({
    domains: raw.domains,
    limit: raw.limit,
    runs: raw.runs,
    conditions: raw.conditions,
    envMode: raw.envMode,
    resume: raw.resume === true,
    out,
    dataDir: raw.data,
    server: raw.server,
    model: raw.model,
    policyDir: raw.policyDir,
    gpu: parseGpuChoice(raw.gpu),
    threads: raw.threads,
    contextSize: raw.contextSize,
    searchMs: raw.searchMs,
    command: `npm run bench:sopbench -- ${argv.slice(2).join(" ")}`,
  });
  process.stdout.write(savedSummary(out, results));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await main(process.argv);
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    process.stderr.write(`bench:sopbench: ${error.code}: ${error.message}\n`);
    process.exitCode = 2;
  }
}
