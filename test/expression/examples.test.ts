import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type CheckEnvironment,
  checkExpression,
  type FieldType,
  type HistoryFunctions,
  holdsIn,
  parseExpression,
  type Value,
} from "../../src/expression/index.js";

/** The business-travel policy of the design notes, as the policy loader would present it. */
const route: Record<string, FieldType> = { origin: "string", destination: "string" };
const flightArguments: Record<string, FieldType> = {
  ...route,
  travel_class: { enum: ["economy", "business"] },
};
const tools = {
  check_distance: { arguments: route },
  book_train: { arguments: route },
  book_flight: { arguments: flightArguments },
};
const common = {
  variables: { x: "string", y: "string" },
  task: { request_travel: { origin: "string", destination: "string", urgent: "boolean" } },
  tools,
  propositions: ["checked", "short", "flight", "train", "flight_ok", "train_ok"],
} satisfies Omit<CheckEnvironment, "arguments" | "outcome">;

const when = "a.origin == x && a.destination == y";
const shortOutcome = "o.label == 'short'";
const require = "a.travel_class == 'economy' || task.request_travel.urgent == true";

describe("the business-travel policy", () => {
  test("its expressions check against the declarations", () => {
    const onCheck: CheckEnvironment = { ...common, arguments: route };
    const withLabel: CheckEnvironment = { ...onCheck, outcome: { label: { enum: ["short", "long"] } } };
    const onFlight: CheckEnvironment = { ...common, arguments: flightArguments };
    assert.deepEqual(checkExpression(parseExpression(when), onCheck), []);
    assert.deepEqual(checkExpression(parseExpression(shortOutcome), withLabel), []);
    assert.deepEqual(checkExpression(parseExpression(require), onFlight), []);
    // The same outcome predicate on an action proposition (no outcome) is refused.
    assert.deepEqual(
      checkExpression(parseExpression(shortOutcome), onCheck).map((problem) => problem.kind),
      ["unavailable"],
    );
    // A typo in the class is caught with the allowed values.
    const typo = checkExpression(parseExpression("a.travel_class == 'buisness'"), onFlight);
    assert.match(typo[0]?.message ?? "", /'economy', 'business'/);
  });

  test("its expressions decide concrete calls", () => {
    const variables = { x: "Paris", y: "Lyon" };
    const task = { request_travel: { origin: "Paris", destination: "Lyon", urgent: false } };
    const flight = (travelClass: string): Value => ({
      origin: "Paris",
      destination: "Lyon",
      travel_class: travelClass,
    });
    assert.equal(holdsIn(parseExpression(when), { arguments: flight("economy"), variables }), true);
    assert.equal(holdsIn(parseExpression(when), { arguments: { origin: "Paris" }, variables }), false);
    assert.equal(holdsIn(parseExpression(shortOutcome), { outcome: { label: "short" } }), true);
    assert.equal(holdsIn(parseExpression(shortOutcome), { outcome: "391 km" }), false);
    assert.equal(holdsIn(parseExpression(require), { arguments: flight("economy"), task }), true);
    assert.equal(holdsIn(parseExpression(require), { arguments: flight("business"), task }), false);
    const urgent = { request_travel: { ...task.request_travel, urgent: true } };
    assert.equal(holdsIn(parseExpression(require), { arguments: flight("business"), task: urgent }), true);
    // A constraint that reads the history: a distance check first, and no flight booked yet.
    const history: HistoryFunctions = {
      last: () => null,
      outcomes: () => [],
      held: (proposition) => proposition === "checked",
      count: (tool) => (tool === "book_flight" ? 1 : 0),
      values: () => [],
    };
    const once = parseExpression("held('checked') && count('book_flight') < 1");
    assert.equal(holdsIn(once, { history }), false);
    assert.equal(holdsIn(once, {}), false);
    assert.equal(holdsIn(once, { history: { ...history, count: () => 0 } }), true);
  });
});
