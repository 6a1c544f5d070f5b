import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatMessage, ChatTool } from "../../src/openai/index.js";
import { buildServer } from "../../src/server/index.js";
import { ScriptedGenerator, type Step } from "./scripted-generator.js";
import { travelPolicyFile } from "./tiny-travel.js";

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

/** A request of `recordRuns`: the travel tools unless `tools`; `mentor` (shield, policy); the status expected (200). */
export interface RecordedRequest {
  messages: ChatMessage[];
  toolChoice: "auto" | "required";
  tools?: ChatTool[];
  mentor?: { shield?: string; policy?: string };
  status?: number;
}

/**
 * Flight records written by a real server (`buildServer` with `recorderDirectory`, prompt
 * shield, the travel policy's rules grounding the text) answering `requests` in order with a
 * scripted generator (`steps`: one per generation, across the requests). The server adds one file
 * to the directory (a fresh temporary one by default). Returns the records' ids.
 */
export async function recordRuns(options: {
  steps: Step[];
  requests: RecordedRequest[];
  directory?: string;
  /** The server's policies (default: travel). */
  policies?: string[];
  /** Called with each answer's body before the next request is sent. */
  onAnswer?: (index: number, body: unknown) => void;
}): Promise<{ directory: string; ids: string[] }> {
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), "mentor-dashboard-"));
  const earlier = readdirSync(directory);
  const app = await buildServer({
    generator: new ScriptedGenerator(options.steps),
    modelId: "scripted",
    shield: "prompt",
    labeler: "rules",
    recorderDirectory: directory,
    logger: false,
    ...(options.policies ? { policies: options.policies } : {}),
  });
  const ids: string[] = [];
  try {
    for (const [index, request] of options.requests.entries()) {
      const response = await app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        payload: {
          model: "scripted",
          messages: request.messages,
          tools: request.tools ?? travelTools,
          tool_choice: request.toolChoice,
          ...(request.mentor ? { mentor: request.mentor } : {}),
        },
      });
      if (response.statusCode !== (request.status ?? 200))
        throw new Error(`recording a run failed: ${response.statusCode} ${response.body}`);
      // An error's body has no id: the record's is the file's last line.
      ids.push(
        response.statusCode === 200
          ? (response.json() as { id: string }).id
          : lastRecordId(directory, earlier),
      );
      options.onAnswer?.(index, response.json());
    }
  } finally {
    await app.close();
  }
  if (readdirSync(directory).length !== earlier.length + 1)
    throw new Error(`expected one more recorder file in ${directory}`);
  return { directory, ids };
}

const travelSteps: Step[] = [
  { calls: [{ name: "book_flight", arguments: { ...route, travel_class: "business" } }] },
  { calls: [{ name: "check_distance", arguments: route }] },
  { calls: [{ name: "book_flight", arguments: { ...route, travel_class: "economy" } }] },
  { calls: [{ name: "check_seats", arguments: route }] },
  "All set: your trip is arranged.",
  { calls: [{ name: "book_flight", arguments: { ...route, travel_class: "economy" } }] },
];

/** The id of the last record in the server's recorder file (the one not in `earlier`). */
function lastRecordId(directory: string, earlier: readonly string[]): string {
  const file = readdirSync(directory).find((name) => !earlier.includes(name)) as string;
  const lines = readFileSync(join(directory, file), "utf8").trim().split("\n");
  return (JSON.parse(lines.at(-1) as string) as { id: string }).id;
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
    steps: travelSteps,
    requests: [
      { messages: secondRequestMessages.slice(0, 1), toolChoice: "required" },
      { messages: secondRequestMessages, toolChoice: "required" },
      { messages: thirdRequestMessages, toolChoice: "auto" },
    ],
    ...(directory !== undefined ? { directory } : {}),
  });
}

export const longCity = "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch";

/**
 * The travel policy with P5 (seats checked before a flight) of another severity, as
 * `travel_<severity>` (`travel_stop`, `travel_warn`, …).
 */
export function writeTravelPolicyWith(directory: string, severity: string): string {
  const name = `travel_${severity}`;
  const text = readFileSync(travelPolicyFile, "utf8")
    .replace(/^policy: travel$/m, `policy: ${name}`)
    .replace(
      '{id: P5, template: precedence, a: "seats_checked(route)", b: "flight(route)"}',
      `{id: P5, template: precedence, a: "seats_checked(route)", b: "flight(route)", severity: ${severity}}`,
    );
  if (!text.includes(`severity: ${severity}`))
    throw new Error("the travel policy's P5 line changed: update writeTravelPolicyWith");
  const file = join(directory, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

const user = (content: string): ChatMessage[] => [{ role: "user", content }];
const madeCall = (id: string, name: string, args: Record<string, unknown>, result: string): ChatMessage[] => [
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
  },
  { role: "tool", tool_call_id: id, content: result },
];

/**
 * What an operator investigates (issue 33), recorded by one real server (scripted generator,
 * policies travel and travel_stop): `travel`, the three requests of `recordTravelRuns` (earlier
 * denials); `unshielded`, a business flight from `longCity` to Boston booked with shield none (breaks P1, P3
 * and P5) then an answer; `stopped`, a flight Paris–Lyon that travel_stop's P5 stops, then the
 * client's next request, refused (409 MNT_ERR_RUN_STOPPED); `nothing`, a request for Toronto–Boston
 * offering only book_flight with tool_choice required (422 MNT_ERR_NOTHING_ALLOWED).
 */
export async function recordOperatorRuns(): Promise<{
  directory: string;
  policyFile: string;
  runs: { travel: string[]; unshielded: string[]; stopped: string[]; nothing: string[] };
}> {
  const directory = mkdtempSync(join(tmpdir(), "mentor-dashboard-"));
  const policyFile = writeTravelPolicyWith(mkdtempSync(join(tmpdir(), "mentor-policy-")), "stop");
  // A long city name: the page must hold it (truncated labels, the matrix scrolling in its frame).
  const montreal = { origin: longCity, destination: "Boston" };
  const paris = { origin: "Paris", destination: "Lyon" };
  const business = { ...montreal, travel_class: "business" };
  const unshielded = user(`Book a flight from ${longCity} to Boston.`);
  const stopped = user("Book a flight from Paris to Lyon, economy class please.");
  const afterBooking = [...unshielded, ...madeCall("call_b", "book_flight", business, "Booking confirmed.")];
  const stopText = { role: "assistant" as const, content: "" };
  const requests: RecordedRequest[] = [
    { messages: secondRequestMessages.slice(0, 1), toolChoice: "required" },
    { messages: secondRequestMessages, toolChoice: "required" },
    { messages: thirdRequestMessages, toolChoice: "auto" },
    { messages: unshielded, toolChoice: "required", mentor: { shield: "none" } },
    { messages: afterBooking, toolChoice: "auto", mentor: { shield: "none" } },
    { messages: stopped, toolChoice: "required", mentor: { policy: "travel_stop" } },
    // The client appends the shield's stop text (filled in below) and asks again.
    {
      messages: [...stopped, stopText, ...user("Please go on.")],
      toolChoice: "auto",
      mentor: { policy: "travel_stop" },
      status: 409,
    },
    {
      messages: user("Book a flight from Toronto to Boston, economy class please."),
      toolChoice: "required",
      tools: travelTools.filter((tool) => tool.function.name === "book_flight"),
      status: 422,
    },
  ];
  const { ids } = await recordRuns({
    steps: [
      ...travelSteps,
      { calls: [{ name: "book_flight", arguments: business }] },
      "Your flight is booked.",
      { calls: [{ name: "book_flight", arguments: { ...paris, travel_class: "economy" } }] },
    ],
    requests,
    directory,
    policies: ["travel", policyFile],
    onAnswer: (index, body) => {
      if (index === 5)
        stopText.content =
          (body as { choices: { message: { content: string } }[] }).choices[0]?.message.content ?? "";
    },
  });
  return {
    directory,
    policyFile,
    runs: {
      travel: ids.slice(0, 3),
      unshielded: ids.slice(3, 5),
      stopped: ids.slice(5, 7),
      nothing: ids.slice(7),
    },
  };
}
