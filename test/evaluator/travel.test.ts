import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Evaluator } from "../../src/evaluator/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { blockedText, doneRefusedText, reminderText } from "../../src/shield/index.js";
import { shieldSetsFor } from "../../src/shield/token/index.js";
import { Conversation } from "../support/conversation.js";

const policyFile = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const policy = loadPolicy(policyFile);
const evaluator = new Evaluator(policy);

const toronto = { origin: "Toronto", destination: "Chicago" };
const ottawa = { origin: "Ottawa", destination: "Montreal" };
const request = (route: { origin: string; destination: string }, urgent = false) => ({
  name: "request_travel",
  arguments: { ...route, urgent },
});

describe("travel scenarios", () => {
  test("booking before the distance check is blocked, and the check is advised", () => {
    const run = new Conversation([request(toronto)]);
    const decision = evaluator.decide(run.messages, { name: "book_train", arguments: toronto });
    assert.equal(decision.verdict, "block");
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["P1"],
    );
    assert.deepEqual(decision.advice, {
      kind: "prerequisite",
      call: { name: "check_distance", arguments: toronto },
      unblocks: true,
    });
    assert.equal(
      blockedText(decision),
      '[SHIELD] Blocked book_train(origin="Toronto", destination="Chicago"). Rule P1: Check the distance of a route before any booking for it. First: check_distance(origin="Toronto", destination="Chicago")',
    );
  });

  test("at the start, checking the distance is the progressing call and bookings are unsafe", () => {
    const next = evaluator.next(new Conversation([request(toronto)]).messages);
    const classes = Object.fromEntries(next.tools.map((tool) => [tool.name, tool.class]));
    assert.deepEqual(classes, {
      check_distance: "progressing",
      check_seats: "neutral",
      book_train: "unsafe",
      book_flight: "unsafe",
    });
    assert.equal(next.done.allowed, false);
    assert.deepEqual(
      next.openDuties.map((duty) => [duty.rule, duty.colour]),
      [["P4", "CURR_VIOL"]],
    );
  });

  test("a short route makes flights unsafe and the train progressing", () => {
    const run = new Conversation([request(toronto)]).call("check_distance", toronto, { label: "short" });
    const next = evaluator.next(run.messages);
    const classes = Object.fromEntries(next.tools.map((tool) => [tool.name, tool.class]));
    assert.equal(classes.book_flight, "unsafe");
    assert.equal(classes.book_train, "progressing");
    const flight = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "economy" },
    });
    assert.equal(flight.verdict, "block");
    assert.ok(flight.violations.some((finding) => finding.rule === "P2"));
    assert.deepEqual(flight.advice?.call, { name: "book_train", arguments: toronto });
    const train = evaluator.decide(run.messages, { name: "book_train", arguments: toronto });
    assert.equal(train.verdict, "allow");
  });

  test("a long route allows a flight once seats are checked; the seat check is advised first", () => {
    const run = new Conversation([request(toronto)]).call("check_distance", toronto, { label: "long" });
    const early = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "economy" },
    });
    assert.equal(early.verdict, "block");
    assert.deepEqual(
      early.violations.map((finding) => finding.rule),
      ["P5"],
    );
    assert.deepEqual(early.advice?.call, { name: "check_seats", arguments: toronto });
    run.call("check_seats", toronto, { label: "available" });
    const flight = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "economy" },
    });
    assert.equal(flight.verdict, "allow");
  });

  test("a flight that needs two checks is advised the first; one that can never be made, the train", () => {
    const start = new Conversation([request(toronto)]);
    const flight = { name: "book_flight", arguments: { ...toronto, travel_class: "economy" } };
    const first = evaluator.decide(start.messages, flight);
    assert.deepEqual(first.violations.map((finding) => finding.rule).sort(), ["P1", "P5"]);
    // After the distance check (one outcome), the seat check alone is left: a step toward the flight.
    assert.deepEqual(first.advice, {
      kind: "prerequisite",
      call: { name: "check_distance", arguments: toronto },
      unblocks: true,
    });
    const long = start.call("check_distance", toronto, { label: "long" });
    const business = evaluator.decide(long.messages, {
      ...flight,
      arguments: { ...toronto, travel_class: "business" },
    });
    assert.deepEqual(business.violations.map((finding) => finding.rule).sort(), ["P3", "P5"]);
    // After the seat check only its class blocks it (P3, an argument constraint that a repair to
    // economy settles): the check is a step toward the flight.
    assert.deepEqual(business.advice, {
      kind: "prerequisite",
      call: { name: "check_seats", arguments: toronto },
      unblocks: true,
    });
  });

  test("the token shield redirects a wanted flight to the check it needs, not to the train", () => {
    const start = new Conversation([request(toronto)]);
    // The redirected call is steered to the route asked for.
    assert.deepEqual(shieldSetsFor(evaluator, start.messages).redirects, [
      { tool: "book_train", to: "check_distance", arguments: toronto },
      { tool: "book_flight", to: "check_distance", arguments: toronto },
    ]);
    const long = start.call("check_distance", toronto, { label: "long" });
    const sets = shieldSetsFor(evaluator, long.messages);
    assert.deepEqual(sets.progressingTools, ["book_train"]);
    assert.deepEqual(sets.redirects, [{ tool: "book_flight", to: "check_seats", arguments: toronto }]);
    const short = new Conversation([request(toronto)]).call("check_distance", toronto, { label: "short" });
    // A flight on a short route can never be made: no redirect, the name is masked.
    assert.equal(shieldSetsFor(evaluator, short.messages).redirects, undefined);
  });

  test("while the trip is owed, ending the turn is redirected to the step the duty advises", () => {
    const start = new Conversation([request(toronto)]);
    assert.deepEqual(shieldSetsFor(evaluator, start.messages).doneRedirect, {
      to: "check_distance",
      arguments: toronto,
    });
    const short = start.call("check_distance", toronto, { label: "short" });
    assert.deepEqual(shieldSetsFor(evaluator, short.messages).doneRedirect, {
      to: "book_train",
      arguments: toronto,
    });
    const booked = short.call("book_train", toronto, { json: { status: "confirmed" } });
    assert.equal(shieldSetsFor(evaluator, booked.messages).doneRedirect, undefined);
  });

  test("a full flight forbids flying that route (P7)", () => {
    const run = new Conversation([request(toronto)])
      .call("check_distance", toronto, { label: "long" })
      .call("check_seats", toronto, { label: "full" });
    const flight = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "economy" },
    });
    assert.equal(flight.verdict, "block");
    assert.deepEqual(
      flight.violations.map((finding) => finding.rule),
      ["P7"],
    );
  });

  test("business class needs a stated urgent need (P3), and economy is the repair", () => {
    const run = new Conversation([request(toronto)])
      .call("check_distance", toronto, { label: "long" })
      .call("check_seats", toronto, { label: "available" });
    const business = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "business" },
    });
    assert.equal(business.verdict, "block");
    assert.deepEqual(
      business.violations.map((finding) => [finding.rule, finding.kind]),
      [["P3", "constraint"]],
    );
    assert.deepEqual(business.advice, {
      kind: "repair",
      call: { name: "book_flight", arguments: { ...toronto, travel_class: "economy" } },
    });
    const urgent = new Conversation([request(toronto, true)])
      .call("check_distance", toronto, { label: "long" })
      .call("check_seats", toronto, { label: "available" });
    assert.equal(
      evaluator.decide(urgent.messages, {
        name: "book_flight",
        arguments: { ...toronto, travel_class: "business" },
      }).verdict,
      "allow",
    );
  });

  test("a trip asked for by flight is not booked by train while the flight may be made (P4_mode)", () => {
    const wantsFlight = {
      name: "request_travel",
      arguments: { ...toronto, urgent: false, mode: "flight", travel_class: "any" },
    };
    const long = new Conversation([wantsFlight]).call("check_distance", toronto, { label: "long" });
    const train = evaluator.decide(long.messages, { name: "book_train", arguments: toronto });
    assert.equal(train.verdict, "block");
    assert.deepEqual(
      train.violations.map((finding) => finding.rule),
      ["P4_mode"],
    );
    const sets = shieldSetsFor(evaluator, long.messages);
    assert.deepEqual(sets.progressingTools, ["check_seats"]);
    assert.ok(sets.unsafeTools?.includes("book_train"));
    // What the server appends to the distance check's result: the flight's next step, not the train.
    assert.equal(
      doneRefusedText(evaluator.next(long.messages).openDuties),
      '[SHIELD] You cannot finish yet. Open duties: P4 (The requested trip must be booked before you finish.) for route(x="Toronto", y="Chicago"). Next: check_seats(origin="Toronto", destination="Chicago")',
    );
    // The manual rules the flight out: a full flight (P7) or a short route (P2) leaves the train.
    const full = long.call("check_seats", toronto, { label: "full" });
    assert.equal(
      evaluator.decide(full.messages, { name: "book_train", arguments: toronto }).verdict,
      "allow",
    );
    const short = new Conversation([wantsFlight]).call("check_distance", toronto, { label: "short" });
    assert.equal(
      evaluator.decide(short.messages, { name: "book_train", arguments: toronto }).verdict,
      "allow",
    );
  });

  test("a trip asked for by train is never flown (P4_mode)", () => {
    const wantsTrain = {
      name: "request_travel",
      arguments: { ...toronto, urgent: false, mode: "train", travel_class: "any" },
    };
    const run = new Conversation([wantsTrain])
      .call("check_distance", toronto, { label: "long" })
      .call("check_seats", toronto, { label: "available" });
    const flight = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "economy" },
    });
    assert.deepEqual(
      flight.violations.map((finding) => finding.rule),
      ["P4_mode"],
    );
    assert.equal(evaluator.decide(run.messages, { name: "book_train", arguments: toronto }).verdict, "allow");
  });

  test("with an urgent need the class asked for is booked (P4_class); without one, economy (P3)", () => {
    const urgentBusiness = {
      name: "request_travel",
      arguments: { ...toronto, urgent: true, mode: "flight", travel_class: "business" },
    };
    const run = new Conversation([urgentBusiness])
      .call("check_distance", toronto, { label: "long" })
      .call("check_seats", toronto, { label: "available" });
    const economy = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "economy" },
    });
    assert.deepEqual(
      economy.violations.map((finding) => finding.rule),
      ["P4_class"],
    );
    assert.deepEqual(economy.advice?.call, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "business" },
    });
  });

  test("a route nobody asked for is not booked (P4_only), though it may be looked up", () => {
    const paris = { origin: "Paris", destination: "Rome" };
    const run = new Conversation([request(toronto)]).call("check_distance", paris, { label: "short" });
    const train = evaluator.decide(run.messages, { name: "book_train", arguments: paris });
    assert.equal(train.verdict, "block");
    assert.deepEqual(
      train.violations.map((finding) => [finding.rule, finding.binding]),
      [["P4_only", 'route(x="Paris", y="Rome")']],
    );
  });

  test("fails closed on what the policy does not know: an undeclared tool is blocked, an unknown label is an error", () => {
    const run = new Conversation([request(toronto)]);
    const typo = evaluator.decide(run.messages, { name: "book_trian", arguments: toronto });
    assert.equal(typo.verdict, "block");
    assert.match(typo.failClosed ?? "", /book_trian is not a tool of policy travel/);
    assert.match(blockedText(typo), /could not decide \(book_trian is not a tool of policy travel/);
    const mislabeled = new Conversation([request(toronto)]).call("check_distance", toronto, { label: "far" });
    assert.throws(() => evaluator.next(mislabeled.messages), {
      code: "MNT_ERR_MESSAGES",
      message:
        /messages\[2\]\.mentor\.label "far" is not a label of check_distance \(its labels: short, long/,
    });
  });

  test("done is refused until a booking is confirmed", () => {
    const run = new Conversation([request(toronto)]).call("check_distance", toronto, { label: "short" });
    assert.equal(evaluator.next(run.messages).done.allowed, false);
    run.call("book_train", toronto, { json: { status: "failed" } });
    const afterFailure = evaluator.next(run.messages);
    assert.equal(afterFailure.done.allowed, false);
    assert.equal(
      doneRefusedText(afterFailure.openDuties),
      '[SHIELD] You cannot finish yet. Open duties: P4 (The requested trip must be booked before you finish.) for route(x="Toronto", y="Chicago"). Next: book_train(origin="Toronto", destination="Chicago")',
    );
    run.call("book_train", toronto, { json: { status: "confirmed" } });
    const next = evaluator.next(run.messages);
    assert.equal(next.done.allowed, true);
    assert.deepEqual(next.openDuties, []);
    // P6: no second booking of a confirmed route.
    assert.equal(evaluator.decide(run.messages, { name: "book_train", arguments: toronto }).verdict, "block");
  });

  test("a second route is monitored independently", () => {
    const run = new Conversation([request(toronto), request(ottawa)])
      .call("check_distance", toronto, { label: "short" })
      .call("book_train", toronto, { json: { status: "confirmed" } });
    // Toronto is done; Ottawa still needs its check before a booking.
    const ottawaTrain = evaluator.decide(run.messages, { name: "book_train", arguments: ottawa });
    assert.equal(ottawaTrain.verdict, "block");
    assert.deepEqual(
      ottawaTrain.violations.map((finding) => [finding.rule, finding.binding]),
      [["P1", 'route(x="Ottawa", y="Montreal")']],
    );
    const next = evaluator.next(run.messages);
    assert.equal(next.done.allowed, false);
    assert.deepEqual(
      next.openDuties.map((duty) => duty.binding),
      ['route(x="Ottawa", y="Montreal")'],
    );
    assert.deepEqual(
      next.calls.filter((entry) => entry.class === "progressing").map((entry) => entry.call),
      [{ name: "check_distance", arguments: ottawa }],
    );
  });

  test("a route the task never mentioned is still a route: the rules apply to it", () => {
    const run = new Conversation([request(toronto)]);
    const decision = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { origin: "Paris", destination: "Rome", travel_class: "economy" },
    });
    assert.equal(decision.verdict, "block");
    assert.ok(
      decision.violations.some(
        (finding) => finding.rule === "P1" && finding.binding === 'route(x="Paris", y="Rome")',
      ),
    );
  });

  test("an allowed call while duties are open carries a reminder with a progressing call", () => {
    const run = new Conversation([request(toronto)]);
    const decision = evaluator.decide(run.messages, { name: "check_distance", arguments: toronto });
    assert.equal(decision.verdict, "allow");
    assert.equal(
      reminderText(decision),
      '[SHIELD] Open duties: P4 (The requested trip must be booked before you finish.) for route(x="Toronto", y="Chicago"). Next: book_train(origin="Toronto", destination="Chicago")',
    );
  });

  test("an output without a label counts every label as possible, and a call unsafe under one of them is blocked", () => {
    const run = new Conversation([request(toronto)])
      .call("check_distance", toronto, { text: "It is 790 km." })
      .call("check_seats", toronto, { label: "available" });
    assert.equal(evaluator.next(run.messages).done.allowed, false);
    // The unlabeled check may have failed (no distance: P1 wants one), so even the train waits for a new check.
    const train = evaluator.decide(run.messages, { name: "book_train", arguments: toronto });
    assert.equal(train.verdict, "block");
    assert.deepEqual(
      train.violations.map((finding) => finding.rule),
      ["P1"],
    );
    assert.deepEqual(train.advice?.call, { name: "check_distance", arguments: toronto });
    // The distance may also have been short, so a flight may break P2 as well.
    const flight = evaluator.decide(run.messages, {
      name: "book_flight",
      arguments: { ...toronto, travel_class: "economy" },
    });
    assert.equal(flight.verdict, "block");
    assert.deepEqual(flight.violations.map((finding) => finding.rule).sort(), ["P1", "P2"]);
  });

  test("a distance check that told no distance (labelled none) is not a check", () => {
    const run = new Conversation([request(toronto)]).call("check_distance", toronto, {
      text: "Sorry: no route from Toronto to Chicago.",
      label: null,
    });
    const train = evaluator.decide(run.messages, { name: "book_train", arguments: toronto });
    assert.equal(train.verdict, "block");
    assert.deepEqual(
      train.violations.map((finding) => finding.rule),
      ["P1"],
    );
  });

  test("candidate values: without an urgent need business is unsafe and economy progressing, with one both progress", () => {
    const travelClass = (urgent: boolean) => {
      const run = new Conversation([request(toronto, urgent)])
        .call("check_distance", toronto, { label: "long" })
        .call("check_seats", toronto, { label: "available" });
      return evaluator
        .next(run.messages)
        .arguments.find((entry) => entry.tool === "book_flight" && entry.argument === "travel_class");
    };
    assert.deepEqual(travelClass(false), {
      tool: "book_flight",
      argument: "travel_class",
      unsafe: ["business"],
      progressing: ["economy"],
      // P3 decides the class alone: economy without an urgent need.
      limits: { oneOf: ["economy"] },
    });
    assert.deepEqual(travelClass(true)?.unsafe, []);
    assert.equal(travelClass(true)?.limits, undefined);
    assert.deepEqual(travelClass(true)?.progressing, ["economy", "business"]);
    // Before the checks every flight is unsafe, whatever its class.
    const start = evaluator.next(new Conversation([request(toronto)]).messages);
    assert.deepEqual(start.arguments.find((entry) => entry.argument === "travel_class")?.unsafe, [
      "economy",
      "business",
    ]);
  });

  test("when the game search hits its limit, the shield blocks and says why", () => {
    const tight = new Evaluator(loadPolicy(policyFile), { maxStates: 1 });
    const run = new Conversation([request(toronto)]);
    const decision = tight.decide(run.messages, { name: "check_distance", arguments: toronto });
    assert.equal(decision.verdict, "block");
    assert.match(decision.failClosed ?? "", /exceeded 1 states/);
    assert.match(blockedText(decision), /could not decide/);
    assert.ok(tight.next(run.messages).failClosed);
  });
});
