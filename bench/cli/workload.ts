/**
 * The inputs of bench:cli: long travel conversations for `mentor verify`, and large travel-like
 * policies for `mentor lint`. Both are seeded and deterministic, so two builds read the same files.
 */
import { seededRandom } from "../../src/base/random.js";

/** Rules per copy of the travel rules in `travelPolicy`. */
export const RULES_PER_COPY = 8;

/** The two routes the user asks for, and one more (its bookings break P4_only). */
const ROUTES = [
  ["Toronto", "Chicago"],
  ["Ottawa", "Denver"],
  ["Chicago", "Toronto"],
] as const;

/** What each tool of the travel policy answers (text the policy's labeler rules read, or JSON). */
const OUTPUTS: Record<string, readonly string[]> = {
  check_distance: ["The distance is 840 km.", "It is 350 km by road.", "Distance unknown."],
  check_seats: ["12 seats available.", "The flight is full.", "Let me look that up."],
  book_train: ['{"status": "confirmed"}', '{"status": "failed"}'],
  book_flight: ['{"status": "confirmed"}', '{"status": "failed"}'],
};

/**
 * An OpenAI `messages` array of a travel conversation (policies/travel) with `calls` made calls:
 * the user asks for two trips (grounded in `mentor.task`), then the assistant calls a random
 * tool on one of three routes (the two asked for and their first's way back), one call per message, and each tool message answers
 * in text the policy's labeler rules read. Some calls break rules: verify judges them all.
 */
export function travelConversation(calls: number, seed = 1): Record<string, unknown>[] {
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const messages: Record<string, unknown>[] = [
    {
      role: "user",
      content: "Book a train from Toronto to Chicago, and a flight from Ottawa to Denver (urgent).",
      mentor: {
        task: [
          {
            name: "request_travel",
            arguments: {
              origin: "Toronto",
              destination: "Chicago",
              urgent: false,
              mode: "train",
              travel_class: "any",
            },
          },
          {
            name: "request_travel",
            arguments: {
              origin: "Ottawa",
              destination: "Denver",
              urgent: true,
              mode: "flight",
              travel_class: "any",
            },
          },
        ],
      },
    },
  ];
  for (let index = 0; index < calls; index++) {
    const name = pick(Object.keys(OUTPUTS));
    const [origin, destination] = pick(ROUTES);
    const args: Record<string, string> = { origin, destination };
    if (name === "book_flight") args.travel_class = pick(["economy", "business"]);
    const id = `call_${index + 1}`;
    messages.push(
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
      },
      { role: "tool", tool_call_id: id, content: pick(OUTPUTS[name] as readonly string[]) },
    );
  }
  return messages;
}

/**
 * A policy of `copies` copies of the travel policy's rules (8 rules and a constraint per copy),
 * each copy with its own tools, task call, entity and propositions (suffix `_k`), so every rule id
 * and proposition is distinct and no copy reads another's calls. `copies × 8` rules in all.
 */
export function travelPolicy(copies: number): string {
  const lines = ["policy: travel_copies", "manual:"];
  for (let copy = 0; copy < copies; copy++) {
    lines.push(
      `  P1_${copy}: Check the distance of a route before any booking for it (copy ${copy}).`,
      `  P2_${copy}: Never fly a route shorter than 500 km (copy ${copy}).`,
      `  P3_${copy}: Business class only with an urgent business need (copy ${copy}).`,
      `  P4_${copy}: The requested trip must be booked before you finish (copy ${copy}).`,
      `  P5_${copy}: Check seat availability for a flight before booking it (copy ${copy}).`,
      `  P6_${copy}: Do not book the same route twice once a booking is confirmed (copy ${copy}).`,
      `  P7_${copy}: Never book a flight whose seat check found it full (copy ${copy}).`,
    );
  }
  lines.push("tools:");
  for (let copy = 0; copy < copies; copy++) {
    lines.push(
      `  check_distance_${copy}:`,
      "    parameters: {origin: string, destination: string}",
      "    output: text",
      "    labels: {short: shorter than 500 km, long: 500 km or longer}",
      `  check_seats_${copy}:`,
      "    parameters: {origin: string, destination: string}",
      "    output: text",
      "    labels: {available: seats are available, full: the flight is full}",
      `  book_train_${copy}: {parameters: {origin: string, destination: string}}`,
      `  book_flight_${copy}: {parameters: {origin: string, destination: string, travel_class: {enum: [economy, business]}}}`,
    );
  }
  lines.push("task:");
  for (let copy = 0; copy < copies; copy++)
    lines.push(
      `  request_travel_${copy}: {parameters: {origin: string, destination: string, urgent: boolean, mode: {enum: [flight, train, any]}}}`,
    );
  lines.push("entities:");
  for (let copy = 0; copy < copies; copy++)
    lines.push(
      `  route_${copy}: {from: {request_travel_${copy}: {x_${copy}: origin, y_${copy}: destination}}}`,
    );
  lines.push("propositions:");
  for (let copy = 0; copy < copies; copy++) {
    const when = `a.origin == x_${copy} && a.destination == y_${copy}`;
    const on = (tool: string, outcome?: string): string =>
      `{tool: ${tool}_${copy}, when: "${when}"${outcome ? `, outcome: "${outcome}"` : ""}}`;
    const route = `(route_${copy})`;
    lines.push(
      `  checked_${copy}${route}: ${on("check_distance", "o.label == 'short' || o.label == 'long'")}`,
      `  short_${copy}${route}: ${on("check_distance", "o.label == 'short'")}`,
      `  seats_checked_${copy}${route}: ${on("check_seats", "o.label == 'available' || o.label == 'full'")}`,
      `  full_${copy}${route}: ${on("check_seats", "o.label == 'full'")}`,
      `  train_${copy}${route}: ${on("book_train")}`,
      `  flight_${copy}${route}: ${on("book_flight")}`,
      `  train_ok_${copy}${route}: ${on("book_train", "o.status == 'confirmed'")}`,
      `  flight_ok_${copy}${route}: ${on("book_flight", "o.status == 'confirmed'")}`,
      `  flight_not_asked_${copy}${route}: {tool: book_flight_${copy}, when: "${when} && task.request_travel_${copy}.mode == 'train'"}`,
    );
  }
  lines.push("rules:");
  for (let copy = 0; copy < copies; copy++) {
    const p = (name: string): string => `${name}_${copy}(route_${copy})`;
    lines.push(
      `  - {id: P1_${copy}, ltl: "G((${p("flight")} | ${p("train")}) -> O ${p("checked")})"}`,
      `  - {id: P2_${copy}, ltl: "G(${p("short")} -> G !${p("flight")})"}`,
      `  - {id: P4_${copy}, ltl: "F(${p("flight_ok")} | ${p("train_ok")})", applies_to: requested}`,
      `  - {id: P5_${copy}, template: precedence, a: "${p("seats_checked")}", b: "${p("flight")}"}`,
      `  - {id: P6_${copy}, ltl: "G((${p("flight_ok")} | ${p("train_ok")}) -> WX G !(${p("flight")} | ${p("train")}))"}`,
      `  - {id: P7_${copy}, template: notSuccession, a: "${p("full")}", b: "${p("flight")}"}`,
      `  - {id: P4_mode_${copy}, ltl: "G !${p("flight_not_asked")}", applies_to: requested, sentence: "P4_${copy}: by the mode asked for."}`,
      `  - {id: P4_only_${copy}, ltl: "G !(${p("train")} | ${p("flight")})", applies_to: unrequested, sentence: "P4_${copy}: only the trips asked for."}`,
    );
  }
  lines.push("constraints:");
  for (let copy = 0; copy < copies; copy++)
    lines.push(
      `  - {id: P3_${copy}, on: "flight_${copy}(route_${copy})", require: "a.travel_class == 'economy' || task.request_travel_${copy}.urgent == true"}`,
    );
  return `${lines.join("\n")}\n`;
}
