import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { ChatTool, ParameterSchema } from "../../../src/openai/index.js";
import { benchSource, shippedPolicy } from "../../paths.js";
import type { BenchTask, Domain, Environment, ExecutedCall } from "../domain.js";
import { readTaskArray, requireField } from "../tasks-file.js";
import { cityNamed, distanceKm, readTravelDatabase, shortRouteKm, type TravelDatabase } from "./database.js";
import { TravelEnvironment } from "./environment.js";
import { evaluateTravel, type Trip } from "./evaluate.js";

/** A travel task: the trips the opening asks for, in the database's spelling. */
export interface TravelTask extends BenchTask {
  trips: Trip[];
}

const policyPath = shippedPolicy("travel");
const databaseFile = benchSource("domains", "travel", "db.json");
const defaultReply = "I have told you everything you need. Please go ahead as the travel manual says.";

const route = {
  origin: { type: "string", description: "Departure city" },
  destination: { type: "string", description: "Arrival city" },
};

/** The travel tools as the benchmark's agents get them. */
export const travelTools: ChatTool[] = [
  tool("check_distance", "Distance in km between two cities.", route),
  tool("check_seats", "Seat availability on flights between two cities.", route),
  tool("book_train", "Book a train ticket.", route),
  tool("book_flight", "Book a flight.", {
    ...route,
    travel_class: { type: "string", enum: ["economy", "business"], description: "Cabin class" },
  }),
];

function tool(name: string, description: string, properties: Record<string, ParameterSchema>): ChatTool {
  return {
    type: "function",
    function: {
      name,
      description,
      parameters: { type: "object", properties, required: Object.keys(properties) },
    },
  };
}

let database: TravelDatabase | undefined;
function travelDatabase(): TravelDatabase {
  database ??= readTravelDatabase(databaseFile);
  return database;
}

export const travel: Domain = {
  name: "travel",
  readsDataDir: false,
  policyPath,
  manual() {
    const { manual } = parse(readFileSync(policyPath, "utf8")) as { manual: Record<string, string> };
    const sentences = Object.entries(manual).map(([id, sentence]) => `${id}: ${sentence}`);
    return [
      "You are a corporate travel assistant. Book the business trips travellers ask for, using the tools.",
      "Follow the company travel manual:",
      ...sentences,
    ].join("\n");
  },
  tools: () => travelTools,
  tasks({ tasksFile }) {
    const file = tasksFile ?? benchSource("domains", "travel", "tasks.json");
    return readTaskArray(file).map((raw, index) => readTravelTask(raw, `[${index}]`, file));
  },
  environment(): Environment {
    return new TravelEnvironment(travelDatabase());
  },
  grounding: (task) =>
    (task as TravelTask).trips.map(({ origin, destination, urgent, wants, travel_class }) => ({
      name: "request_travel",
      arguments: { origin, destination, urgent, mode: wants ?? "any", travel_class: travel_class ?? "any" },
    })),
  label(call) {
    if (!call.name.startsWith("check_")) return undefined;
    // No flight on the route rules flying out as a full one does (the policy's label says so).
    if (call.name === "check_seats" && /\bno flight\b/.test(call.output)) return "full";
    if (call.error) return null;
    if (call.name === "check_seats") return /\bfull\b/.test(call.output) ? "full" : "available";
    const database = travelDatabase();
    const origin = cityNamed(database, call.arguments.origin) ?? "";
    const km = distanceKm(database, origin, cityNamed(database, call.arguments.destination) ?? "");
    return km === undefined ? null : km < shortRouteKm ? "short" : "long";
  },
  evaluate(task: BenchTask, run: ExecutedCall[], environment: Environment) {
    return evaluateTravel(
      (task as TravelTask).trips,
      run,
      travelDatabase(),
      environment.state() as TravelDatabase,
    );
  },
};

function readTravelTask(raw: Record<string, unknown>, where: string, file: string): TravelTask {
  requireField(typeof raw.id === "string", file, `${where}.id`, "a string");
  const at = `task ${raw.id}`;
  requireField(typeof raw.opening === "string", file, `${at}.opening`, "a string");
  requireField(raw.reply === undefined || typeof raw.reply === "string", file, `${at}.reply`, "a string");
  requireField(Array.isArray(raw.trips) && raw.trips.length > 0, file, `${at}.trips`, "a non-empty array");
  const trips = (raw.trips as Record<string, unknown>[]).map((trip, index) => {
    const field = `${at}.trips[${index}]`;
    const origin = cityNamed(travelDatabase(), trip.origin);
    const destination = cityNamed(travelDatabase(), trip.destination);
    requireField(origin !== undefined, file, `${field}.origin`, "a city of the travel database");
    requireField(destination !== undefined, file, `${field}.destination`, "a city of the travel database");
    requireField(typeof trip.urgent === "boolean", file, `${field}.urgent`, "a boolean");
    requireField(
      [undefined, "train", "flight"].includes(trip.wants as string),
      file,
      `${field}.wants`,
      '"train" or "flight"',
    );
    requireField(
      [undefined, "economy", "business"].includes(trip.travel_class as string),
      file,
      `${field}.travel_class`,
      '"economy" or "business"',
    );
    return { ...(trip as unknown as Trip), origin, destination };
  });
  const reference = raw.reference;
  requireField(
    reference === undefined || Array.isArray(reference),
    file,
    `${at}.reference`,
    "an array of calls",
  );
  (reference ?? []).forEach((call: { name?: unknown; arguments?: unknown }, index: number) => {
    requireField(
      travelTools.some((tool) => tool.function.name === call?.name),
      file,
      `${at}.reference[${index}].name`,
      "a travel tool",
    );
    requireField(
      typeof call.arguments === "object" && call.arguments !== null,
      file,
      `${at}.reference[${index}].arguments`,
      "an object",
    );
  });
  return {
    id: raw.id,
    opening: raw.opening,
    reply: (raw.reply as string | undefined) ?? defaultReply,
    solvable: true,
    trips,
    ...(reference ? { reference: reference as TravelTask["reference"] } : {}),
  };
}
