import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { tau2Airline } from "../../bench/domains/tau2-airline/index.js";
import {
  compareGrounding,
  countKinds,
  replayCalls,
} from "../../bench/domains/tau2-shared/reference-policy.js";
import { readJson, v1Tools } from "../../bench/domains/tau2-shared/tools.js";
import { Evaluator } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";
import {
  assertCheckLoads,
  assertMentorLintClean,
  assertOracleRunsFinish,
  assertPolicyLintsClean,
  assertReferenceBlocksExplained,
  dataDir,
  errorOf,
  execute,
  groundedCalls,
  referenceWith,
  taskCalling,
} from "./tau2-support.js";

const domain = tau2Airline;
const tasks = domain.tasks({ dataDir });
const writes = domain.writeTools(dataDir);

interface Reservation {
  reservation_id: string;
  user_id: string;
  cabin: string;
  insurance: string;
  created_at: string;
  status?: string;
  total_baggages: number;
  flights: { flight_number: string; date: string; price: number }[];
  passengers: { first_name: string; last_name: string; dob: string }[];
  payment_history: { payment_id: string; amount: number }[];
}
interface User {
  membership: string;
  payment_methods: Record<string, { source: string; amount?: number }>;
  reservations: string[];
}
interface Flight {
  dates: Record<
    string,
    { status: string; available_seats?: Record<string, number>; prices?: Record<string, number> }
  >;
}

const state = domain.freshEnvironment(dataDir).state() as unknown as {
  reservations: Record<string, Reservation>;
  users: Record<string, User>;
  flights: Record<string, Flight>;
};

function reservationWhere(test: (reservation: Reservation) => boolean): Reservation {
  const found = Object.values(state.reservations).find(test);
  assert.ok(found, "a reservation of the kind the test needs");
  return found;
}

describe("tau2-airline: tools, database and tasks", () => {
  test("every tau2 airline tool is implemented, with tau-bench v1's schema for Python-typed parameters", () => {
    const tools = domain.tools(dataDir);
    assert.equal(tools.length, 14);
    const v1 = v1Tools(join(dataDir, "tau-bench-v1", "airline", "tools.json"));
    assert.deepEqual(
      tools.filter((tool) => !v1.has(tool.function.name)).map((tool) => tool.function.name),
      ["get_flight_status"],
    );
    const book = tools.find((tool) => tool.function.name === "book_reservation");
    const properties = book?.function.parameters?.properties ?? {};
    assert.deepEqual(properties.cabin?.enum, ["basic_economy", "economy", "business"]);
    assert.deepEqual(properties.insurance?.enum, ["yes", "no"]);
    assert.equal((properties.flights?.items as { type?: string } | undefined)?.type, "object");
    assert.ok(!JSON.stringify(tools).includes("x-python-type"));
  });

  test("the database is built from tau-bench v1's three files; users get their user_id from the key", () => {
    assert.equal(Object.keys(state.flights).length, 4);
    assert.equal(Object.keys(state.reservations).length, 6);
    assert.equal(Object.keys(state.users).length, 3);
    const file = readJson(join(dataDir, "tau-bench-v1", "airline", "users.json")) as Record<string, object>;
    for (const [id, user] of Object.entries(state.users)) {
      assert.equal("user_id" in (file[id] ?? {}), false, "v1's file has no user_id");
      assert.equal((user as { user_id?: string }).user_id, id);
    }
  });

  test("the tasks' solvability by the stated rule", (t) => {
    assert.equal(tasks.length, 11);
    const unsolvable = tasks.filter((task) => !task.solvable);
    for (const task of unsolvable) assert.ok(task.unsolvableReason, task.id);
    t.diagnostic(`tau2-airline: ${tasks.length} train tasks, ${tasks.length - unsolvable.length} solvable`);
    for (const task of unsolvable) t.diagnostic(`not solvable: task ${task.id}: ${task.unsolvableReason}`);
    assert.equal(unsolvable.length, 0);
  });
});

describe("tau2-airline: evaluator (database comparison)", () => {
  test("oracle: the reference actions of every task pass, and no reference call fails", () => {
    for (const task of tasks) {
      const { environment, run } = execute(domain, task, task.reference ?? []);
      assert.deepEqual(
        run.filter((call) => call.error).map((call) => `${call.name}: ${call.output}`),
        [],
        `task ${task.id}`,
      );
      const verdict = domain.evaluate(task, run, environment, dataDir);
      assert.deepEqual(verdict, { pass: true, reasons: [] }, `task ${task.id}`);
    }
  });

  test("a missing write fails, naming the record and field", () => {
    const { task, position } = taskCalling(tasks, "cancel_reservation");
    const id = task.reference?.[position]?.arguments.reservation_id as string;
    const { environment, run } = execute(domain, task, referenceWith(task, position, undefined));
    const verdict = domain.evaluate(task, run, environment, dataDir);
    assert.equal(verdict.pass, false);
    assert.ok(
      verdict.reasons.includes(
        `reservations[${JSON.stringify(id)}].status: expected "cancelled", found nothing`,
      ),
      verdict.reasons.join("\n"),
    );
    assert.ok(verdict.reasons.some((reason) => reason.startsWith("missing write: cancel_reservation(")));
  });

  test("a wrong argument fails, naming the list element and field", () => {
    const { task, position } = taskCalling(tasks, "update_reservation_passengers");
    const action = task.reference?.[position] as { name: string; arguments: Record<string, unknown> };
    const passengers = structuredClone(action.arguments.passengers) as { dob: string }[];
    const expectedDob = (passengers[0] as { dob: string }).dob;
    (passengers[0] as { dob: string }).dob = "1900-01-01";
    const wrong = { name: action.name, arguments: { ...action.arguments, passengers } };
    const { environment, run } = execute(domain, task, referenceWith(task, position, wrong));
    const verdict = domain.evaluate(task, run, environment, dataDir);
    assert.equal(verdict.pass, false);
    const id = JSON.stringify(action.arguments.reservation_id);
    assert.ok(
      verdict.reasons.includes(
        `reservations[${id}].passengers[0].dob: expected "${expectedDob}", found "1900-01-01"`,
      ),
      verdict.reasons.join("\n"),
    );
  });

  test("an extra write on a task whose reference writes nothing fails", () => {
    const readOnly = tasks.find((task) => !(task.reference ?? []).some((action) => writes.has(action.name)));
    assert.ok(readOnly);
    const user = Object.keys(state.users)[0] as string;
    const { environment, run } = execute(domain, readOnly, [
      ...(readOnly.reference ?? []),
      { name: "send_certificate", arguments: { user_id: user, amount: 100 } },
    ]);
    const verdict = domain.evaluate(readOnly, run, environment, dataDir);
    assert.equal(verdict.pass, false);
    assert.ok(verdict.reasons.includes("the reference makes no write, so the database must be unchanged"));
    assert.ok(
      verdict.reasons.some((reason) =>
        reason.startsWith(
          `users[${JSON.stringify(user)}].payment_methods.certificate_0000001: expected nothing`,
        ),
      ),
      verdict.reasons.join("\n"),
    );
  });

  test("new reservation ids are deterministic, so the same booking in two runs compares equal", () => {
    const { task, position } = taskCalling(tasks, "book_reservation");
    const action = task.reference?.[position] as { name: string; arguments: Record<string, unknown> };
    const first = domain.freshEnvironment(dataDir).call(action.name, action.arguments);
    const second = domain.freshEnvironment(dataDir).call(action.name, action.arguments);
    assert.equal(first.error, false, first.output);
    assert.equal(first.output, second.output);
    assert.equal((JSON.parse(first.output) as Reservation).reservation_id, "NEW001");
  });
});

describe("tau2-airline: tool errors", () => {
  test("not found, not bookable, payment mismatch, balance, passenger count, already cancelled", () => {
    const env = domain.freshEnvironment(dataDir);
    const userId = Object.keys(state.users)[0] as string;
    const [flightNumber, flight] = Object.entries(state.flights)[0] as [string, Flight];
    const landed = Object.entries(flight.dates).find(([, day]) => day.status === "landed")?.[0] as string;
    const [openDate, open] = Object.entries(flight.dates).find(([, day]) => day.status === "available") as [
      string,
      Required<Flight["dates"][string]>,
    ];
    const passenger = { first_name: "A", last_name: "B", dob: "1990-01-01" };
    const booking = (date: string, payments: unknown[]) => ({
      user_id: userId,
      origin: "X",
      destination: "Y",
      flight_type: "one_way",
      cabin: "economy",
      flights: [{ flight_number: flightNumber, date }],
      passengers: [passenger],
      payment_methods: payments,
      total_baggages: 0,
      nonfree_baggages: 0,
      insurance: "no",
    });
    const price = open.prices.economy as number;
    const card = Object.entries(state.users[userId]?.payment_methods ?? {}).find(
      ([, method]) => method.source === "credit_card",
    )?.[0] as string;
    const cancelled = reservationWhere(() => true);
    env.call("cancel_reservation", { reservation_id: cancelled.reservation_id });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["get_reservation_details", { reservation_id: "ZZZZZZ" }, /reservation ZZZZZZ not found/],
      ["get_user_details", { user_id: "nobody_1" }, /user nobody_1 not found/],
      ["book_reservation", booking(landed, []), /is landed, not available/],
      ["book_reservation", booking(openDate, [{ payment_id: card, amount: price - 1 }]), /add up to/],
      [
        "book_reservation",
        booking(openDate, [{ payment_id: "gift_card_0", amount: price }]),
        /gift_card_0 not found/,
      ],
      ["book_reservation", { ...booking(openDate, []), cabin: "first" }, /cabin must be one of/],
      [
        "update_reservation_passengers",
        { reservation_id: cancelled.reservation_id, passengers: [...cancelled.passengers, passenger] },
        /number cannot change/,
      ],
      ["cancel_reservation", { reservation_id: cancelled.reservation_id }, /already cancelled/],
      [
        "get_flight_status",
        { flight_number: flightNumber, date: "2030-01-01" },
        /does not fly on 2030-01-01/,
      ],
    ];
    for (const [name, args, expected] of cases) {
      const result = env.call(name, args);
      assert.equal(result.error, true, name);
      assert.match(errorOf(result.output), expected, name);
    }
    assert.deepEqual([...(env.database.touched().get("reservations") ?? [])], [cancelled.reservation_id]);
    assert.equal(env.database.touched().has("users"), false, "refused bookings charge nothing");
  });

  test("a gift card or certificate that cannot cover its share is refused", () => {
    const [userId, user] = Object.entries(state.users).find(([, candidate]) =>
      Object.values(candidate.payment_methods).some((method) => method.source === "gift_card"),
    ) as [string, User];
    const [giftCard, method] = Object.entries(user.payment_methods).find(
      ([, candidate]) => candidate.source === "gift_card",
    ) as [string, { amount: number }];
    const reservation = reservationWhere(
      (candidate) => candidate.user_id === userId && candidate.status !== "cancelled",
    );
    const env = domain.freshEnvironment(dataDir);
    const bags = reservation.total_baggages + Math.ceil(method.amount / 50) + 1;
    const result = env.call("update_reservation_baggages", {
      reservation_id: reservation.reservation_id,
      total_baggages: bags,
      nonfree_baggages: bags,
      payment_id: giftCard,
    });
    assert.equal(result.error, true);
    assert.match(errorOf(result.output), new RegExp(`not enough balance on ${giftCard}`));
  });
});

describe("tau2-airline: policy", () => {
  test("lints clean and loads in `mentor check`", () => {
    assertPolicyLintsClean(domain.policyPath);
    const answer = assertCheckLoads(domain.policyPath, new Conversation([], "Cancel my trip.").messages, {
      name: "cancel_reservation",
      arguments: { reservation_id: "ABC123" },
    });
    const decide = answer.decide as { verdict: string; violations: { rule: string }[] };
    assert.equal(decide.verdict, "block");
    assert.ok(decide.violations.some((finding) => finding.rule === "A1"));
  });

  test("reference traces: every block is a lookup the reference omits", (t) => {
    const blocked = assertReferenceBlocksExplained(domain, tasks, (rule) => {
      if (["A2", "A3", "A4"].includes(rule)) return { tool: ["get_user_details"], key: "user_id" };
      if (["A11", "A12", "A13"].includes(rule)) return { tool: ["get_reservation_details"] };
      return { tool: ["get_reservation_details"], key: "reservation_id" };
    });
    const blockedTasks = new Set(blocked.map((block) => block.task));
    t.diagnostic(
      `tau2-airline: the policy blocks ${blocked.length} reference calls in ${blockedTasks.size} of ${tasks.length} reference traces, each a missing reservation or profile lookup`,
    );
    assert.ok(blockedTasks.size < tasks.length);
  });
});

describe("tau2-airline: policy decisions on hand-made runs", () => {
  const evaluator = new Evaluator(loadPolicy(domain.policyPath));
  const lookedUp = (reservation: Reservation) =>
    new Conversation([], "Help with my reservation.").call(
      "get_reservation_details",
      { reservation_id: reservation.reservation_id },
      { json: reservation as unknown as Value },
    );
  const rulesOf = (messages: unknown, name: string, args: Record<string, Value>) => {
    const decision = evaluator.decide(messages, { name, arguments: args });
    return {
      verdict: decision.verdict,
      violations: decision.violations.map((finding) => finding.rule),
      warnings: decision.warnings.map((finding) => finding.rule),
    };
  };

  test("changing the flights of a basic economy reservation is blocked (A5); upgrading its cabin is allowed", () => {
    const basic = reservationWhere((candidate) => candidate.cabin === "basic_economy");
    const flights = basic.flights.map(({ flight_number, date }) => ({ flight_number, date }));
    const change = (cabin: string) => ({
      reservation_id: basic.reservation_id,
      cabin,
      flights,
      payment_id: "credit_card_1",
    });
    assert.deepEqual(
      rulesOf(lookedUp(basic).messages, "update_reservation_flights", change("basic_economy")).violations,
      ["A5"],
    );
    assert.equal(
      rulesOf(lookedUp(basic).messages, "update_reservation_flights", change("business")).verdict,
      "allow",
    );
    assert.deepEqual(
      rulesOf(lookedUp(basic).messages, "update_reservation_flights", {
        ...change("business"),
        payment_id: "certificate_1",
      }).violations,
      ["A6"],
    );
  });

  test("removing bags (A7) and changing the number of passengers (A8) are blocked", () => {
    const reservation = reservationWhere(
      (candidate) => candidate.total_baggages > 0 && candidate.passengers.length > 1,
    );
    const messages = lookedUp(reservation).messages;
    const bags = {
      reservation_id: reservation.reservation_id,
      nonfree_baggages: 0,
      payment_id: "credit_card_1",
    };
    assert.deepEqual(
      rulesOf(messages, "update_reservation_baggages", {
        ...bags,
        total_baggages: reservation.total_baggages - 1,
      }).violations,
      ["A7"],
    );
    assert.equal(
      rulesOf(messages, "update_reservation_baggages", {
        ...bags,
        total_baggages: reservation.total_baggages + 1,
      }).verdict,
      "allow",
    );
    const fewer = { reservation_id: reservation.reservation_id, passengers: reservation.passengers.slice(1) };
    assert.deepEqual(rulesOf(messages, "update_reservation_passengers", fewer).violations, ["A8"]);
  });

  test("A5 and A7 compare with the previous change of the reservation (the history before the call)", () => {
    // A7: after bags were added, fewer bags than that update are blocked, though more than the lookup showed.
    const reservation = reservationWhere(
      (candidate) => candidate.total_baggages > 0 && candidate.cabin !== "basic_economy",
    );
    const bags = (total_baggages: number) => ({
      reservation_id: reservation.reservation_id,
      total_baggages,
      nonfree_baggages: 0,
      payment_id: "credit_card_1",
    });
    const total = reservation.total_baggages;
    const added = lookedUp(reservation).call("update_reservation_baggages", bags(total + 2), {
      json: { ...reservation, total_baggages: total + 2 } as unknown as Value,
    });
    assert.deepEqual(rulesOf(added.messages, "update_reservation_baggages", bags(total + 1)).violations, [
      "A7",
    ]);
    assert.equal(rulesOf(added.messages, "update_reservation_baggages", bags(total + 3)).verdict, "allow");
    // A5: the cabin the last flight change left, not the one the lookup showed.
    const change = (booked: Reservation, cabin: string) => ({
      reservation_id: booked.reservation_id,
      cabin,
      flights: booked.flights.map(({ flight_number, date }) => ({ flight_number, date })),
      payment_id: "credit_card_1",
    });
    const changed = (booked: Reservation, cabin: string) =>
      lookedUp(booked).call("update_reservation_flights", change(booked, cabin), {
        json: { ...booked, cabin } as unknown as Value,
      });
    const economy = reservationWhere((candidate) => candidate.cabin === "economy");
    assert.deepEqual(
      rulesOf(
        changed(economy, "basic_economy").messages,
        "update_reservation_flights",
        change(economy, "basic_economy"),
      ).violations,
      ["A5"],
    );
    const basic = reservationWhere((candidate) => candidate.cabin === "basic_economy");
    assert.ok(
      !rulesOf(
        changed(basic, "economy").messages,
        "update_reservation_flights",
        change(basic, "basic_economy"),
      ).violations.includes("A5"),
    );
  });

  test("cancelling an old economy booking without insurance warns (A10); a business booking does not", () => {
    const plain = reservationWhere(
      (candidate) =>
        candidate.cabin === "economy" &&
        candidate.insurance === "no" &&
        candidate.created_at < "2024-05-14" &&
        (candidate.flights[0]?.date ?? "") > "2024-05-16",
    );
    const decision = rulesOf(lookedUp(plain).messages, "cancel_reservation", {
      reservation_id: plain.reservation_id,
    });
    assert.deepEqual(decision, { verdict: "allow", violations: [], warnings: ["A10"] });
    const business = reservationWhere(
      (candidate) => candidate.cabin === "business" && (candidate.flights[0]?.date ?? "") > "2024-05-16",
    );
    const allowed = rulesOf(lookedUp(business).messages, "cancel_reservation", {
      reservation_id: business.reservation_id,
    });
    assert.deepEqual(allowed, { verdict: "allow", violations: [], warnings: [] });
  });

  test("compensation: facts first (A11), only for eligible users (A12), $100 or $50 per passenger (A13)", () => {
    const plain = reservationWhere(
      (candidate) =>
        candidate.cabin !== "business" &&
        candidate.insurance === "no" &&
        state.users[candidate.user_id]?.membership === "regular",
    );
    const certificate = (amount: number) => ({ user_id: plain.user_id, amount });
    const start = new Conversation([], "My flight was cancelled.");
    assert.ok(rulesOf(start.messages, "send_certificate", certificate(100)).violations.includes("A11"));
    const facts = lookedUp(plain).call(
      "get_user_details",
      { user_id: plain.user_id },
      { json: state.users[plain.user_id] as unknown as Value },
    );
    const perPassenger = 100 * plain.passengers.length;
    assert.deepEqual(rulesOf(facts.messages, "send_certificate", certificate(perPassenger)).violations, [
      "A12",
    ]);
    const gold = { ...(state.users[plain.user_id] as User), membership: "gold" };
    const goldFacts = lookedUp(plain).call(
      "get_user_details",
      { user_id: plain.user_id },
      { json: gold as unknown as Value },
    );
    assert.equal(rulesOf(goldFacts.messages, "send_certificate", certificate(perPassenger)).verdict, "allow");
    assert.deepEqual(
      rulesOf(goldFacts.messages, "send_certificate", certificate(perPassenger + 1)).violations,
      ["A13"],
    );
  });
});

describe("tau2-airline: requests (task grounding) and duties", () => {
  const policy = loadPolicy(domain.policyPath);
  const evaluator = new Evaluator(policy);
  const labeler = new Labeler(policy, { only: "rules" });
  const ground = groundedCalls(labeler);

  test("`mentor lint`: no error and no warning, with the duties and the solver's constraint checks", async () => {
    await assertMentorLintClean(domain.policyPath);
  });

  test("oracle grounding: from the reference's writes; a flight update is a change of flights, of cabin, or both", () => {
    for (const task of tasks) {
      const grounding = domain.grounding?.(task) ?? [];
      const { run } = execute(domain, task, task.reference ?? []);
      const written = new Set(
        run
          .filter((call) => !call.error && writes.has(call.name) && call.name !== "send_certificate")
          .map((call) => (call.arguments.reservation_id ?? call.arguments.user_id) as string),
      );
      const named = new Set(
        grounding.map((call) => (call.arguments.reservation_id ?? call.arguments.user_id) as string),
      );
      assert.deepEqual([...named].sort(), [...written].sort(), `task ${task.id}`);
      for (const call of grounding.filter((one) => one.name === "request_cancel"))
        assert.equal(call.arguments.covered, true, `task ${task.id}`);
    }
    const cabinOnly = tasks
      .flatMap((task) => domain.grounding?.(task) ?? [])
      .filter((call) => call.name === "request_cabin_change");
    assert.ok(cabinOnly.length > 0);
    for (const call of cabinOnly) {
      const before = state.reservations[call.arguments.reservation_id as string] as Reservation;
      assert.notEqual(before.cabin, call.arguments.cabin);
    }
  });

  test("the patterns ground the openings that name a reservation (or a booking); each id grounded is in the opening", async (t) => {
    const comparisons = await compareGrounding(domain, tasks);
    const counts = countKinds(comparisons);
    const grounded = comparisons.filter((comparison) => comparison.patterns.length > 0).length;
    t.diagnostic(
      `tau2-airline: the patterns ground ${grounded} of ${tasks.length} openings; ${counts.agree} agree with the oracle (${comparisons.filter((one) => one.kind === "agree" && one.oracle.length > 0).length} with requests, the others none on both sides), ${counts.partial} partly, ${counts.extra} with a request the oracle lacks, ${counts.none} ground nothing the oracle grounds`,
    );
    for (const comparison of comparisons.filter((one) => one.kind !== "agree"))
      t.diagnostic(
        `task ${comparison.task}: patterns ${JSON.stringify(comparison.patterns)}, oracle ${JSON.stringify(comparison.oracle)}`,
      );
    assert.deepEqual(counts, { agree: 7, partial: 1, extra: 2, none: 1 });
    for (const comparison of comparisons) {
      const opening = tasks.find((task) => task.id === comparison.task)?.opening ?? "";
      for (const call of comparison.patterns) {
        const id = (call.arguments.reservation_id ?? call.arguments.user_id) as string;
        assert.ok(opening.includes(id), `task ${comparison.task}: ${id} is not in the opening`);
      }
    }
    // Where the patterns ground a request the reference does not carry out, a lookup of each
    // grounded reservation after the reference shows what the manual says rules it out.
    const extra = comparisons.filter((comparison) => comparison.kind === "extra");
    const exempted = extra.filter((comparison) => {
      const task = tasks.find((one) => one.id === comparison.task) as (typeof tasks)[number];
      const ids = [
        ...new Set(comparison.patterns.map((call) => call.arguments.reservation_id).filter(Boolean)),
      ];
      const lookups = ids.map((id) => ({
        name: "get_reservation_details",
        arguments: { reservation_id: id },
      }));
      const calls = [...(task.reference ?? []), ...lookups];
      return replayCalls(evaluator, task, calls, comparison.patterns, domain.freshEnvironment(dataDir))
        .doneAllowed;
    });
    t.diagnostic(
      `tau2-airline: of the ${extra.length} openings grounded with a request the reference does not carry out, ${exempted.length} have every duty exempted once the reservations are looked up`,
    );
    assert.equal(exempted.length, 1);
  });

  test("patterns: the ids of the request's clause, the only id of the message, not flight numbers, not what the manual rules out", async () => {
    assert.deepEqual(
      await ground("You want to cancel your flights within reservation IDs XEHM4B and 59XX6W. You are sick."),
      ["request_cancel(XEHM4B, true)", "request_cancel(59XX6W, true)"],
    );
    assert.deepEqual(
      await ground(
        "You want to cancel two reservations (IFOYYZ and NQNU5R) and change a third (M20IZO) to a nonstop flight.",
      ),
      ["request_cancel(IFOYYZ, false)", "request_cancel(NQNU5R, false)", "request_flight_change(M20IZO)"],
    );
    assert.deepEqual(await ground("You want to cancel your flight.\n\nYour confirmation number is H8Q05L."), [
      "request_cancel(H8Q05L, false)",
    ]);
    assert.deepEqual(
      await ground(
        "Your reservation id is YAX4DR. You want to upgrade it to business and add 2 checked bags.",
      ),
      ["request_cabin_change(YAX4DR, business)", "request_baggage_change(YAX4DR)"],
    );
    assert.deepEqual(
      await ground("If the agent agrees, downgrade all passengers to basic economy. It is GV1N64."),
      ["request_cabin_change(GV1N64, basic_economy)"],
    );
    assert.deepEqual(await ground("You want to fly from New York to Seattle. Your user id is mia_li_3668."), [
      "request_booking(mia_li_3668)",
    ]);
    // Two ids and none in the clause: no guess.
    assert.deepEqual(
      await ground("You have reservations ABC123 and DEF456. You want to cancel the one to Boston."),
      [],
    );
    assert.deepEqual(
      await ground("You are complaining about the delayed flight HAT045 and want to cancel your trip."),
      [],
    );
    assert.deepEqual(await ground("You do NOT want to cancel or modify reservation ABC123."), []);
    assert.deepEqual(await ground("You want to cancel the insurance of reservation ABC123."), []);
    assert.deepEqual(await ground("You want to remove a passenger from reservation ABC123."), []);
    assert.deepEqual(
      await ground("If it costs more than $200, cancel the entire request. Reservation ABC123."),
      [],
    );
  });

  test("reference runs with the oracle grounding end with done allowed; without their writes done is refused", () => {
    const verdicts = assertOracleRunsFinish(domain, tasks);
    assert.equal(verdicts.length, 11);
  });

  const reservation = (fields: Record<string, Value> = {}): Value => ({
    reservation_id: "ABC123",
    user_id: "u_1",
    cabin: "economy",
    insurance: "no",
    created_at: "2024-05-01T10:00:00",
    flights: [{ flight_number: "HAT001", date: "2024-05-20" }],
    passengers: [{ first_name: "A", last_name: "B", dob: "1990-01-01" }],
    total_baggages: 0,
    ...fields,
  });
  const asked = (name: string, args: Record<string, Value> = {}) =>
    new Conversation([{ name, arguments: { reservation_id: "ABC123", ...args } }], "…");
  const done = (conversation: Conversation) => evaluator.next(conversation.messages).done.allowed;
  const lookup = (conversation: Conversation, fields: Record<string, Value> = {}) =>
    conversation.call("get_reservation_details", { reservation_id: "ABC123" }, { json: reservation(fields) });

  test("a cancellation is owed unless the lookup shows none of the manual's conditions (A14_cancel); flown: transfer", () => {
    const cancel = (covered: boolean) => asked("request_cancel", { covered });
    assert.equal(done(cancel(false)), false);
    // Old, economy, no insurance: none of the conditions holds.
    assert.equal(done(lookup(cancel(false))), true);
    // Insured: only a covered reason makes it cancellable.
    assert.equal(done(lookup(cancel(false), { insurance: "yes" })), true);
    assert.equal(done(lookup(cancel(true), { insurance: "yes" })), false);
    // Business, or booked within the last 24 hours: cancellable, so owed.
    assert.equal(done(lookup(cancel(false), { cabin: "business" })), false);
    assert.equal(done(lookup(cancel(false), { created_at: "2024-05-15T09:00:00" })), false);
    // Flown: the agent cannot cancel; a transfer to a human agent is needed.
    const flown = lookup(cancel(false), {
      cabin: "business",
      flights: [{ flight_number: "HAT001", date: "2024-05-10" }],
    });
    assert.equal(done(flown), false);
    assert.equal(
      done(flown.call("transfer_to_human_agents", { summary: "flown" }, { json: "Transfer successful" })),
      true,
    );
    const cancelled = lookup(cancel(true), { insurance: "yes" }).call(
      "cancel_reservation",
      { reservation_id: "ABC123" },
      { json: reservation({ status: "cancelled" }) },
    );
    assert.equal(done(cancelled), true);
    // A reservation that does not exist cannot be cancelled.
    assert.equal(
      done(
        cancel(true).call(
          "get_reservation_details",
          { reservation_id: "ABC123" },
          { json: { error: "not found" } },
        ),
      ),
      true,
    );
  });

  test("flights: basic economy exempts (A5); cabin: a flown flight exempts (A15), and only the cabin asked for counts", () => {
    assert.equal(done(lookup(asked("request_flight_change"))), false);
    assert.equal(done(lookup(asked("request_flight_change"), { cabin: "basic_economy" })), true);
    const update = (cabin: string) => ({
      reservation_id: "ABC123",
      cabin,
      flights: [{ flight_number: "HAT002", date: "2024-05-21" }],
      payment_id: "credit_card_1",
    });
    const changed = lookup(asked("request_flight_change")).call(
      "update_reservation_flights",
      update("economy"),
      {
        json: reservation(),
      },
    );
    assert.equal(done(changed), true);
    const cabin = () => asked("request_cabin_change", { cabin: "business" });
    assert.equal(done(lookup(cabin())), false);
    assert.equal(done(lookup(cabin(), { flights: [{ flight_number: "HAT001", date: "2024-05-14" }] })), true);
    const wrong = lookup(cabin()).call("update_reservation_flights", update("economy"), {
      json: reservation(),
    });
    assert.equal(done(wrong), false);
    const right = lookup(cabin()).call("update_reservation_flights", update("business"), {
      json: reservation(),
    });
    assert.equal(done(right), true);
  });

  test("bags, passengers and bookings are owed until done (no exemption the lookup shows)", () => {
    assert.equal(done(lookup(asked("request_baggage_change"))), false);
    const bags = lookup(asked("request_baggage_change")).call(
      "update_reservation_baggages",
      { reservation_id: "ABC123", total_baggages: 1, nonfree_baggages: 0, payment_id: "credit_card_1" },
      { json: reservation({ total_baggages: 1 }) },
    );
    assert.equal(done(bags), true);
    const booking = new Conversation([{ name: "request_booking", arguments: { user_id: "u_1" } }], "…");
    assert.equal(done(booking), false);
    const open = evaluator.next(booking.messages).openDuties;
    assert.deepEqual(
      open.map((duty) => [duty.rule, duty.binding]),
      [["A14_book", 'booking(bu="u_1")']],
    );
  });
});
