/**
 * npm run bench:decode — the engine's speed on a real model, one request at a time, through
 * `Engine.generate` (what the server calls):
 *
 *   npm run bench:decode                         # the registry's default model, from the cache
 *   npm run bench:decode -- --model NAME|PATH    # another model (registry name, cached file or .gguf path; not fetched)
 *   npm run bench:decode -- --tiny               # also a tiny random Qwen 3 model made on the fly (seconds)
 *   npm run bench:decode -- --threads 1 --prompt-runs 1 --gen-runs 1 --rounds 2 --calls 3   # shorter
 *
 * Three measurements per model, the 1-minute load average beside each figure (another process on
 * the same cores slows every figure down):
 * 1. Threads: for each `--threads` count, a fresh engine; prompt evaluation tokens/s (the travel
 *    manual, the request and the four tools, nothing cached: each run starts with another first
 *    line), then generation tokens/s (free text after that prompt, the prompt cached).
 * 2. Shield: `none` (a required call, syntax masks only) against `token` (the same call under the
 *    travel policy's sets), alternating generation by generation on the same prompt and seeds:
 *    seconds per call, sampled tokens/s (forced structure's evaluation included), the shield's
 *    mask compute per step, and the ratios token / none.
 * 3. Conversation: `--calls` successive calls of one conversation per mode (each call appends the
 *    previous call and the travel environment's result, with its ground-truth label, as the
 *    benchmark's oracle grounding does; tool_choice required), the conversation's earlier turns
 *    found in the KV cache: seconds per call, the first call apart.
 * Sections 2 and 3 run on the engine of the first `--threads` count (or `--shield-threads`).
 * With the defaults, Qwen2.5-Coder 1.5B Q4_K_M takes about 3 minutes on two idle cores.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import {
  assistantMessage,
  Engine,
  type GenerateOptions,
  type GenerationResult,
} from "../../src/engine-entry.js";
import { type ChatMessage, type ChatTool, Evaluator, loadPolicy, shieldSetsFor } from "../../src/index.js";
import { type GpuChoice, gpuName, parseGpuChoice } from "../../src/llm/gpu.js";
import { formatBytes, loadRegistry, makeTinyModel, resolveModel } from "../../src/models/index.js";
import { travel } from "../domains/travel/index.js";

interface DecodeOptions {
  threads: number[];
  shieldThreads: number;
  promptRuns: number;
  genRuns: number;
  genTokens: number;
  rounds: number;
  calls: number;
  conversations: number;
  contextSize: number;
  temperature: number;
  gpu: GpuChoice;
}

const request = "Book a flight from Toronto to Chicago for me, business class please.";
const grounding = {
  task: [{ name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } }],
};
const tools = travel.tools("") as ChatTool[];
const policy = loadPolicy(travel.policyPath);
// One evaluator for the whole run, as the server keeps one per policy (it keeps what its searches learn).
const evaluator = new Evaluator(policy);

/** The benchmark's opening: the manual as system prompt, the request (grounded), the tools. */
function opening(firstLine = ""): ChatMessage[] {
  return [
    { role: "system", content: `${firstLine}${travel.manual("")}` },
    { role: "user", content: request, mentor: grounding },
  ];
}

function shieldFor(mode: "none" | "token", messages: readonly ChatMessage[]): GenerateOptions["shield"] {
  if (mode === "none") return { mode: "none" };
  // The sets the server's token shield uses (with the intent-keeping redirects).
  return { mode: "token", sets: shieldSetsFor(evaluator, messages), eta: 0.5 };
}

const load = (): string => loadavg()[0]?.toFixed(2) ?? "?";
const seconds = (ms: number): string => (ms / 1000).toFixed(2);
const rate = (tokens: number, ms: number): string => (ms > 0 ? (tokens / (ms / 1000)).toFixed(1) : "-");
const row = (cells: (string | number)[]): string => `| ${cells.join(" | ")} |`;

async function loadEngine(modelPath: string, threads: number, options: DecodeOptions): Promise<Engine> {
  const engine = await Engine.load({
    modelPath,
    threads,
    contextSize: options.contextSize,
    sequences: 1,
    gpu: options.gpu,
  });
  // The first evaluation after a load pages the weights in: not part of any figure.
  await engine.generate({ messages: [{ role: "user", content: "Hi" }], maxTokens: 1, toolChoice: "none" });
  return engine;
}

/** 1. Prompt evaluation and generation tokens/s at one thread count (a fresh engine). */
async function measureThreads(engine: Engine, threads: number, options: DecodeOptions): Promise<string> {
  let promptTokens = 0;
  let promptMs = 0;
  for (let run = 0; run < options.promptRuns; run++) {
    // Another first line per run: only the few tokens before it are found in the cache.
    const result = await engine.generate({
      messages: opening(`Session ${threads}-${run + 1}.\n`),
      tools,
      toolChoice: "none",
      maxTokens: 1,
      seed: run,
      temperature: options.temperature,
    });
    promptTokens += result.stats.promptTokens - result.stats.reusedTokens;
    promptMs += result.stats.ms;
  }
  let sampled = 0;
  let genMs = 0;
  for (let run = 0; run < options.genRuns; run++) {
    const result = await engine.generate({
      messages: opening(`Session ${threads}-${options.promptRuns}.\n`),
      tools,
      toolChoice: "none",
      maxTokens: options.genTokens,
      seed: 10 + run,
      temperature: options.temperature,
    });
    sampled += result.stats.sampled;
    genMs += result.stats.ms;
  }
  return row([
    threads,
    promptTokens,
    seconds(promptMs),
    rate(promptTokens, promptMs),
    sampled,
    seconds(genMs),
    rate(sampled, genMs),
    load(),
  ]);
}

interface ModeTotals {
  calls: number;
  sampled: number;
  ms: number;
  maskSteps: number;
  maskMs: number;
  vetoed: number;
}

/** 2. `none` against `token` on the same prompt and seeds, alternating. */
async function measureShield(engine: Engine, options: DecodeOptions): Promise<string[]> {
  const totals: Record<"none" | "token", ModeTotals> = {
    none: { calls: 0, sampled: 0, ms: 0, maskSteps: 0, maskMs: 0, vetoed: 0 },
    token: { calls: 0, sampled: 0, ms: 0, maskSteps: 0, maskMs: 0, vetoed: 0 },
  };
  const messages = opening();
  // Evaluates the prompt once, so that every measured call finds it cached.
  await engine.generate({ messages, tools, toolChoice: "none", maxTokens: 1, seed: 0 });
  const lines: string[] = [];
  for (let round = 0; round < options.rounds; round++)
    for (const mode of ["none", "token"] as const) {
      const result = await engine.generate({
        messages,
        tools,
        toolChoice: "required",
        shield: shieldFor(mode, messages),
        seed: 100 + round,
        temperature: options.temperature,
        maxStringTokens: 48,
        maxTokens: 200,
      });
      const total = totals[mode];
      total.calls += 1;
      total.sampled += result.stats.sampled;
      total.ms += result.stats.ms;
      total.maskSteps += result.stats.maskSteps;
      total.maskMs += result.stats.maskMs;
      total.vetoed += result.stats.vetoed;
    }
  for (const [mode, total] of Object.entries(totals)) {
    const perStep = total.maskSteps > 0 ? ((total.maskMs / total.maskSteps) * 1000).toFixed(1) : "-";
    lines.push(
      row([
        mode,
        total.calls,
        seconds(total.ms / total.calls),
        total.sampled,
        rate(total.sampled, total.ms),
        perStep,
        total.vetoed,
        load(),
      ]),
    );
  }
  const { none, token } = totals;
  const ratio = token.sampled / token.ms / (none.sampled / none.ms);
  lines.push(
    "",
    `token / none: sampled tokens/s ${ratio.toFixed(3)}, s/call ${(token.ms / token.calls / (none.ms / none.calls)).toFixed(3)} (load ${load()})`,
  );
  return lines;
}

/** The travel environment's answer to the calls of one turn, with ground-truth labels. */
function toolMessages(
  result: GenerationResult,
  environment: ReturnType<typeof travel.environment>,
  call: number,
): ChatMessage[] {
  return result.toolCalls.map((toolCall, position) => {
    const args = toolCall.arguments as Record<string, unknown>;
    const executed = { name: toolCall.name, arguments: args, ...environment.call(toolCall.name, args) };
    const label = travel.label?.(executed);
    return {
      role: "tool",
      tool_call_id: `call_${call}_${position}`,
      content: executed.output,
      ...(label !== undefined ? { mentor: { label } } : {}),
    };
  });
}

/** 3. Successive calls of one conversation per mode, its earlier turns cached. */
async function measureConversation(engine: Engine, options: DecodeOptions): Promise<string[]> {
  const lines: string[] = [];
  const summary: string[] = [];
  for (const mode of ["none", "token"] as const) {
    const first: number[] = [];
    const later: number[] = [];
    for (let conversation = 0; conversation < options.conversations; conversation++) {
      const environment = travel.environment(undefined as never, "");
      const messages = opening();
      for (let call = 1; call <= options.calls; call++) {
        let result: GenerationResult;
        try {
          result = await engine.generate({
            messages,
            tools,
            toolChoice: "required",
            shield: shieldFor(mode, messages),
            seed: 1000 * (conversation + 1) + call,
            temperature: options.temperature,
            maxStringTokens: 48,
            maxTokens: 200,
          });
        } catch (error) {
          lines.push(
            row([mode, conversation + 1, call, `error: ${(error as Error).message}`, "", "", "", "", ""]),
          );
          break;
        }
        const { stats } = result;
        (call === 1 ? first : later).push(stats.ms);
        const names = result.toolCalls.map((toolCall) => toolCall.name).join(", ") || result.finishReason;
        lines.push(
          row([
            mode,
            conversation + 1,
            call,
            names,
            stats.promptTokens,
            stats.promptTokens - stats.reusedTokens,
            stats.sampled,
            seconds(stats.ms),
            load(),
          ]),
        );
        if (result.toolCalls.length === 0) break;
        const message = assistantMessage(result) as unknown as ChatMessage;
        message.tool_calls = message.tool_calls?.map((toolCall, position) => ({
          ...toolCall,
          id: `call_${call}_${position}`,
        }));
        messages.push(message, ...toolMessages(result, environment, call));
      }
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    summary.push(
      `${mode}: first call ${first.length > 0 ? seconds(mean(first)) : "-"} s, calls 2–${options.calls} ${later.length > 0 ? `${seconds(mean(later))} s/call (${later.length} calls)` : "-"}`,
    );
  }
  return [...lines, "", ...summary, `(load ${load()})`];
}

async function measureModel(label: string, modelPath: string, options: DecodeOptions): Promise<void> {
  const size = statSync(modelPath).size;
  const shieldThreads = options.shieldThreads;
  const counts = [...new Set([shieldThreads, ...options.threads])];
  console.log(`\n## ${label === modelPath ? label : `${label} (${modelPath})`}, ${formatBytes(size)}\n`);
  const threadRows: string[] = [];
  let kept: Engine | undefined;
  try {
    for (const threads of counts) {
      const engine = await loadEngine(modelPath, threads, options);
      if (threads === counts[0]) console.log(`backend: ${gpuName(engine.gpu)}`);
      if (options.threads.includes(threads)) threadRows.push(await measureThreads(engine, threads, options));
      if (threads === shieldThreads) kept = engine;
      else await engine.dispose();
    }
    console.log(
      `\n### Prompt evaluation and generation, one request alone (${options.promptRuns} prompt run(s), ${options.genRuns} generation run(s) of at most ${options.genTokens} tokens)\n`,
    );
    console.log(
      row([
        "threads",
        "prompt tokens",
        "prompt s",
        "prompt tokens/s",
        "generated",
        "generation s",
        "generated tokens/s",
        "load",
      ]),
    );
    console.log(row(["---", "---", "---", "---", "---", "---", "---", "---"]));
    for (const line of threadRows) console.log(line);
    const engine = kept as Engine;
    console.log(
      `\n### Token shield against none, ${shieldThreads} thread(s), ${options.rounds} call(s) per mode, prompt cached\n`,
    );
    console.log(
      row(["mode", "calls", "s/call", "sampled", "sampled tokens/s", "mask µs/step", "vetoes", "load"]),
    );
    console.log(row(["---", "---", "---", "---", "---", "---", "---", "---"]));
    for (const line of await measureShield(engine, options)) console.log(line);
    console.log(
      `\n### Conversation of ${options.calls} calls with KV reuse, ${shieldThreads} thread(s), ${options.conversations} conversation(s) per mode\n`,
    );
    console.log(
      row(["mode", "conversation", "call", "called", "prompt tokens", "evaluated", "sampled", "s", "load"]),
    );
    console.log(row(["---", "---", "---", "---", "---", "---", "---", "---", "---"]));
    for (const line of await measureConversation(engine, options)) console.log(line);
  } finally {
    await kept?.dispose();
  }
}

function positive(name: string) {
  return (text: string): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1)
      throw new InvalidArgumentError(`${name} must be an integer ≥ 1`);
    return value;
  };
}

function threadList(text: string): number[] {
  const values = text.split(",").map((part) => positive("--threads")(part.trim()));
  if (values.length === 0) throw new InvalidArgumentError("--threads needs at least one count");
  return values;
}

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("npm run bench:decode --")
    .description(
      "The engine's speed on a real model: prompt and generation tokens/s, token shield vs none, calls with KV reuse",
    )
    .argument("[models...]", "more models: registry names, cached files or .gguf paths")
    .option("--model <model>", "the model (default: the registry's default model, from the cache)")
    .option("--tiny", "also measure a tiny random Qwen 3 model made on the fly")
    .option("--threads <list>", "thread counts of the first measurement, comma-separated", threadList, [1, 2])
    .option(
      "--shield-threads <n>",
      "threads of the shield and conversation measurements (default: the first --threads)",
      positive("--shield-threads"),
    )
    .option("--prompt-runs <n>", "prompt evaluations per thread count", positive("--prompt-runs"), 2)
    .option("--gen-runs <n>", "free-text generations per thread count", positive("--gen-runs"), 2)
    .option("--gen-tokens <n>", "tokens per free-text generation at most", positive("--gen-tokens"), 48)
    .option(
      "--rounds <n>",
      "calls per mode in the shield measurement (default MENTOR_BENCH_ROUNDS or 3)",
      positive("--rounds"),
      Number(process.env.MENTOR_BENCH_ROUNDS ?? 3),
    )
    .option("--calls <n>", "calls per conversation", positive("--calls"), 4)
    .option("--conversations <n>", "conversations per mode", positive("--conversations"), 1)
    .option("--context-size <n>", "context tokens", positive("--context-size"), 4096)
    .option("--temperature <t>", "sampling temperature", "0.7")
    .option("--gpu <backend>", "llama.cpp backend: auto, cpu, cuda, vulkan, metal", "auto");
  program.parse(argv);
  const raw = program.opts();
  const temperature = Number(raw.temperature);
  if (!Number.isFinite(temperature) || temperature < 0)
    throw new InvalidArgumentError("--temperature must be a number ≥ 0");
  const options: DecodeOptions = {
    threads: raw.threads,
    shieldThreads: raw.shieldThreads ?? raw.threads[0],
    promptRuns: raw.promptRuns,
    genRuns: raw.genRuns,
    genTokens: raw.genTokens,
    rounds: raw.rounds,
    calls: raw.calls,
    conversations: raw.conversations,
    contextSize: raw.contextSize,
    temperature,
    gpu: parseGpuChoice(raw.gpu),
  };
  console.log(
    `# bench:decode — node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(" ")}, temperature ${temperature}, --gpu ${options.gpu}`,
  );
  const models: [string, string][] = [];
  const requested = [...(raw.model !== undefined ? [raw.model as string] : []), ...program.args];
  for (const spec of requested) models.push([spec, await resolveModel(spec, { pull: false })]);
  if (requested.length === 0) {
    const name = loadRegistry().default;
    const path = await resolveModel(name, { pull: false }).catch((error: Error) => {
      console.log(`\n${name}: skipped, ${error.message} (or pass --model NAME|PATH)`);
      return undefined;
    });
    if (path !== undefined) models.push([name, path]);
  }
  const directory = mkdtempSync(join(tmpdir(), "mentor-bench-decode-"));
  try {
    if (raw.tiny) {
      const tiny = join(directory, "qwen3.gguf");
      await makeTinyModel({ family: "qwen3", outputPath: tiny, seed: 7 });
      models.unshift(["tiny qwen3, random weights", tiny]);
    }
    for (const [label, path] of models) await measureModel(label, path, options);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

await main(process.argv);
