import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SingleBar } from "cli-progress";
import { Command, InvalidArgumentError } from "commander";
import { apiBase } from "../src/agent/index.js";
import { MentorError } from "../src/errors/index.js";
import { type GpuChoice, parseGpuChoice } from "../src/llm/gpu.js";
import { loadRegistry, parseModelSpec } from "../src/models/index.js";
import { type RunningServer, startServer } from "../src/server/index.js";
import { type Agent, type AgentRun, defaultLimits, emptyRun, oracleAgent, serverAgent } from "./agent.js";
import type { BenchTask, Domain } from "./domains/domain.js";
import { domainNamed } from "./domains/index.js";
import { type ConditionSummary, summarize } from "./metrics.js";
import { resolveDataDir } from "./paths.js";
import { type BenchResults, formatNumber, type RunRecord, renderReport } from "./report.js";
import { currentBuild, readResults, settingsMismatch } from "./results-file.js";

export interface BenchOptions {
  domains: string[];
  /** `model` (the agent loop against a mentor server) or `oracle` (replays reference actions). */
  agent: "model" | "oracle";
  /**
   * The model: a registry name, a cached file or a .gguf path for the in-process server (default:
   * the registry's default model); with `server`, the id it serves the model under, or a name or
   * path of the file it serves (default: the one model it serves).
   */
  model?: string;
  /** The in-process server's llama.cpp backend. Default `auto`. */
  gpu?: GpuChoice;
  conditions: string[];
  runs: number;
  tasksFile?: string;
  /** The first N tasks of each domain. */
  limit?: number;
  out: string;
  dataDir?: string;
  server?: string;
  seed: number;
  temperature: number;
  eta?: number;
  /** The token shield's intent-keeping redirects (`mentor.intent`). Default true. */
  intent?: boolean;
  maxCalls: number;
  maxTokens: number;
  /** Tokens of KV cache of the in-process server's sequence (tau2 manuals and outputs are long). */
  contextSize: number;
  grounding: "server" | "oracle";
  /** Progress bar on standard error (default true). */
  progress?: boolean;
  /** Recorded in the results as the command that produced them. */
  command?: string;
  /**
   * Continue the results in `out`: runs already there (same settings) are kept and not run again,
   * except runs that failed with an error (a timeout, a server error), which run again.
   */
  resume?: boolean;
}

/** Runs every task of every domain `runs` times per condition; writes results.json and report.html. */
export async function runBenchmark(options: BenchOptions): Promise<BenchResults> {
  if (options.tasksFile !== undefined && options.domains.length !== 1) {
    throw new MentorError("MNT_ERR_BENCH_INPUT", "--tasks FILE needs exactly one --domain");
  }
  const domains = options.domains.map(domainNamed);
  // Only the tau2 domains read the data directory: travel runs in a clone without it.
  const dataDir = domains.some((domain) => domain.readsDataDir) ? resolveDataDir(options.dataDir) : "";
  const plan: { domain: Domain; tasks: BenchTask[] }[] = domains.map((domain) => {
    const tasks = domain.tasks({
      dataDir,
      ...(options.tasksFile ? { tasksFile: resolve(options.tasksFile) } : {}),
    });
    return { domain, tasks: options.limit === undefined ? tasks : tasks.slice(0, options.limit) };
  });
  const { agent, server, model } = await makeAgent(options);
  const conditions = options.agent === "oracle" ? ["oracle"] : options.conditions;
  const results: BenchResults = {
    meta: {
      command: options.command ?? "",
      started: new Date().toISOString(),
      finished: "",
      agent: options.agent,
      model: model ?? "(reference actions)",
      ...(options.agent === "model" ? { server: options.server ?? "in-process" } : {}),
      domains: options.domains,
      conditions,
      runs: options.runs,
      seed: options.seed,
      temperature: options.temperature,
      grounding: options.grounding,
      maxTokens: options.maxTokens,
      ...(options.eta !== undefined ? { eta: options.eta } : {}),
      ...(options.intent === false ? { intent: false } : {}),
      ...optionalBuild(),
      dataDir,
    },
    summary: [],
    runs: [],
  };
  const done = new Set<string>();
  const runKey = (domain: string, task: string, run: number, condition: string) =>
    JSON.stringify([domain, task, run, condition]);
  if (options.resume) {
    const earlier = join(options.out, "results.json");
    if (existsSync(earlier)) {
      const previous = readResults(earlier);
      const mismatch = settingsMismatch(
        { path: "this run", meta: results.meta },
        { path: earlier, meta: previous.meta },
      );
      if (mismatch !== undefined) throw new MentorError("MNT_ERR_BENCH_INPUT", `cannot resume: ${mismatch}`);
      // A run that failed with an error (a timeout, a server error) says nothing about the model: run it again.
      const kept = previous.runs.filter((run) => run.error === undefined);
      results.runs.push(...kept);
      results.meta.started = previous.meta.started;
      results.meta.command = `${previous.meta.command} && ${results.meta.command}`;
      if (previous.meta.build !== results.meta.build)
        results.meta.build = [previous.meta.build ?? "unknown", results.meta.build ?? "unknown"].join(", ");
      for (const run of kept) done.add(runKey(run.domain, run.task, run.run, run.condition));
    }
  }
  mkdirSync(options.out, { recursive: true });
  const total = plan.reduce((sum, { tasks }) => sum + tasks.length, 0) * conditions.length * options.runs;
  const bar =
    options.progress === false
      ? undefined
      : new SingleBar({
          format:
            "{bar} {value}/{total} runs | {percentage}% | elapsed {duration_formatted} | ETA {eta_formatted} | {what}",
          barsize: 30,
          hideCursor: true,
          stream: process.stderr,
          etaBuffer: 20,
          noTTYOutput: true,
          notTTYSchedule: 10000,
        });
  bar?.start(total, 0, { what: "" });
  try {
    await runPlan();
  } finally {
    bar?.stop();
    await server?.close();
  }
  save(results, options);
  return results;

  async function runPlan(): Promise<void> {
    for (const { domain, tasks } of plan) {
      for (const task of tasks) {
        for (let run = 0; run < options.runs; run++) {
          for (const condition of conditions) {
            if (done.has(runKey(domain.name, task.id, run, condition))) {
              bar?.increment();
              continue;
            }
            bar?.update({ what: `${domain.name} ${task.id} run ${run + 1} ${condition}` });
            results.runs.push(
              await runOnce({ agent, domain, task, dataDir, condition, run, seed: options.seed + run }),
            );
            bar?.increment();
          }
        }
        save(results, options);
      }
    }
  }
}

/**
 * The agent: the oracle, the model through `--server`, or else the model through a mentor server
 * started in this process on a free port (the domains' policies loaded by name, one sequence).
 */
async function makeAgent(
  options: BenchOptions,
): Promise<{ agent: Agent; server?: RunningServer; model?: string }> {
  if (options.agent === "oracle") return { agent: oracleAgent };
  let server: RunningServer | undefined;
  let url = options.server;
  if (url === undefined) {
    server = await startServer({
      model: options.model ?? loadRegistry().default,
      policies: options.domains,
      port: 0,
      sequences: 1,
      contextSize: options.contextSize,
      // --grounding oracle sends the ground truth in mentor fields.
      trustClientGrounding: options.grounding === "oracle",
      // As long as the client waits (agent.ts): a prompt-shield turn of several regenerations on
      // a loaded 2-core machine can pass the server's default 300 s.
      requestTimeoutMs: 15 * 60 * 1000,
      ...(options.gpu !== undefined ? { gpu: options.gpu } : {}),
      logger: false,
    });
    url = server.url;
  }
  let model: string;
  try {
    // The in-process server serves a path under its file name: ask it, as for --server.
    model = await servedModel(url, url === options.server ? options.model : undefined);
  } catch (error) {
    await server?.close();
    throw error;
  }
  const agent = serverAgent({
    url,
    model,
    temperature: options.temperature,
    limits: { ...defaultLimits, maxCalls: options.maxCalls },
    maxTokens: options.maxTokens,
    grounding: options.grounding,
    ...(options.eta !== undefined ? { eta: options.eta } : {}),
    ...(options.intent === false ? { intent: false } : {}),
  });
  return server ? { agent, server, model } : { agent, model };
}

/**
 * The id to send as `model`: the one the server at `url` serves (GET /v1/models), or `requested`
 * when the server lists it, also when `requested` names the served file (a path, a file name, or
 * a registry name whose file the server serves under its file name).
 */
export async function servedModel(url: string, requested: string | undefined): Promise<string> {
  const endpoint = `${apiBase(url)}/models`;
  let ids: string[];
  try {
    const response = await fetch(endpoint, {
      headers: { authorization: `Bearer ${process.env.MENTOR_API_KEY ?? "none"}` },
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await response.json()) as { data?: { id?: unknown }[]; error?: { message?: string } };
    if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
    ids = (body.data ?? []).flatMap((entry) => (typeof entry.id === "string" ? [entry.id] : []));
  } catch (error) {
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `cannot list the models of ${endpoint}: ${(error as Error).message}`,
    );
  }
  const served = ids[0];
  if (served === undefined) throw new MentorError("MNT_ERR_BENCH_INPUT", `${endpoint} lists no model`);
  if (requested === undefined || ids.includes(requested)) return requested ?? served;
  const fileId = (file: string) => basename(file).replace(/\.gguf$/i, "");
  const registry = loadRegistry();
  const candidates = [fileId(requested)];
  try {
    const spec = parseModelSpec(requested, registry);
    candidates.push(spec.kind === "path" ? fileId(spec.path) : fileId(spec.entry.file));
  } catch {
    // Neither a registry name nor a path: only the id itself could match.
  }
  // A path of a registry model's file: the server may serve it under the registry name.
  const byFile = registry.models.find((model) => model.file === basename(requested));
  if (byFile) candidates.push(byFile.name);
  const match = candidates.find((candidate) => ids.includes(candidate));
  if (match !== undefined) return match;
  throw new MentorError(
    "MNT_ERR_BENCH_INPUT",
    `the server at ${url} serves ${served}, not ${JSON.stringify(requested)}; pass --model ${served} or leave --model out`,
  );
}

async function runOnce(options: {
  agent: Agent;
  domain: Domain;
  task: BenchTask;
  dataDir: string;
  condition: string;
  run: number;
  seed: number;
}): Promise<RunRecord> {
  const { agent, domain, task, dataDir, condition, run, seed } = options;
  const environment = domain.environment(task, dataDir);
  const base = {
    domain: domain.name,
    condition,
    task: task.id,
    run,
    seed,
    solvable: task.solvable,
    ...(task.unsolvableReason ? { unsolvableReason: task.unsolvableReason } : {}),
  };
  let result: AgentRun;
  try {
    result = await agent.run({ domain, task, environment, dataDir, condition, seed });
  } catch (error) {
    if (error instanceof MentorError) throw error;
    const { calls: _, ...figures } = emptyRun("error");
    return {
      ...base,
      ...figures,
      pass: false,
      reasons: [],
      secondsPerCall: 0,
      error: (error as Error).message,
    };
  }
  const verdict = domain.evaluate(task, result.calls, environment, dataDir);
  const { calls: _, ...figures } = result;
  return {
    ...base,
    ...figures,
    pass: verdict.pass,
    reasons: verdict.reasons,
    secondsPerCall: result.proposed > 0 ? result.seconds / result.proposed : 0,
  };
}

function save(results: BenchResults, options: BenchOptions): void {
  results.summary = summarize(results.runs, options.runs);
  // The time of the last saved task, so that a stopped benchmark's results say when they end.
  results.meta.finished = new Date().toISOString();
  writeFileSync(join(options.out, "results.json"), `${JSON.stringify(results, null, 1)}\n`);
  writeFileSync(join(options.out, "report.html"), renderReport(results));
}

/** The summary as a Markdown table (printed at the end and pasted into RESULTS.md). */
export function summaryTable(summary: readonly ConditionSummary[]): string {
  const estimate = ({ mean, standardError }: { mean: number; standardError: number }) =>
    `${formatNumber(mean)} ± ${formatNumber(standardError)}`;
  const lines = [
    "| domain | condition | tasks | runs | Pass@1 | Pass@k | Pass^k | calls/task | blocked/task | s/call | overhead s/call | shield s/call |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...summary.map(
      (row) =>
        `| ${row.domain} | ${row.condition} | ${row.tasks} | ${row.runs} | ${estimate(row.passAt1)} | ${estimate(row.passAtK)} (k=${row.k}) | ${estimate(row.passHatK)} | ${estimate(row.proposedPerTask)} | ${estimate(row.blockedPerTask)} | ${formatNumber(row.secondsPerCall)} | ${formatNumber(row.overheadPerCall)} | ${formatNumber(row.shieldSecondsPerCall)} |`,
    ),
  ];
  return lines.join("\n");
}

function optionalBuild(): { build?: string } {
  const build = currentBuild(fileURLToPath(new URL(".", import.meta.url)));
  return build === undefined ? {} : { build };
}

export function integer(name: string, minimum: number) {
  return (text: string) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < minimum)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${minimum}`);
    return value;
  };
}

function number(name: string) {
  return (text: string) => {
    const value = Number(text);
    if (!Number.isFinite(value)) throw new InvalidArgumentError(`${name} must be a number`);
    return value;
  };
}

export function list(text: string): string[] {
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("npm run bench --")
    .description(
      "Benchmark: compliance and task success with no shield, the prompt shield and the token shield",
    )
    .requiredOption("--domain <names>", "domains, comma-separated (travel, tau2-mock)", list)
    .option("--agent <kind>", "model (against --server) or oracle (replays reference actions)", "model")
    .option(
      "--model <model>",
      "registry name, cached file or .gguf path of the in-process server's model (default: the registry's default); with --server: its model id, file or registry name (default: the model it serves)",
    )
    .option(
      "--gpu <backend>",
      "the in-process server's llama.cpp backend: auto, cpu, cuda, vulkan, metal",
      "auto",
    )
    .option("--conditions <names>", "shield conditions, comma-separated", list, ["none", "prompt", "token"])
    .option("--runs <k>", "runs per task and condition (Pass^k uses k = runs)", integer("--runs", 1), 5)
    .option("--tasks <file>", "a task file of the domain's format instead of its own tasks")
    .option("--limit <n>", "only the first n tasks of each domain", integer("--limit", 1))
    .option("--out <dir>", "where results.json and report.html go", "bench/results/latest")
    .option("--data <dir>", "benchmark data (default MENTOR_BENCH_DATA or ../shared/bench-data)")
    .option(
      "--server <url>",
      "a running mentor server (its OpenAI-compatible API, with or without /v1); default: one started in this process for --model",
    )
    .option("--seed <s>", "seed of run 1; run r uses seed + r - 1", integer("--seed", 0), 1)
    .option("--temperature <t>", "sampling temperature", number("--temperature"), 0.7)
    .option("--eta <eta>", "token shield boost sent as mentor.eta", number("--eta"))
    .option("--intent <on|off>", "the token shield's intent-keeping redirects (mentor.intent)", "on")
    .option(
      "--max-calls <n>",
      "proposed calls per run at most",
      integer("--max-calls", 1),
      defaultLimits.maxCalls,
    )
    .option("--max-tokens <n>", "tokens per generation at most", integer("--max-tokens", 1), 256)
    .option(
      "--context-size <n>",
      "context of the in-process server's model, in tokens",
      integer("--context-size", 512),
      16384,
    )
    .option(
      "--grounding <how>",
      "server (its labeler grounds the task and labels outputs) or oracle (the domain's ground truth)",
      "server",
    )
    .option("--resume", "continue the results in --out: runs already there are not run again")
    .option("--no-progress", "no progress bar");
  program.parse(argv);
  const raw = program.opts();
  if (raw.agent !== "model" && raw.agent !== "oracle") {
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `--agent must be model or oracle, not ${JSON.stringify(raw.agent)}`,
    );
  }
  if (raw.grounding !== "server" && raw.grounding !== "oracle") {
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `--grounding must be server or oracle, not ${JSON.stringify(raw.grounding)}`,
    );
  }
  if (raw.intent !== "on" && raw.intent !== "off") {
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `--intent must be on or off, not ${JSON.stringify(raw.intent)}`,
    );
  }
  for (const condition of raw.conditions as string[]) {
    if (!["none", "prompt", "token"].includes(condition)) {
      throw new MentorError(
        "MNT_ERR_BENCH_INPUT",
        `unknown condition ${JSON.stringify(condition)} (none, prompt, token)`,
      );
    }
  }
  const results = await runBenchmark({
    domains: raw.domain,
    agent: raw.agent,
    ...(raw.model !== undefined ? { model: raw.model } : {}),
    gpu: parseGpuChoice(raw.gpu),
    conditions: raw.conditions,
    runs: raw.runs,
    tasksFile: raw.tasks,
    limit: raw.limit,
    out: resolve(raw.out),
    dataDir: raw.data,
    server: raw.server,
    seed: raw.seed,
    temperature: raw.temperature,
    eta: raw.eta,
    intent: raw.intent === "on",
    maxCalls: raw.maxCalls,
    maxTokens: raw.maxTokens,
    contextSize: raw.contextSize,
    grounding: raw.grounding,
    progress: raw.progress,
    resume: raw.resume === true,
    command: `npm run bench -- ${argv.slice(2).join(" ")}`,
  });
  const errors = results.runs.filter((run) => run.error !== undefined);
  process.stdout.write(`${summaryTable(results.summary)}\n\n`);
  if (errors.length > 0)
    process.stdout.write(`${errors.length} run(s) failed with an error, e.g. ${errors[0]?.error}\n`);
  process.stdout.write(
    `results: ${join(resolve(raw.out), "results.json")}\nreport:  ${join(resolve(raw.out), "report.html")}\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await main(process.argv);
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    process.stderr.write(`bench: ${error.code}: ${error.message}\n`);
    process.exitCode = 2;
  }
}
