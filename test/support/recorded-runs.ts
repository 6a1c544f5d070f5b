import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatMessage, ChatTool } from "../../src/openai/index.js";
import { buildServer } from "../../src/server/index.js";
import { ScriptedGenerator, type Step } from "./scripted-generator.js";

const cityTool = (name: string, extra: Record<string, unknown> = {}): ChatTool => ({
  type: "function",
  function: {
    name,
    description: `The ${name} tool.`,
    parameters: {
      type: "object",
      properties: { origin: { type: "string" }, destination: { type: "string" }, ...extra },
      required: ["origin", "destination"],
    },
  },
});

/** The travel policy's four tools as a client sends them. */
export const travelTools: ChatTool[] = [
  cityTool("check_distance"),
  cityTool("check_seats"),
  cityTool("book_train"),
  cityTool("book_flight", { travel_class: { type: "string", enum: ["economy", "business"] } }),
];

const route = { origin: "Toronto", destination: "Chicago" };

/** The conversation of the second request: the task, a distance check (700 km: long), a seat check (available). */
export const secondRequestMessages: ChatMessage[] = [
  { role: "user", content: "Book a flight from Toronto to Chicago, economy class please." },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: "call_1",
        type: "function",
        function: { name: "check_distance", arguments: JSON.stringify(route) },
      },
    ],
  },
  { role: "tool", tool_call_id: "call_1", content: "The distance is 700 km." },
];

/** The conversation of the third request: the second one, then a seat check (12 seats: available). */
export const thirdRequestMessages: ChatMessage[] = [
  ...secondRequestMessages,
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_2", type: "function", function: { name: "check_seats", arguments: JSON.stringify(route) } },
    ],
  },
  { role: "tool", tool_call_id: "call_2", content: "12 seats available on the flight." },
];

/**
 * Flight records written by a real server (`buildServer` with `recorderDirectory`, prompt
 * shield, the travel policy's rules grounding the text) answering `requests` in order with a
 * scripted generator (`steps`: one per generation, across the requests). The server adds one file
 * to the directory (a fresh temporary one by default). Returns the records' ids.
 */
export async function recordRuns(options: {
  steps: Step[];
  requests: { messages: ChatMessage[]; toolChoice: "auto" | "required" }[];
  directory?: string;
}): Promise<{ directory: string; ids: string[] }> {
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), "mentor-dashboard-"));
  const before = readdirSync(directory).length;
  const app = await buildServer({
    generator: new ScriptedGenerator(options.steps),
    modelId: "scripted",
    shield: "prompt",
    labeler: "rules",
    recorderDirectory: directory,
    logger: false,
  });
  const ids: string[] = [];
  try {
    for (const { messages, toolChoice } of options.requests) {
      const response = await app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        payload: { model: "scripted", messages, tools: travelTools, tool_choice: toolChoice },
      });
      if (response.statusCode !== 200) throw new Error(`recording a run failed: ${response.body}`);
      ids.push((response.json() as { id: string }).id);
    }
  } finally {
    await app.close();
  }
  if (readdirSync(directory).length !== before + 1)
    throw new Error(`expected one more recorder file in ${directory}`);
  return { directory, ids };
}

/**
 * The travel runs of the dashboard's tests and screenshot (`recordRuns`): (1) the task alone; the
 * model first books a business flight (blocked: P1, P5, P3), then checks the distance (returned);
 * (2) after the distance check, it books an economy flight (blocked: P5, seats not checked), then
 * checks the seats (returned); (3) after the seat check (`tool_choice: auto`), it answers that all
 * is done (refused: P4, nothing booked yet), then books the economy flight (returned).
 */
export function recordTravelRuns(directory?: string): Promise<{ directory: string; ids: string[] }> {
  return recordRuns({
    steps: [
      { calls: [{ name: "book_flight", arguments: { ...route, travel_class: "business" } }] },
      { calls: [{ name: "check_distance", arguments: route }] },
      { calls: [{ name: "book_flight", arguments: { ...route, travel_class: "economy" } }] },
      { calls: [{ name: "check_seats", arguments: route }] },
      "All set: your trip is arranged.",
      { calls: [{ name: "book_flight", arguments: { ...route, travel_class: "economy" } }] },
    ],
    requests: [
      { messages: secondRequestMessages.slice(0, 1), toolChoice: "required" },
      { messages: secondRequestMessages, toolChoice: "required" },
      { messages: thirdRequestMessages, toolChoice: "auto" },
    ],
    ...(directory !== undefined ? { directory } : {}),
  });
}
