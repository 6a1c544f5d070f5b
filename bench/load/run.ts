/**
 * npm run bench:load — sustained load on the real model: `mentor serve` (the default model, the
 * travel policy, the token shield) answering concurrent agent turns for a bounded time, once per
 * `--sequences` setting, in the same run. Each client plays agents: a travel request (grounded by
 * the client, `--trust-client-grounding`), then each call the server returns is answered with a
 * scripted tool result and the conversation goes on, up to `--turns` turns or a text answer, then
 * a new conversation. Figures per setting: turns and calls per second, completion tokens per
 * second, latency and queue wait p50/p99 (wait = the client's latency less the turn's own time,
 * `mentor.timings.totalMs`), statuses (5xx expected 0), the server's RSS when ready and at the end,
 * and the load average. The ratio of throughputs against the first setting is printed.
 *
 * Options: --minutes M per setting (10), --sequences 1,2, --clients N (2 × the largest sequences),
 * --threads N (2), --max-tokens N (64), --turns N (6), --model PATH (the cached default model),
 * --out FILE (the figures as JSON).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { loadRegistry, resolveModel } from "../../src/models/index.js";
import { travelTools } from "../domains/travel/index.js";
import { percentile, type Replica, startReplica, stopReplica } from "../replicas/cluster.js";

const { values: options } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    sequences: { type: "string", default: "1,2" },
    clients: { type: "string" },
    threads: { type: "string", default: "2" },
    "max-tokens": { type: "string", default: "64" },
    turns: { type: "string", default: "6" },
    model: { type: "string" },
    out: { type: "string" },
  },
});

const settings = (options.sequences as string).split(",").map(Number);
if (settings.some((count) => !Number.isInteger(count) || count < 1)) {
  process.stderr.write(`bench:load: --sequences must list counts ≥ 1, got ${options.sequences}\n`);
  process.exit(2);
}
const clients = Number(options.clients ?? 2 * Math.max(...settings));
const seconds = Number(options.minutes) * 60;
const maxTurns = Number(options.turns);

let modelPath: string;
try {
  modelPath = options.model ?? (await resolveModel(loadRegistry().default, { pull: false }));
} catch (error) {
  console.log(
    `SKIP: the default model is not cached (${(error as Error).message}); run \`mentor pull\` first`,
  );
  process.exit(0);
}

const cities = [
  ["Toronto", "Chicago"],
  ["Toronto", "Ottawa"],
  ["Montreal", "Boston"],
  ["Vancouver", "Seattle"],
];
const tools = travelTools;

/** The scripted tool result of a call (labels as the rules labeler reads them). */
function toolResult(name: string): string {
  if (name === "check_distance") return "The distance is 702 km.";
  if (name === "check_seats") return "Seats available on the flight: 12.";
  return '{"status": "confirmed"}';
}

interface TurnFigure {
  status: number;
  ms: number;
  waitMs: number;
  calls: number;
  completionTokens: number;
}

async function agent(
  url: string,
  model: string,
  client: number,
  until: number,
  figures: TurnFigure[],
): Promise<void> {
  for (let conversation = 0; performance.now() < until; conversation++) {
    const [origin, destination] = cities[(client + conversation) % cities.length] as [string, string];
    const messages: Record<string, unknown>[] = [
      {
        role: "user",
        content: `Book me a trip from ${origin} to ${destination}.`,
        mentor: { task: [{ name: "request_travel", arguments: { origin, destination, urgent: false } }] },
      },
    ];
    for (let turn = 0; turn < maxTurns && performance.now() < until; turn++) {
      const started = performance.now();
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model,
          messages,
          tools,
          max_tokens: Number(options["max-tokens"]),
          seed: client * 1000 + conversation * 10 + turn,
        }),
      });
      const body = (await response.json()) as {
        choices?: {
          message: { content: string | null; tool_calls?: { id: string; function: { name: string } }[] };
        }[];
        mentor?: { timings?: { totalMs: number }; usage?: { completionTokens: number } };
      };
      const ms = performance.now() - started;
      const message = body.choices?.[0]?.message;
      const calls = message?.tool_calls ?? [];
      figures.push({
        status: response.status,
        ms,
        waitMs: Math.max(0, ms - (body.mentor?.timings?.totalMs ?? ms)),
        calls: calls.length,
        // Every generation of the turn (usage is the returned one's).
        completionTokens: body.mentor?.usage?.completionTokens ?? 0,
      });
      if (response.status !== 200 || !message || calls.length === 0) break;
      messages.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
      for (const call of calls)
        messages.push({ role: "tool", tool_call_id: call.id, content: toolResult(call.function.name) });
    }
  }
}

function rssMiB(replica: Replica): number {
  const status = readFileSync(`/proc/${replica.child.pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const p50p99 = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99) });

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");

console.log(
  `mentor bench:load — ${modelPath}, ${options.threads} threads, ${clients} clients, ${options.minutes} min per setting, max_tokens ${options["max-tokens"]}, up to ${maxTurns} turns per conversation; ${cpus().length} cores, load average ${load()}\n`,
);
const results = [];
for (const sequences of settings) {
  const replica = await startReplica([
    "--model",
    modelPath,
    "--threads",
    options.threads as string,
    "--sequences",
    String(sequences),
    "--max-queue",
    String(clients),
    "--policy",
    "travel",
    "--shield",
    "token",
    "--trust-client-grounding",
    "--labeler",
    "rules",
  ]);
  try {
    const listed = (await (await fetch(`${replica.url}/v1/models`)).json()) as { data: { id: string }[] };
    const model = listed.data[0]?.id as string;
    const rssStart = rssMiB(replica);
    const loadStart = load();
    const figures: TurnFigure[] = [];
    const started = performance.now();
    const until = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, (_, client) => agent(replica.url, model, client, until, figures)),
    );
    const elapsed = (performance.now() - started) / 1000;
    const statuses: Record<number, number> = {};
    for (const figure of figures) statuses[figure.status] = (statuses[figure.status] ?? 0) + 1;
    const ok = figures.filter((figure) => figure.status === 200);
    const result = {
      sequences,
      seconds: elapsed,
      turns: ok.length,
      turnsPerSecond: ok.length / elapsed,
      callsPerSecond: ok.reduce((sum, figure) => sum + figure.calls, 0) / elapsed,
      tokensPerSecond: ok.reduce((sum, figure) => sum + figure.completionTokens, 0) / elapsed,
      latencyMs: p50p99(ok.map((figure) => figure.ms)),
      waitMs: p50p99(ok.map((figure) => figure.waitMs)),
      statuses,
      serverErrors: figures.filter((figure) => figure.status >= 500).length,
      rssMiB: { start: rssStart, end: rssMiB(replica) },
      loadAverage: { start: loadStart, end: load() },
    };
    results.push(result);
    console.log(`sequences ${sequences}: ${JSON.stringify(result)}`);
  } finally {
    await stopReplica(replica);
  }
}

const base = results[0];
console.log(
  "\n| sequences | turns | turns/s | calls/s | tokens/s | ×calls/s | latency p50 / p99 (s) | queue wait p50 / p99 (s) | 5xx | statuses | RSS start → end (MiB) | load average |",
);
console.log("| ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | --- | --- | --- |");
for (const result of results) {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  console.log(
    `| ${result.sequences} | ${result.turns} | ${result.turnsPerSecond.toFixed(3)} | ${result.callsPerSecond.toFixed(3)} | ${result.tokensPerSecond.toFixed(1)} | ${base ? (result.callsPerSecond / base.callsPerSecond).toFixed(2) : "-"} | ${s(result.latencyMs.p50)} / ${s(result.latencyMs.p99)} | ${s(result.waitMs.p50)} / ${s(result.waitMs.p99)} | ${result.serverErrors} | ${JSON.stringify(result.statuses)} | ${result.rssMiB.start.toFixed(0)} → ${result.rssMiB.end.toFixed(0)} | ${result.loadAverage.start} → ${result.loadAverage.end} |`,
  );
}
if (options.out) writeFileSync(options.out, `${JSON.stringify({ options, results }, null, 2)}\n`);
