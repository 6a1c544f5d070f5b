import type { Database, Row } from "../tau2-shared/database.js";
import type { Action, ToolHandler } from "../tau2-shared/domain.js";
import { calculate, requireRecord, ToolError } from "../tau2-shared/tools.js";

// The airline tools of tau2, written from their schemas and docstrings (tool_schemas.json,
// `airline/tools.py`), tau-bench v1's schemas and the manual. Tables: `users`, `reservations`,
// `flights` (by id), built from tau-bench v1's airline files.

/** The manual's "now": 2024-05-15 15:00:00 EST; new reservations are created at this time. */
export const NOW = "2024-05-15T15:00:00";

interface FlightDate {
  status: string;
  available_seats?: Record<string, number>;
  prices?: Record<string, number>;
}
interface Flight {
  flight_number: string;
  origin: string;
  destination: string;
  scheduled_departure_time_est: string;
  scheduled_arrival_time_est: string;
  dates: Record<string, FlightDate>;
}
interface ReservationFlight {
  origin: string;
  destination: string;
  flight_number: string;
  date: string;
  price: number;
}
interface PaymentMethod {
  source: string;
  id: string;
  amount?: number;
}
interface Passenger {
  first_name: string;
  last_name: string;
  dob: string;
}

const BAGGAGE_PRICE = 50;
const INSURANCE_PRICE = 30;

const user = (database: Database, id: string): Row => requireRecord(database, "users", id, "user");
const reservation = (database: Database, id: string): Row =>
  requireRecord(database, "reservations", id, "reservation");
const flight = (database: Database, number: string): Flight =>
  requireRecord(database, "flights", number, "flight") as unknown as Flight;

function paymentMethod(database: Database, userId: string, id: string): PaymentMethod {
  const method = (user(database, userId).payment_methods as Record<string, PaymentMethod>)[id];
  if (!method) throw new ToolError(`payment method ${id} not found in the profile of ${userId}`);
  return method;
}

/** Takes an amount from a gift card or certificate (credit cards have no balance here). */
function charge(database: Database, userId: string, methodId: string, amount: number): void {
  const method = paymentMethod(database, userId, methodId);
  if (method.source === "credit_card") return;
  if ((method.amount ?? 0) < amount) {
    throw new ToolError(`not enough balance on ${methodId}: ${method.amount}, needs ${amount}`);
  }
  const edited = (database.edit("users", userId).payment_methods as Record<string, PaymentMethod>)[methodId];
  if (edited) edited.amount = (edited.amount ?? 0) - amount;
}

/** A bookable flight on a date in a cabin, with seats for the passengers: its reservation segment. */
function bookableSegment(
  database: Database,
  segment: { flight_number: string; date: string },
  cabin: string,
  passengers: number,
): ReservationFlight {
  const found = flight(database, segment.flight_number);
  const day = found.dates[segment.date];
  if (!day) throw new ToolError(`flight ${segment.flight_number} does not fly on ${segment.date}`);
  if (day.status !== "available") {
    throw new ToolError(`flight ${segment.flight_number} on ${segment.date} is ${day.status}, not available`);
  }
  const seats = day.available_seats?.[cabin] ?? 0;
  if (seats < passengers) {
    throw new ToolError(
      `flight ${segment.flight_number} on ${segment.date} has ${seats} ${cabin} seats left`,
    );
  }
  return {
    origin: found.origin,
    destination: found.destination,
    flight_number: found.flight_number,
    date: segment.date,
    price: day.prices?.[cabin] ?? 0,
  };
}

function takeSeats(database: Database, segment: ReservationFlight, cabin: string, passengers: number): void {
  const day = (database.edit("flights", segment.flight_number).dates as Record<string, FlightDate>)[
    segment.date
  ];
  if (day?.available_seats) day.available_seats[cabin] = (day.available_seats[cabin] ?? 0) - passengers;
}

/** The first id of the form `prefix + n` (n = 1, 2, …) no record of the table has: deterministic per run. */
function newId(database: Database, table: string, make: (n: number) => string): string {
  for (let n = 1; ; n++) {
    const id = make(n);
    if (database.get(table, id) === undefined) return id;
  }
}

function newCertificateId(database: Database, userId: string): string {
  const methods = user(database, userId).payment_methods as Record<string, PaymentMethod>;
  for (let n = 1; ; n++) {
    const id = `certificate_${String(n).padStart(7, "0")}`;
    if (!methods[id]) return id;
  }
}

function flightSearchResult(found: Flight, date: string): Row {
  const { dates, ...schedule } = found;
  const day = dates[date] as FlightDate;
  return { ...schedule, date, status: day.status, available_seats: day.available_seats, prices: day.prices };
}

function addDays(date: string, days: number): string {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() + days);
  return day.toISOString().slice(0, 10);
}

/** Minutes after midnight of the departure day; `+1` marks the next day. */
function minutesOf(time: string): number {
  const [clock = "", plus] = time.split("+");
  const [hours = 0, minutes = 0] = clock.split(":").map(Number);
  return (Number(plus ?? 0) * 24 + hours) * 60 + minutes;
}

function available(found: Flight, date: string): boolean {
  return found.dates[date]?.status === "available";
}

export const airlineTools: Record<string, ToolHandler> = {
  book_reservation: (database, args) => {
    const {
      user_id,
      cabin,
      flight_type,
      passengers,
      payment_methods,
      total_baggages,
      nonfree_baggages,
      insurance,
    } = args;
    user(database, user_id);
    if (passengers.length === 0) throw new ToolError("a reservation needs at least one passenger");
    if (args.flights.length === 0) throw new ToolError("a reservation needs at least one flight");
    if (nonfree_baggages > total_baggages || nonfree_baggages < 0) {
      throw new ToolError("nonfree_baggages must be between 0 and total_baggages");
    }
    const segments = (args.flights as { flight_number: string; date: string }[]).map((segment) =>
      bookableSegment(database, segment, cabin, passengers.length),
    );
    const total =
      segments.reduce((sum, segment) => sum + segment.price, 0) * passengers.length +
      (insurance === "yes" ? INSURANCE_PRICE * passengers.length : 0) +
      BAGGAGE_PRICE * nonfree_baggages;
    const payments = payment_methods as { payment_id: string; amount: number }[];
    const paid = payments.reduce((sum, payment) => sum + payment.amount, 0);
    if (Math.abs(paid - total) > 1e-6) {
      throw new ToolError(`the payments add up to ${paid}, but the reservation costs ${total}`);
    }
    for (const payment of payments) {
      const method = paymentMethod(database, user_id, payment.payment_id);
      if (method.source !== "credit_card" && (method.amount ?? 0) < payment.amount) {
        throw new ToolError(
          `not enough balance on ${payment.payment_id}: ${method.amount}, needs ${payment.amount}`,
        );
      }
    }
    for (const payment of payments) charge(database, user_id, payment.payment_id, payment.amount);
    for (const segment of segments) takeSeats(database, segment, cabin, passengers.length);
    const id = newId(database, "reservations", (n) => `NEW${String(n).padStart(3, "0")}`);
    const booked: Row = {
      reservation_id: id,
      user_id,
      origin: args.origin,
      destination: args.destination,
      flight_type,
      cabin,
      flights: segments,
      passengers: passengers.map(({ first_name, last_name, dob }: Passenger) => ({
        first_name,
        last_name,
        dob,
      })),
      payment_history: payments.map(({ payment_id, amount }) => ({ payment_id, amount })),
      created_at: NOW,
      total_baggages,
      nonfree_baggages,
      insurance,
    };
    database.insert("reservations", id, booked);
    (database.edit("users", user_id).reservations as string[]).push(id);
    return booked;
  },

  calculate: (_database, { expression }) => calculate(expression),

  cancel_reservation: (database, { reservation_id }) => {
    const found = reservation(database, reservation_id);
    if (found.status === "cancelled")
      throw new ToolError(`reservation ${reservation_id} is already cancelled`);
    const edited = database.edit("reservations", reservation_id);
    const history = edited.payment_history as { payment_id: string; amount: number }[];
    for (const payment of [...history])
      history.push({ payment_id: payment.payment_id, amount: -payment.amount });
    edited.status = "cancelled";
    return edited;
  },

  get_reservation_details: (database, { reservation_id }) => reservation(database, reservation_id),

  get_user_details: (database, { user_id }) => user(database, user_id),

  list_all_airports: (database) => {
    const codes = new Set<string>();
    for (const row of database.rows("flights")) {
      codes.add(row.origin as string);
      codes.add(row.destination as string);
    }
    return [...codes].sort();
  },

  search_direct_flight: (database, { origin, destination, date }) =>
    [...database.rows("flights")]
      .map((row) => row as unknown as Flight)
      .filter(
        (found) => found.origin === origin && found.destination === destination && available(found, date),
      )
      .map((found) => flightSearchResult(found, date)),

  search_onestop_flight: (database, { origin, destination, date }) => {
    const flights = [...database.rows("flights")].map((row) => row as unknown as Flight);
    const connections: Row[][] = [];
    for (const first of flights) {
      if (first.origin !== origin || first.destination === destination || !available(first, date)) continue;
      const arrival = minutesOf(first.scheduled_arrival_time_est);
      const secondDate = arrival >= 24 * 60 ? addDays(date, 1) : date;
      for (const second of flights) {
        if (second.origin !== first.destination || second.destination !== destination) continue;
        if (!available(second, secondDate)) continue;
        if (minutesOf(second.scheduled_departure_time_est) + (secondDate === date ? 0 : 24 * 60) <= arrival)
          continue;
        connections.push([flightSearchResult(first, date), flightSearchResult(second, secondDate)]);
      }
    }
    return connections;
  },

  send_certificate: (database, { user_id, amount }) => {
    user(database, user_id);
    if (amount <= 0) throw new ToolError("the certificate amount must be positive");
    const id = newCertificateId(database, user_id);
    (database.edit("users", user_id).payment_methods as Record<string, PaymentMethod>)[id] = {
      source: "certificate",
      id,
      amount,
    };
    return `Certificate ${id} added to user ${user_id} with amount ${amount}.`;
  },

  transfer_to_human_agents: () => "Transfer successful",

  update_reservation_baggages: (
    database,
    { reservation_id, total_baggages, nonfree_baggages, payment_id },
  ) => {
    const found = reservation(database, reservation_id);
    if (nonfree_baggages > total_baggages || nonfree_baggages < 0) {
      throw new ToolError("nonfree_baggages must be between 0 and total_baggages");
    }
    const userId = found.user_id as string;
    const cost = BAGGAGE_PRICE * Math.max(0, nonfree_baggages - (found.nonfree_baggages as number));
    paymentMethod(database, userId, payment_id);
    if (cost > 0) charge(database, userId, payment_id, cost);
    const edited = database.edit("reservations", reservation_id);
    edited.total_baggages = total_baggages;
    edited.nonfree_baggages = nonfree_baggages;
    if (cost > 0) (edited.payment_history as Row[]).push({ payment_id, amount: cost });
    return edited;
  },

  update_reservation_flights: (database, { reservation_id, cabin, flights, payment_id }) => {
    const found = reservation(database, reservation_id);
    const userId = found.user_id as string;
    const passengers = (found.passengers as Passenger[]).length;
    const kept = found.flights as ReservationFlight[];
    const segments = (flights as { flight_number: string; date: string }[]).map((segment) => {
      const same = kept.find(
        (old) => old.flight_number === segment.flight_number && old.date === segment.date,
      );
      // A kept segment keeps its price unless the cabin changes.
      return same && cabin === found.cabin
        ? { ...same }
        : bookableSegment(database, segment, cabin, passengers);
    });
    const price = (list: ReservationFlight[]) => list.reduce((sum, segment) => sum + segment.price, 0);
    const difference = (price(segments) - price(kept)) * passengers;
    paymentMethod(database, userId, payment_id);
    if (difference > 0) charge(database, userId, payment_id, difference);
    const edited = database.edit("reservations", reservation_id);
    edited.flights = segments;
    edited.cabin = cabin;
    if (difference !== 0) (edited.payment_history as Row[]).push({ payment_id, amount: difference });
    return edited;
  },

  update_reservation_passengers: (database, { reservation_id, passengers }) => {
    const found = reservation(database, reservation_id);
    if ((found.passengers as Passenger[]).length !== passengers.length) {
      throw new ToolError(
        `the reservation has ${(found.passengers as Passenger[]).length} passengers; their number cannot change`,
      );
    }
    const edited = database.edit("reservations", reservation_id);
    edited.passengers = passengers.map(({ first_name, last_name, dob }: Passenger) => ({
      first_name,
      last_name,
      dob,
    }));
    return edited;
  },

  get_flight_status: (database, { flight_number, date }) => {
    const day = flight(database, flight_number).dates[date];
    if (!day) throw new ToolError(`flight ${flight_number} does not fly on ${date}`);
    return day.status;
  },
};

/** The users a reference acts for: named by `user_id`, or owning a `reservation_id` it names. */
function usersOf(database: Database, reference: readonly Action[]): Set<string> {
  const users = new Set<string>();
  for (const { arguments: args } of reference) {
    if (typeof args.user_id === "string" && database.get("users", args.user_id)) users.add(args.user_id);
    const id = args.reservation_id;
    const owner = typeof id === "string" ? database.get("reservations", id)?.user_id : undefined;
    if (typeof owner === "string") users.add(owner);
  }
  return users;
}

/** Airline's account rule (see `withSolvability`): the user must give their user id. */
export function airlineAccount(
  database: Database,
  reference: readonly Action[],
  opening: string,
): { problem?: string; texts: string[] } {
  const texts: string[] = [];
  for (const userId of usersOf(database, reference)) {
    if (!opening.includes(userId.toLowerCase())) {
      return { problem: `the instructions do not give the user id ${userId}`, texts };
    }
    const profile = user(database, userId);
    texts.push(JSON.stringify(profile));
    for (const id of profile.reservations as string[]) {
      const found = database.get("reservations", id);
      if (found) texts.push(JSON.stringify(found));
    }
  }
  return { texts };
}

export function airlineCatalogue(database: Database): string {
  return JSON.stringify([...database.rows("flights")]);
}
