/**
 * npm run bench:intent — does the token shield keep the traveller's wish? On the travel tasks
 * where the traveller asks for a flight and the manual allows one (the reference books a flight),
 * the agent runs until its first booking under the token shield, for each η and with the
 * intent-keeping redirect on and off, on the same seeds:
 *
 *   npm run bench:intent                                   # default model, η 0, 0.5, 2, 3 seeds
 *   npm run bench:intent -- --eta 0.5 --seeds 1,2 --tasks t03,t04 --threads 2 --model PATH
 *
 * Per setting it prints how often the first booking is a flight (the mode asked for), how many
 * names were redirected, and the calls before the booking. It also compares the first call of each
 * task and seed with what the unshielded model writes (tools required, none mode): how often an
 * argument value the two calls share differs, and the time the shield's sets take per turn
 * (`shieldSetsFor`: next, and decide for each redirect). Grounding is the task's ground truth (oracle), the
 * tool outputs come from the travel environment with their true labels.
 */
import { loadavg } from "node:os";
import { Command } from "commander";
import { Engine } from "../../src/engine-entry.js";
import { type ChatMessage, Evaluator, loadPolicy } from "../../src/index.js";
import { loadRegistry, resolveModel } from "../../src/models/index.js";
import { type DecodedCall, type ShieldSets, shieldSetsFor } from "../../src/shield/token/index.js";
import { type TravelTask, travel } from "../domains/travel/index.js";

interface Options {
  model: string;
  eta: number[];
  seeds: number[];
  tasks?: string[];
  threads: number;
  maxCalls: number;
}

const list = (parse: (text: string) => number) => (text: string) => text.split(",").map(parse);

const program = new Command("bench:intent")
  .option("--model <name>", "registry name, cached file or .gguf path (not fetched)", loadRegistry().default)
  .option("--eta <list>", "η values", list(Number), [0, 0.5, 2])
  .option("--seeds <list>", "sampling seeds", list(Number), [1, 2, 3])
  .option(
    "--tasks <list>",
    "task ids (default: every single-trip task whose reference books the flight asked for)",
    (text) => text.split(","),
  )
  .option("--threads <n>", "threads of the engine", Number, 2)
  .option("--max-calls <n>", "calls before a run without a booking stops", Number, 6)
  .parse();
const options = program.opts<Options>();

const policy = loadPolicy(travel.policyPath);
const evaluator = new Evaluator(policy);
const tools = travel.tools("");
const tasks = (travel.tasks({ dataDir: "" }) as TravelTask[]).filter((task) =>
  options.tasks
    ? options.tasks.includes(task.id)
    : task.trips.length === 1 &&
      task.trips[0]?.wants === "flight" &&
      task.reference?.at(-1)?.name === "book_flight",
);

function opening(task: (typeof tasks)[number]): ChatMessage[] {
  return [
    { role: "system", content: travel.manual("") },
    { role: "user", content: task.opening, mentor: { task: travel.grounding?.(task) } } as ChatMessage,
  ];
}

/** The shield's sets per turn (the evaluator's next answer, and decide on each unsafe tool for its redirect). */
const setsMs: number[] = [];
const engine = await Engine.load({
  modelPath: await resolveModel(options.model, { pull: false }),
  threads: options.threads,
});
const started = performance.now();

/** One run until the first booking: its calls, and the names the shield redirected. */
async function runUntilBooking(
  task: (typeof tasks)[number],
  seed: number,
  eta: number,
  intent: boolean,
): Promise<{ calls: DecodedCall[]; redirected: number }> {
  const messages = opening(task);
  const environment = travel.environment(task, "");
  const calls: DecodedCall[] = [];
  let redirected = 0;
  for (let turn = 0; turn < options.maxCalls; turn++) {
    const setsStarted = performance.now();
    const sets: ShieldSets = shieldSetsFor(evaluator, messages);
    setsMs.push(performance.now() - setsStarted);
    if (!intent) delete sets.redirects;
    const result = await engine.generate({
      messages,
      tools,
      toolChoice: "required",
      parallelToolCalls: false,
      shield: { mode: "token", sets, eta },
      seed: seed + turn,
      maxTokens: 128,
    });
    redirected += result.stats.redirected;
    const call = result.toolCalls[0];
    if (call === undefined) break;
    calls.push(call);
    if (call.name.startsWith("book_")) break;
    const executed = environment.call(call.name, call.arguments);
    const label = travel.label?.({ ...call, ...executed });
    const id = `call_${turn}`;
    messages.push(
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } },
        ],
      },
      {
        role: "tool",
        tool_call_id: id,
        content: executed.output,
        ...(label !== undefined ? { mentor: { label } } : {}),
      } as ChatMessage,
    );
  }
  return { calls, redirected };
}

console.log(
  `# bench:intent: ${tasks.map((task) => task.id).join(", ")}; seeds ${options.seeds.join(", ")}; ${options.threads} threads; load ${loadavg()[0]?.toFixed(2)}`,
);

// The unshielded first call per task and seed, and the shielded first calls to compare with it.
const unshielded = new Map<string, DecodedCall | undefined>();
for (const task of tasks)
  for (const seed of options.seeds) {
    const result = await engine.generate({
      messages: opening(task),
      tools,
      toolChoice: "required",
      parallelToolCalls: false,
      shield: { mode: "none" },
      seed,
      maxTokens: 128,
    });
    unshielded.set(`${task.id}/${seed}`, result.toolCalls[0]);
  }
const unshieldedFlights = [...unshielded.values()].filter((call) => call?.name === "book_flight").length;
console.log(
  `none: first call book_flight in ${unshieldedFlights} of ${unshielded.size} (the wish, and a violation)`,
);

console.log(
  "| η | intent redirect | first booking a flight | no booking | names redirected | calls before booking | first call: a shared value differs from none |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const eta of options.eta)
  for (const intent of [false, true]) {
    let flights = 0;
    let unbooked = 0;
    let redirected = 0;
    let callsBefore = 0;
    let compared = 0;
    let differing = 0;
    const examples: string[] = [];
    for (const task of tasks)
      for (const seed of options.seeds) {
        const run = await runUntilBooking(task, seed, eta, intent);
        redirected += run.redirected;
        const booking = run.calls.find((call) => call.name.startsWith("book_"));
        if (booking === undefined) unbooked++;
        else if (booking.name === "book_flight") flights++;
        callsBefore += run.calls.length - (booking ? 1 : 0);
        examples.push(`${task.id}/${seed}: ${run.calls.map((call) => call.name).join(" > ")}`);
        const plain = unshielded.get(`${task.id}/${seed}`);
        const first = run.calls[0];
        if (plain && first) {
          const shared = Object.keys(plain.arguments).filter((key) => key in first.arguments);
          compared++;
          if (
            shared.some(
              (key) => JSON.stringify(plain.arguments[key]) !== JSON.stringify(first.arguments[key]),
            )
          )
            differing++;
        }
      }
    const runs = tasks.length * options.seeds.length;
    console.log(
      `| ${eta} | ${intent ? "on" : "off"} | ${flights}/${runs} | ${unbooked} | ${redirected} | ${(callsBefore / runs).toFixed(1)} | ${differing}/${compared} |`,
    );
    console.log(`#   ${examples.join("; ")}`);
  }
const sorted = [...setsMs].sort((a, b) => a - b);
const at = (share: number) =>
  (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? 0).toFixed(2);
console.log(`shieldSetsFor per turn (${sorted.length} turns): median ${at(0.5)} ms, p95 ${at(0.95)} ms`);
console.log(`# ${((performance.now() - started) / 1000).toFixed(0)} s, load ${loadavg()[0]?.toFixed(2)}`);
await engine.dispose();
