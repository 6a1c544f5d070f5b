import type { Environment } from "../domain.js";
import { cityNamed, distanceKm, flightOn, type TravelBooking, type TravelDatabase } from "./database.js";

type Result = { output: string; error: boolean };

const toolNames = new Set(["check_distance", "check_seats", "book_train", "book_flight"]);

/**
 * The travel tools over one copy of the database. Lookups answer in plain language (the
 * labeler's job is to read them); bookings answer in JSON. The environment enforces only what
 * the world enforces (unknown cities, no flight, no seats), never the manual.
 */
export class TravelEnvironment implements Environment {
  private readonly database: TravelDatabase;

  constructor(database: TravelDatabase) {
    this.database = structuredClone(database);
  }

  call(name: string, args: Record<string, unknown>): Result {
    if (!toolNames.has(name)) return { output: `Unknown tool ${name}.`, error: true };
    const route = this.route(args);
    const isBooking = name.startsWith("book_");
    if (typeof route === "string") {
      return isBooking ? failure(route) : { output: `Sorry: ${route}.`, error: true };
    }
    const { origin, destination, km } = route;
    const flight = flightOn(this.database, origin, destination);
    switch (name) {
      case "check_distance":
        return { output: `${origin} to ${destination}: ${km} km.`, error: false };
      case "check_seats":
        if (!flight) return { output: `There is no flight from ${origin} to ${destination}.`, error: true };
        if (flight.seats === 0)
          return { output: `The ${origin}-${destination} flight is full.`, error: false };
        return {
          output: `Seats available on the ${origin}-${destination} flight: ${flight.seats}`,
          error: false,
        };
      case "book_train":
        return this.book({ mode: "train", origin, destination });
      default: {
        const travelClass = args.travel_class;
        if (travelClass !== "economy" && travelClass !== "business") {
          return failure(
            `travel_class must be "economy" or "business", not ${JSON.stringify(travelClass ?? null)}`,
          );
        }
        if (!flight) return failure(`there is no flight from ${origin} to ${destination}`);
        if (flight.seats === 0) return failure(`the ${origin}-${destination} flight is full`);
        flight.seats -= 1;
        return this.book({ mode: "flight", origin, destination, travel_class: travelClass });
      }
    }
  }

  state(): TravelDatabase {
    return structuredClone(this.database);
  }

  /** Resolves the route's cities (any case) and its distance, or says what is wrong. */
  private route(args: Record<string, unknown>): { origin: string; destination: string; km: number } | string {
    const origin = cityNamed(this.database, args.origin);
    const destination = cityNamed(this.database, args.destination);
    if (origin === undefined) return `unknown city ${JSON.stringify(args.origin ?? null)}`;
    if (destination === undefined) return `unknown city ${JSON.stringify(args.destination ?? null)}`;
    const km = distanceKm(this.database, origin, destination);
    if (km === undefined) return `no route from ${origin} to ${destination}`;
    return { origin, destination, km };
  }

  private book(booking: Omit<TravelBooking, "booking_id">): Result {
    const confirmed = { booking_id: `B${this.database.bookings.length + 1}`, ...booking };
    this.database.bookings.push(confirmed);
    return { output: JSON.stringify({ status: "confirmed", ...confirmed }), error: false };
  }
}

function failure(message: string): Result {
  return { output: JSON.stringify({ status: "error", message }), error: true };
}
