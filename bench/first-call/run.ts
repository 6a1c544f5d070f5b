/**
 * npm run bench:first-call — the README's request through the server, as a client sends it:
 * "Book a flight from Toronto to Chicago for me, business class please." with the README's four
 * tools, grounded by the policy's rules (no `mentor` fields), per seed:
 *
 *   npm run bench:first-call                      # default model, seeds 1-10, one thread per core
 *   npm run bench:first-call -- --seeds 1,2,3 --model PATH
 *
 * 1. token shield, tool_choice required: how often the first call is exactly
 *    check_distance(origin "Toronto", destination "Chicago");
 * 2. no shield, tool_choice auto: how often the answer holds a call (read in whatever form the
 *    model wrote it) and which;
 * 3. the seconds per request: the first (nothing cached) and the later ones (the prompt cached),
 *    and a conversation of three calls after tool results. Load average beside the figures.
 */
import { loadavg } from "node:os";
import { Command } from "commander";
import { loadRegistry } from "../../src/models/index.js";
import { startServer } from "../../src/server/index.js";
import { servedModel } from "../run.js";

const program = new Command("bench:first-call")
  .option("--model <name>", "registry name, cached file or .gguf path (not fetched)", loadRegistry().default)
  .option(
    "--seeds <list>",
    "sampling seeds",
    (text) => text.split(",").map(Number),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  )
  .parse();
const options = program.opts<{ model: string; seeds: number[] }>();

const route = { origin: { type: "string" }, destination: { type: "string" } };
const tool = (name: string, properties: Record<string, unknown>) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties, required: Object.keys(properties) } },
});
const tools = [
  tool("check_distance", route),
  tool("check_seats", route),
  tool("book_flight", { ...route, travel_class: { type: "string", enum: ["economy", "business"] } }),
  tool("book_train", route),
];
const request = {
  role: "user",
  content: "Book a flight from Toronto to Chicago for me, business class please.",
};
const outputs: Record<string, string> = {
  check_distance: "Toronto to Chicago: 702 km.",
  check_seats: "Seats are available on flights from Toronto to Chicago.",
};

interface Message {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

const server = await startServer({ model: options.model, port: 0, pull: false, logger: false });
const model = await servedModel(server.url, undefined);
const load = () => loadavg()[0]?.toFixed(2);

async function complete(
  body: Record<string, unknown>,
): Promise<{ message: Message; seconds: number; promptTokens: number }> {
  const started = performance.now();
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, tools, ...body }),
  });
  const answer = (await response.json()) as {
    choices?: { message: Message }[];
    usage?: { prompt_tokens: number };
    error?: { message: string };
  };
  if (!response.ok || !answer.choices?.[0])
    throw new Error(answer.error?.message ?? `HTTP ${response.status}`);
  return {
    message: answer.choices[0].message,
    seconds: (performance.now() - started) / 1000,
    promptTokens: answer.usage?.prompt_tokens ?? 0,
  };
}

const firstCall = (message: Message) => message.tool_calls?.[0]?.function;
try {
  console.log(`# bench:first-call: ${model}, seeds ${options.seeds.join(",")}, load ${load()}`);
  const times: number[] = [];
  let promptTokens = 0;
  let exact = 0;
  for (const seed of options.seeds) {
    const { message, seconds, ...usage } = await complete({
      messages: [request],
      tool_choice: "required",
      seed,
    });
    times.push(seconds);
    promptTokens = usage.promptTokens;
    const call = firstCall(message);
    if (
      call?.name === "check_distance" &&
      call.arguments === JSON.stringify({ origin: "Toronto", destination: "Chicago" })
    )
      exact++;
  }
  console.log(
    `token, required: check_distance(Toronto, Chicago) exactly in ${exact} of ${options.seeds.length}`,
  );
  const names = new Map<string, number>();
  for (const seed of options.seeds) {
    const { message } = await complete({
      model: `${model}:none`,
      messages: [request],
      tool_choice: "auto",
      seed,
    });
    const call = firstCall(message);
    const key = call ? `${call.name}(${call.arguments})` : "no call";
    names.set(key, (names.get(key) ?? 0) + 1);
  }
  console.log(
    `none, auto: ${[...names].map(([key, count]) => `${key} ${count}`).join("; ")} (of ${options.seeds.length})`,
  );
  const [first, ...later] = times;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  console.log(
    `s/request (${promptTokens} prompt tokens): first ${first?.toFixed(2)} (nothing cached), later median ${median(later).toFixed(2)} (load ${load()})`,
  );
  const messages: Message[] = [request];
  const conversation: string[] = [];
  for (let turn = 0; turn < 3; turn++) {
    const { message, seconds } = await complete({ messages, tool_choice: "auto", seed: 1 });
    conversation.push(`${firstCall(message)?.name ?? "answer"} ${seconds.toFixed(2)} s`);
    if (!message.tool_calls) break;
    messages.push(message);
    for (const call of message.tool_calls)
      messages.push({
        role: "tool",
        tool_call_id: call.id,
        content: outputs[call.function.name] ?? '{"status": "confirmed"}',
      } as Message);
  }
  console.log(`conversation (token, auto, after tool results): ${conversation.join(", ")} (load ${load()})`);
} finally {
  await server.close();
}
