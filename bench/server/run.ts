/**
 * npm run bench:server — the HTTP server against the in-process turn, in the same run.
 *
 *   npm run bench:server                              # a tiny Llama 3.1 model (random weights)
 *   npm run bench:server -- gemma-3-270m              # a registry name or .gguf path (not fetched)
 *   MENTOR_BENCH_ROUNDS=20 MENTOR_BENCH_CLIENTS=4 npm run bench:server
 *
 * Workload: the travel policy, the opening of a booking conversation (task grounded in the
 * `mentor` field), four travel tools, tool_choice required, max_tokens 128; one engine with two
 * sequences, one thread each.
 * 1. Overhead: one client; per round and shield mode (none, prompt, token, alternating), the same
 *    turn (same seed) run in process (`runTurn` on the engine) and through the server (fetch on
 *    loopback, keep-alive). Figures: median ms per turn, server / in process; and the time outside
 *    the model's generations (request checks, grounding, decisions, HTTP, JSON), whose difference
 *    is the server's own cost. On a loaded machine the generation time varies far more between
 *    two runs of the same turn than the server costs, so the second figure is the one to read.
 * 2. Throughput: N concurrent clients, each sending ROUNDS requests per mode (modes in turn):
 *    requests/s, latency p50 / p95, completion tokens/s.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Engine,
  EngineGenerator,
  givenGrounding,
  runTurn,
  type ShieldMode,
  type TurnRecord,
} from "../../src/engine-entry.js";
import { type ChatMessage, type ChatTool, Evaluator, loadPolicy } from "../../src/index.js";
import { makeTinyModel, resolveModel } from "../../src/models/index.js";
import { startServer } from "../../src/server-entry.js";

const rounds = Number(process.env.MENTOR_BENCH_ROUNDS ?? 12);
const clients = Number(process.env.MENTOR_BENCH_CLIENTS ?? 4);
const modes: ShieldMode[] = ["none", "prompt", "token"];
const policyPath = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-bench-server-"));

const messages: ChatMessage[] = [
  {
    role: "user",
    content: "Book me a trip from Toronto to Chicago.",
    mentor: {
      task: [
        { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } },
      ],
    },
  },
];
const route = {
  type: "object",
  properties: { origin: { type: "string" }, destination: { type: "string" } },
  required: ["origin", "destination"],
};
const tools: ChatTool[] = ["check_distance", "check_seats", "book_train"].map((name) => ({
  type: "function",
  function: { name, parameters: route },
}));
const maxTokens = 128;

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
const median = (values: number[]): number => quantile(values, 0.5);
const generationMs = (record: TurnRecord): number =>
  record.attempts.reduce((sum, attempt) => sum + attempt.generateMs, 0);

async function main(): Promise<void> {
  const named = process.argv[2];
  const modelPath = named
    ? await resolveModel(named, { pull: false })
    : (await makeTinyModel({ family: "llama3.1", outputPath: join(directory, "tiny.gguf"), seed: 3 }))
        .outputPath;
  const engine = await Engine.load({ modelPath, contextSize: 2048, sequences: 2 });
  const evaluator = new Evaluator(loadPolicy(policyPath));
  const generator = new EngineGenerator(engine);
  const server = await startServer({ engine, modelId: "bench", port: 0, logger: false, maxQueue: 1000 });
  console.log(
    `# bench:server — model ${named ?? "tiny llama3.1 (seed 3)"}, ${cpus().length} cores, 1 thread per context, 2 sequences`,
  );
  console.log(`# rounds ${rounds}, clients ${clients}, tool_choice required, max_tokens ${maxTokens}`);

  const inProcess = async (mode: ShieldMode, seed: number) => {
    const started = performance.now();
    const result = await runTurn({
      messages,
      tools,
      toolChoice: "required",
      mode,
      evaluator,
      grounder: givenGrounding,
      generator,
      seed,
      maxTokens,
    });
    return {
      ms: performance.now() - started,
      // Every generation of the turn (usage is the returned one's).
      tokens: result.mentor.usage.completionTokens,
      generationMs: generationMs(result.mentor),
    };
  };
  const overHttp = async (mode: ShieldMode, seed: number) => {
    const started = performance.now();
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: `bench:${mode}`,
        messages,
        tools,
        tool_choice: "required",
        seed,
        max_tokens: maxTokens,
      }),
    });
    const body = (await response.json()) as { mentor: TurnRecord };
    if (!response.ok) throw new Error(JSON.stringify(body));
    return {
      ms: performance.now() - started,
      tokens: body.mentor.usage.completionTokens,
      generationMs: generationMs(body.mentor),
    };
  };

  // Warm-up: the first turn of each path evaluates the whole prompt and builds the game.
  for (const mode of modes) {
    await inProcess(mode, 0);
    await overHttp(mode, 0);
  }

  console.log("\n## Overhead, one client (medians over rounds)");
  console.log(
    "mode    in-process ms/turn  server ms/turn  ratio   outside generation: in-process ms  server ms  server cost ms  % of turn",
  );
  for (const mode of modes) {
    const local: number[] = [];
    const http: number[] = [];
    const localOutside: number[] = [];
    const httpOutside: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      // Alternate which path goes first.
      const localFirst = round % 2 === 0;
      const first = await (localFirst ? inProcess : overHttp)(mode, round);
      const second = await (localFirst ? overHttp : inProcess)(mode, round);
      const [a, b] = localFirst ? [first, second] : [second, first];
      local.push(a.ms);
      http.push(b.ms);
      localOutside.push(a.ms - a.generationMs);
      httpOutside.push(b.ms - b.generationMs);
    }
    const cost = median(httpOutside) - median(localOutside);
    console.log(
      `${mode.padEnd(8)}${median(local).toFixed(1).padStart(18)}${median(http).toFixed(1).padStart(16)}${(median(http) / median(local)).toFixed(3).padStart(8)}${median(localOutside).toFixed(1).padStart(35)}${median(httpOutside).toFixed(1).padStart(11)}${cost.toFixed(1).padStart(16)}${((100 * cost) / median(local)).toFixed(1).padStart(11)}`,
    );
  }

  console.log(`\n## Throughput, ${clients} concurrent clients × ${rounds} requests per mode`);
  console.log("mode    requests/s  p50 ms  p95 ms  completion tokens/s");
  for (const mode of modes) {
    const latencies: number[] = [];
    let tokens = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        for (let request = 0; request < rounds; request++) {
          const result = await overHttp(mode, 1000 + client * rounds + request);
          latencies.push(result.ms);
          tokens += result.tokens;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${mode.padEnd(8)}${(latencies.length / seconds).toFixed(2).padStart(10)}${quantile(latencies, 0.5).toFixed(0).padStart(8)}${quantile(latencies, 0.95).toFixed(0).padStart(8)}${(tokens / seconds).toFixed(1).padStart(21)}`,
    );
  }
  await server.close();
  await engine.dispose();
}

try {
  await main();
} finally {
  rmSync(directory, { recursive: true, force: true });
}
