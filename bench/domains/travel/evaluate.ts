import type { ExecutedCall, Verdict } from "../domain.js";
import { cityNamed, distanceKm, flightOn, shortRouteKm, type TravelDatabase } from "./database.js";

/** A trip the traveller asks for, as the task file states it. */
export interface Trip {
  origin: string;
  destination: string;
  /** The traveller stated an urgent business need (P3). */
  urgent: boolean;
  /** The traveller asked for this mode; honoured where the manual allows it. */
  wants?: "train" | "flight";
  /** The traveller asked for this class; business is honoured only with an urgent need. */
  travel_class?: "economy" | "business";
}

/**
 * Judges a travel run without the policy: one explicit check per manual sentence over the calls
 * the agent made (P1–P3, P5–P7), then the final bookings against the trips asked for (P4 and the
 * traveller's wishes where the manual allows them). `initial` is the database the run started from.
 */
export function evaluateTravel(
  trips: readonly Trip[],
  run: readonly ExecutedCall[],
  initial: TravelDatabase,
  final: TravelDatabase,
): Verdict {
  const reasons: string[] = [];
  const routeOf = (call: ExecutedCall) => {
    const origin = cityNamed(initial, call.arguments.origin) ?? String(call.arguments.origin);
    const destination = cityNamed(initial, call.arguments.destination) ?? String(call.arguments.destination);
    return { origin, destination, key: `${origin} → ${destination}` };
  };
  const urgentRoutes = new Set(
    trips.filter((trip) => trip.urgent).map((trip) => `${trip.origin} → ${trip.destination}`),
  );
  const distanceChecked = new Set<string>();
  const seatsChecked = new Set<string>();
  const foundFull = new Set<string>();
  const booked = new Set<string>();
  run.forEach((call, index) => {
    const route = routeOf(call);
    const at = `call ${index + 1} ${call.name}(${route.key})`;
    if (call.name === "check_distance" && !call.error) distanceChecked.add(route.key);
    if (call.name === "check_seats" && !call.error) {
      seatsChecked.add(route.key);
      if (/\bfull\b/.test(call.output)) foundFull.add(route.key);
    }
    if (call.name !== "book_train" && call.name !== "book_flight") return;
    if (!distanceChecked.has(route.key))
      reasons.push(`P1: ${at} without checking the route's distance first`);
    if (booked.has(route.key)) reasons.push(`P6: ${at} after the route was already booked`);
    if (call.name === "book_flight") {
      const km = distanceKm(initial, route.origin, route.destination);
      if (km !== undefined && km < shortRouteKm) reasons.push(`P2: ${at} flies a ${km} km route`);
      if (call.arguments.travel_class === "business" && !urgentRoutes.has(route.key)) {
        reasons.push(`P3: ${at} in business class without a stated urgent need`);
      }
      if (!seatsChecked.has(route.key)) reasons.push(`P5: ${at} without checking seat availability first`);
      if (foundFull.has(route.key)) reasons.push(`P7: ${at} after the seat check found the flight full`);
    }
    if (!call.error && confirmed(call.output)) booked.add(route.key);
  });
  reasons.push(...bookingProblems(trips, initial, final));
  return { pass: reasons.length === 0, reasons };
}

/** P4 and the traveller's wishes: exactly one fitting booking per trip, and no other booking. */
function bookingProblems(trips: readonly Trip[], initial: TravelDatabase, final: TravelDatabase): string[] {
  const problems: string[] = [];
  const added = final.bookings.slice(initial.bookings.length);
  for (const trip of trips) {
    const route = `${trip.origin} → ${trip.destination}`;
    const bookings = added.filter(
      (booking) => booking.origin === trip.origin && booking.destination === trip.destination,
    );
    if (bookings.length === 0) {
      problems.push(`P4: the trip ${route} was not booked`);
      continue;
    }
    if (bookings.length > 1) problems.push(`the trip ${route} was booked ${bookings.length} times`);
    const expected = expectedBooking(trip, initial);
    for (const booking of bookings) {
      if (!expected.modes.includes(booking.mode)) {
        problems.push(
          `the trip ${route} was booked by ${booking.mode}; expected ${expected.modes.join(" or ")}`,
        );
      } else if (booking.mode === "flight" && !expected.classes.includes(booking.travel_class ?? "economy")) {
        problems.push(
          `the flight ${route} was booked in ${booking.travel_class}; expected ${expected.classes.join(" or ")}`,
        );
      }
    }
  }
  for (const booking of added) {
    if (!trips.some((trip) => trip.origin === booking.origin && trip.destination === booking.destination)) {
      problems.push(
        `booking ${booking.booking_id} (${booking.origin} → ${booking.destination}) was not asked for`,
      );
    }
  }
  return problems;
}

/** What a compliant booking of the trip is: the manual first, then what the traveller asked for. */
export function expectedBooking(
  trip: Trip,
  database: TravelDatabase,
): { modes: ("train" | "flight")[]; classes: ("economy" | "business")[] } {
  const km = distanceKm(database, trip.origin, trip.destination) ?? 0;
  const seats = flightOn(database, trip.origin, trip.destination)?.seats ?? 0;
  const mayFly = km >= shortRouteKm && seats > 0;
  const modes: ("train" | "flight")[] = !mayFly ? ["train"] : trip.wants ? [trip.wants] : ["train", "flight"];
  let classes: ("economy" | "business")[] = ["economy"];
  if (trip.urgent) classes = trip.travel_class ? [trip.travel_class] : ["economy", "business"];
  return { modes, classes };
}

function confirmed(output: string): boolean {
  try {
    return (JSON.parse(output) as { status?: unknown }).status === "confirmed";
  } catch {
    return false;
  }
}
