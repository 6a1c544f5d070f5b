import { readFileSync } from "node:fs";
import { MentorError } from "../../../src/errors/index.js";

/** The travel database: cities, distances (either direction), flights with seats, bookings. */
export interface TravelDatabase {
  cities: string[];
  distances: { between: [string, string]; km: number }[];
  flights: { origin: string; destination: string; seats: number }[];
  bookings: TravelBooking[];
}

export interface TravelBooking {
  booking_id: string;
  mode: "train" | "flight";
  origin: string;
  destination: string;
  travel_class?: "economy" | "business";
}

export function readTravelDatabase(file: string): TravelDatabase {
  let database: TravelDatabase;
  try {
    database = JSON.parse(readFileSync(file, "utf8")) as TravelDatabase;
  } catch (error) {
    throw new MentorError("MNT_ERR_BENCH_INPUT", `${file}: ${(error as Error).message}`);
  }
  for (const field of ["cities", "distances", "flights", "bookings"] as const) {
    if (!Array.isArray(database[field])) {
      throw new MentorError("MNT_ERR_BENCH_INPUT", `${file}: field ${field} must be an array`);
    }
  }
  return database;
}

/** The database's spelling of a city named in any case, or undefined. */
export function cityNamed(database: TravelDatabase, name: unknown): string | undefined {
  if (typeof name !== "string") return undefined;
  const wanted = name.trim().toLowerCase();
  return database.cities.find((city) => city.toLowerCase() === wanted);
}

export function distanceKm(
  database: TravelDatabase,
  origin: string,
  destination: string,
): number | undefined {
  return database.distances.find(
    ({ between: [one, other] }) =>
      (one === origin && other === destination) || (one === destination && other === origin),
  )?.km;
}

export function flightOn(database: TravelDatabase, origin: string, destination: string) {
  return database.flights.find((flight) => flight.origin === origin && flight.destination === destination);
}

/** The manual's threshold (P2): a route shorter than this is flown never. */
export const shortRouteKm = 500;
