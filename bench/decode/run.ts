/**
 * npm run bench:decode — decoding speed with and without the token shield, in the same run:
 * the same prompt, tools and seeds, modes alternating generation by generation.
 *
 *   npm run bench:decode                          # a tiny Qwen 3 model, and Gemma 3 270M if cached
 *   npm run bench:decode -- path/to/model.gguf    # other models (registry names or paths, not fetched)
 *   MENTOR_BENCH_ROUNDS=40 npm run bench:decode   # generations per mode (default 20)
 *
 * Modes: `text` — free text, no mask at all (the engine's floor); `none` — a required tool call
 * with the syntax masks only (declared names, JSON skeleton); `token` — the same call with the
 * token shield's sets from the travel policy (unsafe tools banned, unsafe values denied,
 * progressing ones boosted). Figures: sampled tokens per second and ms per sampled token over the
 * whole generation (prompt reuse included), the shield's mask compute per step, and the ratio
 * token / none. One thread, no GPU.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ChatTool,
  Engine,
  Evaluator,
  type GenerateOptions,
  loadPolicy,
  shieldSetsFromNextAnswer,
} from "../../src/index.js";
import { makeTinyModel, resolveModel } from "../../src/models/index.js";

const rounds = Number(process.env.MENTOR_BENCH_ROUNDS ?? 20);
const policyPath = fileURLToPath(new URL("../../../bench/domains/travel/policy.yaml", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-bench-decode-"));

const messages = [
  {
    role: "user" as const,
    content: "Book me a trip from Toronto to Chicago.",
    mentor: {
      task: [
        { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } },
      ],
    },
  },
];
const stringParameter = { type: "string" };
const tools: ChatTool[] = [
  ["check_distance", { origin: stringParameter, destination: stringParameter }],
  ["check_seats", { origin: stringParameter, destination: stringParameter }],
  ["book_train", { origin: stringParameter, destination: stringParameter }],
  [
    "book_flight",
    {
      origin: stringParameter,
      destination: stringParameter,
      travel_class: { enum: ["economy", "business"] },
    },
  ],
].map(([name, properties]) => ({
  type: "function",
  function: { name: name as string, parameters: { type: "object", properties: properties as never } },
}));
const sets = shieldSetsFromNextAnswer(new Evaluator(loadPolicy(policyPath)).next(messages));

interface Totals {
  sampled: number;
  ms: number;
  maskSteps: number;
  maskMs: number;
  vetoed: number;
}

async function measure(label: string, modelPath: string): Promise<void> {
  const engine = await Engine.load({ modelPath, contextSize: 2048 });
  const base: GenerateOptions = { messages, tools, temperature: 0.7, maxStringTokens: 48, maxTokens: 200 };
  const modes: Record<string, GenerateOptions> = {
    text: { ...base, toolChoice: "none", maxTokens: 100 },
    none: { ...base, toolChoice: "required", shield: { mode: "none" } },
    token: { ...base, toolChoice: "required", shield: { mode: "token", sets, eta: 0.5 } },
  };
  const totals: Record<string, Totals> = {};
  for (const mode of Object.keys(modes))
    totals[mode] = { sampled: 0, ms: 0, maskSteps: 0, maskMs: 0, vetoed: 0 };
  await engine.generate({ ...(modes.none as GenerateOptions), seed: 0 }); // warm-up
  for (let round = 0; round < rounds; round++)
    for (const [mode, options] of Object.entries(modes)) {
      const result = await engine.generate({ ...options, seed: 100 + round });
      const total = totals[mode] as Totals;
      total.sampled += result.stats.sampled;
      total.ms += result.stats.ms;
      total.maskSteps += result.stats.maskSteps;
      total.maskMs += result.stats.maskMs;
      total.vetoed += result.stats.vetoed;
    }
  await engine.dispose();
  for (const [mode, total] of Object.entries(totals)) {
    const perStep = total.maskSteps > 0 ? ((total.maskMs / total.maskSteps) * 1000).toFixed(1) : "-";
    console.log(
      `${label.padEnd(22)} ${mode.padEnd(6)} ${String(total.sampled).padStart(7)} ${(total.sampled / (total.ms / 1000)).toFixed(1).padStart(9)} ${(total.ms / total.sampled).toFixed(2).padStart(9)} ${perStep.padStart(9)} ${String(total.vetoed).padStart(6)}`,
    );
  }
  const none = totals.none as Totals;
  const token = totals.token as Totals;
  const ratio = token.sampled / token.ms / (none.sampled / none.ms);
  console.log(`${label.padEnd(22)} tokens/s token / none = ${ratio.toFixed(3)}`);
}

console.log(
  `bench:decode — node ${process.version}, ${cpus().length} cores, 1 thread, ${rounds} generations per mode, temperature 0.7`,
);
console.log("model                  mode   sampled  tokens/s  ms/token  mask µs/step vetoes");
try {
  const tiny = join(directory, "qwen3.gguf");
  await makeTinyModel({ family: "qwen3", outputPath: tiny, seed: 7 });
  await measure("tiny qwen3", tiny);
  const requested = process.argv.slice(2);
  const others: [string, string][] = [];
  for (const spec of requested) others.push([spec, await resolveModel(spec, { pull: false })]);
  if (requested.length === 0) {
    const cached = await resolveModel("gemma-3-270m", { pull: false }).catch(() => undefined);
    const copy = "/tmp/mm/gemma-3-270m-q4_k_m.gguf";
    const path = cached ?? (existsSync(copy) ? copy : undefined);
    if (path !== undefined) others.push(["gemma-3-270m", path]);
    else console.log("gemma-3-270m: not in the cache (mentor pull gemma-3-270m), skipped");
  }
  for (const [label, path] of others) await measure(label, path);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
