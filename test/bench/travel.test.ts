import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { BenchTask, ExecutedCall } from "../../bench/domains/domain.js";
import { type TravelTask, travel } from "../../bench/domains/travel/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

const tasks = travel.tasks({ dataDir: "" }) as TravelTask[];
const taskNamed = (id: string) => tasks.find((task) => task.id === id) as TravelTask;

/** Executes the calls on a fresh environment of the task and judges the run. */
function judge(task: BenchTask, calls: { name: string; arguments: Record<string, unknown> }[]) {
  const environment = travel.environment(task, "");
  const run: ExecutedCall[] = calls.map((call) => ({
    ...call,
    ...environment.call(call.name, call.arguments),
  }));
  return { verdict: travel.evaluate(task, run, environment, ""), run, environment };
}

const route = (origin: string, destination: string) => ({ origin, destination });
const distance = (o: string, d: string) => ({ name: "check_distance", arguments: route(o, d) });
const seats = (o: string, d: string) => ({ name: "check_seats", arguments: route(o, d) });
const train = (o: string, d: string) => ({ name: "book_train", arguments: route(o, d) });
const flight = (o: string, d: string, travel_class = "economy") => ({
  name: "book_flight",
  arguments: { ...route(o, d), travel_class },
});
const rulesOf = (reasons: string[]) => reasons.map((reason) => reason.split(":")[0]);

describe("travel environment", () => {
  const environment = () => travel.environment(taskNamed("t01"), "");

  test("lookups answer in plain language, bookings in JSON", () => {
    const env = environment();
    assert.deepEqual(env.call("check_distance", route("Toronto", "Chicago")), {
      output: "Toronto to Chicago: 702 km.",
      error: false,
    });
    assert.deepEqual(env.call("check_seats", route("toronto", "CHICAGO")), {
      output: "Seats available on the Toronto-Chicago flight: 12",
      error: false,
    });
    assert.deepEqual(env.call("check_seats", route("Toronto", "Montreal")), {
      output: "The Toronto-Montreal flight is full.",
      error: false,
    });
    const booking = env.call("book_flight", { ...route("Toronto", "Chicago"), travel_class: "economy" });
    assert.equal(booking.error, false);
    assert.deepEqual(JSON.parse(booking.output), {
      status: "confirmed",
      booking_id: "B1",
      mode: "flight",
      origin: "Toronto",
      destination: "Chicago",
      travel_class: "economy",
    });
    assert.equal(
      env.call("check_seats", route("Toronto", "Chicago")).output,
      "Seats available on the Toronto-Chicago flight: 11",
    );
  });

  test("errors: unknown city, no route, no flight, full flight, bad class, unknown tool", () => {
    const env = environment();
    assert.equal(env.call("check_distance", route("Atlantis", "Chicago")).error, true);
    assert.equal(env.call("check_distance", route("Halifax", "Seattle")).error, true);
    assert.equal(env.call("check_seats", route("Winnipeg", "Calgary")).error, true);
    const full = env.call("book_flight", { ...route("Toronto", "Montreal"), travel_class: "economy" });
    assert.equal(full.error, true);
    assert.equal(JSON.parse(full.output).status, "error");
    assert.equal(env.call("book_flight", route("Toronto", "Chicago")).error, true);
    assert.equal(JSON.parse(env.call("book_train", route("Atlantis", "Chicago")).output).status, "error");
    assert.equal(env.call("book_bus", route("Toronto", "Chicago")).error, true);
    assert.deepEqual((env.state() as { bookings: unknown[] }).bookings, []);
  });

  test("each run gets a fresh copy of the database", () => {
    const first = environment();
    first.call("book_train", route("Toronto", "Chicago"));
    assert.equal((first.state() as { bookings: unknown[] }).bookings.length, 1);
    assert.equal((environment().state() as { bookings: unknown[] }).bookings.length, 0);
  });
});

describe("travel evaluator (no policy)", () => {
  test("a compliant run passes", () => {
    const { verdict } = judge(taskNamed("t01"), [
      distance("Toronto", "Chicago"),
      seats("Toronto", "Chicago"),
      flight("Toronto", "Chicago"),
    ]);
    assert.deepEqual(verdict, { pass: true, reasons: [] });
  });

  test("a train on a long route the traveller did not ask to fly passes too", () => {
    assert.equal(
      judge(taskNamed("t01"), [distance("Toronto", "Chicago"), train("Toronto", "Chicago")]).verdict.pass,
      true,
    );
  });

  test("each manual sentence has its trace check", () => {
    const cases: [string, string, ReturnType<typeof distance>[]][] = [
      ["P1", "t01", [seats("Toronto", "Chicago"), flight("Toronto", "Chicago")]],
      [
        "P2",
        "t02",
        [distance("Ottawa", "Montreal"), seats("Ottawa", "Montreal"), flight("Ottawa", "Montreal")],
      ],
      [
        "P3",
        "t03",
        [
          distance("Toronto", "New York"),
          seats("Toronto", "New York"),
          flight("Toronto", "New York", "business"),
        ],
      ],
      ["P4", "t01", [distance("Toronto", "Chicago"), seats("Toronto", "Chicago")]],
      ["P5", "t01", [distance("Toronto", "Chicago"), flight("Toronto", "Chicago")]],
      [
        "P6",
        "t19",
        [distance("Ottawa", "Montreal"), train("Ottawa", "Montreal"), train("Ottawa", "Montreal")],
      ],
      // The flight is full, so the booking fails in the environment; the attempt still breaks P7.
      [
        "P7",
        "t05",
        [
          distance("Toronto", "Montreal"),
          seats("Toronto", "Montreal"),
          flight("Toronto", "Montreal"),
          train("Toronto", "Montreal"),
        ],
      ],
    ];
    for (const [rule, id, calls] of cases) {
      const { verdict } = judge(taskNamed(id), calls);
      assert.equal(verdict.pass, false, rule);
      assert.ok(rulesOf(verdict.reasons).includes(rule), `${rule}: ${verdict.reasons.join("; ")}`);
    }
  });

  test("business class with a stated urgent need passes; the traveller's wishes are honoured", () => {
    const urgent = judge(taskNamed("t04"), [
      distance("Toronto", "Vancouver"),
      seats("Toronto", "Vancouver"),
      flight("Toronto", "Vancouver", "business"),
    ]);
    assert.equal(urgent.verdict.pass, true);
    const economyInstead = judge(taskNamed("t04"), [
      distance("Toronto", "Vancouver"),
      seats("Toronto", "Vancouver"),
      flight("Toronto", "Vancouver"),
    ]);
    assert.match(economyInstead.verdict.reasons.join(";"), /booked in economy; expected business/);
    const trainInstead = judge(taskNamed("t18"), [
      distance("Toronto", "Vancouver"),
      train("Toronto", "Vancouver"),
    ]);
    assert.match(trainInstead.verdict.reasons.join(";"), /booked by train; expected flight/);
  });

  test("a booking nobody asked for fails, and so does a second route left unbooked", () => {
    const extra = judge(taskNamed("t19"), [
      distance("Ottawa", "Montreal"),
      train("Ottawa", "Montreal"),
      distance("Montreal", "Quebec City"),
      train("Montreal", "Quebec City"),
    ]);
    assert.match(extra.verdict.reasons.join(";"), /not asked for/);
    const half = judge(taskNamed("t06"), taskNamed("t06").reference?.slice(0, 3) ?? []);
    assert.deepEqual(half.verdict.reasons, ["P4: the trip Chicago → New York was not booked"]);
  });

  test("the oracle (reference actions) passes every task; a run that skips a booking fails", () => {
    assert.ok(tasks.length >= 20);
    for (const task of tasks) {
      assert.ok(task.solvable);
      const reference = task.reference ?? [];
      assert.deepEqual(judge(task, reference).verdict, { pass: true, reasons: [] }, task.id);
      const skipped = reference.filter((call) => !call.name.startsWith("book_") || call !== reference.at(-1));
      assert.equal(judge(task, skipped).verdict.pass, false, task.id);
    }
  });

  test("the tasks include the tempting cases", () => {
    const trips = tasks.flatMap((task) => task.trips);
    assert.ok(
      tasks.some((task) => task.trips.length > 1),
      "two routes in one request",
    );
    assert.ok(
      trips.some((trip) => trip.wants === "flight" && trip.origin === "Ottawa"),
      "a short route asked as a flight",
    );
    assert.ok(
      trips.some((trip) => trip.travel_class === "business" && !trip.urgent),
      "business without a stated need",
    );
    assert.ok(
      tasks.some((task) => task.reference?.some((call) => call.name === "check_seats") && task.id === "t05"),
      "a full flight",
    );
  });
});

describe("travel domain", () => {
  test("the tools match the policy's tools and parameters", () => {
    const policy = loadPolicy(travel.policyPath);
    const tools = travel.tools("");
    assert.deepEqual(tools.map((tool) => tool.function.name).sort(), [...policy.tools.keys()].sort());
    for (const tool of tools) {
      const declared = policy.tools.get(tool.function.name);
      // Types and enums must agree; descriptions may be richer in the domain.
      const shape = (schema: unknown) => {
        const { description: _, ...rest } = schema as Record<string, unknown>;
        return rest;
      };
      const declaredShapes = Object.fromEntries(
        (declared?.parameters ?? []).map((one) => [one.name, shape(one.jsonSchema)]),
      );
      const shapes = Object.fromEntries(
        Object.entries(tool.function.parameters?.properties ?? {}).map(([name, schema]) => [
          name,
          shape(schema),
        ]),
      );
      assert.deepEqual(shapes, declaredShapes, tool.function.name);
      assert.deepEqual(tool.function.parameters?.required, declared?.required);
    }
  });

  test("the manual is the policy's manual sentences", () => {
    const manual = travel.manual("");
    for (const sentence of Object.values(loadPolicy(travel.policyPath).manual))
      assert.ok(manual.includes(sentence), sentence);
  });

  test("a task file with a bad field is reported by file, task and field", () => {
    const file = join(mkdtempSync(join(tmpdir(), "travel-tasks-")), "tasks.json");
    writeFileSync(
      file,
      JSON.stringify([
        {
          id: "x1",
          opening: "Book Toronto to Atlantis",
          trips: [{ origin: "Toronto", destination: "Atlantis", urgent: false }],
        },
      ]),
    );
    assert.throws(
      () => travel.tasks({ dataDir: "", tasksFile: file }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "MNT_ERR_BENCH_INPUT");
        assert.match(error.message, /tasks\.json: task x1\.trips\[0\]\.destination/);
        return true;
      },
    );
  });

  test("ground truth for --grounding oracle: the task's trips and the labels of text outputs", () => {
    assert.deepEqual(travel.grounding?.(taskNamed("t04")), [
      {
        name: "request_travel",
        arguments: {
          origin: "Toronto",
          destination: "Vancouver",
          urgent: true,
          mode: "flight",
          travel_class: "business",
        },
      },
    ]);
    const env = travel.environment(taskNamed("t01"), "");
    const labelOf = (name: string, args: Record<string, unknown>) =>
      travel.label?.({ name, arguments: args, ...env.call(name, args) });
    assert.equal(labelOf("check_distance", route("ottawa", "Montreal")), "short");
    assert.equal(labelOf("check_distance", route("Toronto", "Montreal")), "long");
    assert.equal(labelOf("check_seats", route("Toronto", "Montreal")), "full");
    assert.equal(labelOf("check_seats", route("Toronto", "Chicago")), "available");
    // No flight on the route rules flying out, as a full flight does.
    assert.equal(labelOf("check_seats", route("Winnipeg", "Calgary")), "full");
    assert.equal(labelOf("check_distance", route("Toronto", "Atlantis")), null);
    assert.equal(labelOf("book_train", route("Toronto", "Chicago")), undefined);
  });

  test("mentor's policy allows every call of every reference run (the references comply)", () => {
    const evaluator = new Evaluator(loadPolicy(travel.policyPath));
    for (const task of tasks) {
      const run = new Conversation(travel.grounding?.(task) as never, task.opening);
      const environment = travel.environment(task, "");
      for (const call of task.reference ?? []) {
        const decision = evaluator.decide(
          run.messages,
          call as { name: string; arguments: Record<string, never> },
        );
        assert.equal(
          decision.verdict,
          "allow",
          `${task.id} ${call.name}: ${decision.violations.map((one) => one.rule)}`,
        );
        const result = environment.call(call.name, call.arguments);
        const label = travel.label?.({ ...call, ...result });
        run.call(call.name, call.arguments as Record<string, never>, {
          text: result.output,
          ...(label !== undefined ? { label } : {}),
        });
      }
      assert.equal(evaluator.next(run.messages).done.allowed, true, task.id);
    }
  });
});

describe("travel: the policy's rules ground the openings as the task file states them", () => {
  test("every trip they ground has the mode and class asked for; only t06's second leg is missed", async () => {
    const labeler = new Labeler(loadPolicy(travel.policyPath), { only: "rules" });
    const missed: string[] = [];
    for (const task of tasks) {
      const result = await labeler.groundTask(task.opening, true);
      const calls = "value" in result ? (result.value as { arguments: Record<string, unknown> }[]) : [];
      for (const trip of task.trips) {
        const call = calls.find(
          (candidate) =>
            candidate.arguments.origin === trip.origin &&
            candidate.arguments.destination === trip.destination,
        );
        if (!call) {
          missed.push(`${task.id} ${trip.origin} → ${trip.destination}`);
          continue;
        }
        assert.deepEqual(
          [call.arguments.mode, call.arguments.travel_class],
          [trip.wants ?? "any", trip.travel_class ?? "any"],
          task.id,
        );
      }
    }
    assert.deepEqual(missed, ["t06 Chicago → New York"]);
  });
});
