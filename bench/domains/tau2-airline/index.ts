import { join } from "node:path";
import { MentorError } from "../../../src/errors/index.js";
import { shippedPolicy } from "../../paths.js";
import type { Database, Row, Tables } from "../tau2-shared/database.js";
import { type Action, type TaskCall, tau2Domain } from "../tau2-shared/domain.js";
import { readJson } from "../tau2-shared/tools.js";
import { airlineAccount, airlineCatalogue, airlineTools } from "./tools.js";

/** tau2's airline domain: bookings, changes and cancellations over tau-bench v1's airline database. */
export const tau2Airline = tau2Domain({
  name: "tau2-airline",
  folder: "airline",
  v1ToolsFile: join("tau-bench-v1", "airline", "tools.json"),
  policyPath: shippedPolicy("tau2-airline"),
  loadTables: airlineTables,
  handlers: airlineTools,
  account: airlineAccount,
  catalogue: airlineCatalogue,
  requests: airlineRequests,
});

type Segment = { flight_number?: unknown; date?: unknown };

/**
 * Oracle grounding: one request per successful reference write, on the reservation (or user) it
 * writes. A flight update is a change of flights if its flights differ from the reservation's
 * before the run, and a change of cabin if its cabin does (both, or either). The user's reason
 * for a cancellation is not in the data; a reservation the reference cancels is one whose
 * cancellation is owed, so the oracle says the reason is covered (it never exempts the duty).
 * Compensation (`send_certificate`) is no request kind of the policy.
 */
export function airlineRequests(writes: readonly Action[], initial: Database): TaskCall[] {
  return writes.flatMap((write): TaskCall[] => {
    const id = write.arguments.reservation_id;
    const reservation = (typeof id === "string" ? initial.get("reservations", id) : undefined) ?? {};
    switch (write.name) {
      case "cancel_reservation":
        return [{ name: "request_cancel", arguments: { reservation_id: id, covered: true } }];
      case "update_reservation_flights": {
        const calls: TaskCall[] = [];
        const segments = (list: unknown) =>
          JSON.stringify(((list ?? []) as Segment[]).map((segment) => [segment.flight_number, segment.date]));
        if (segments(write.arguments.flights) !== segments(reservation.flights))
          calls.push({ name: "request_flight_change", arguments: { reservation_id: id } });
        if (write.arguments.cabin !== reservation.cabin)
          calls.push({
            name: "request_cabin_change",
            arguments: { reservation_id: id, cabin: write.arguments.cabin },
          });
        return calls;
      }
      case "update_reservation_baggages":
        return [{ name: "request_baggage_change", arguments: { reservation_id: id } }];
      case "update_reservation_passengers":
        return [{ name: "request_passenger_change", arguments: { reservation_id: id } }];
      case "book_reservation":
        return [{ name: "request_booking", arguments: { user_id: write.arguments.user_id } }];
      default:
        return [];
    }
  });
}

/**
 * tau2's airline database, built from tau-bench v1's `flights.json`, `reservations.json` and
 * `users.json` (tables keyed by flight number, reservation id and user id); v1's users lack
 * tau2's `user_id` field, which is filled in from the key.
 */
export function airlineTables(dataDir: string): Tables {
  const tables: Tables = {};
  for (const table of ["flights", "reservations", "users"]) {
    const file = join(dataDir, "tau-bench-v1", "airline", `${table}.json`);
    const rows = readJson(file);
    if (typeof rows !== "object" || rows === null || Array.isArray(rows)) {
      throw new MentorError("MNT_ERR_BENCH_DATA", `${file} must be an object of records by id`);
    }
    tables[table] = rows as Record<string, Row>;
  }
  for (const [id, user] of Object.entries(tables.users ?? {})) {
    if (user.user_id === undefined) tables.users = { ...tables.users, [id]: { user_id: id, ...user } };
  }
  return tables;
}
