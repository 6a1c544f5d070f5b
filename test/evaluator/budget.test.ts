import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { createMonitor, Evaluator, SearchBudget } from "../../src/evaluator/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { shieldSetsFor } from "../../src/shield/token/index.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// Bounded work per request (issue: a request of repeated messages froze the server): identical
// task calls are one, the advice searches have a budget and say when it ran out.
const policy = loadPolicy(travelPolicyFile);
const route = { origin: "Toronto", destination: "Chicago" };
const trip = (fields: Record<string, unknown>) => ({
  name: "request_travel",
  arguments: { ...route, ...fields },
});
const asked = (task: unknown[]) => ({ role: "user", content: "Book it.", mentor: { task } });
const booking = { name: "book_train", arguments: route };

describe("identical task calls", () => {
  it("are one task call across messages, within a message and in a monitor's task", () => {
    const evaluator = new Evaluator(policy);
    const once = [asked([trip({ urgent: false, mode: "train" })])];
    const repeated = Array.from({ length: 24 }, () => asked([trip({ urgent: false, mode: "train" })]));
    assert.equal(evaluator.run(repeated).task.length, 1);
    assert.deepEqual(evaluator.next(repeated).openDuties, evaluator.next(once).openDuties);
    const twiceInOne = [asked([trip({ mode: "train" }), trip({ mode: "train" })])];
    assert.equal(evaluator.run(twiceInOne).task.length, 1);
    const monitor = createMonitor(policy, { task: [trip({ mode: "train" }), trip({ mode: "train" })] });
    assert.equal(monitor.run.task.length, 1);
  });

  it("that differ in a field stay two (one route, asked for by train and by plane)", () => {
    const evaluator = new Evaluator(policy);
    const messages = [asked([trip({ mode: "train" })]), asked([trip({ mode: "flight" })])];
    assert.equal(evaluator.run(messages).task.length, 2);
  });
});

describe("the advice search's budget", () => {
  it("judges a call once however many task calls share its route", () => {
    // Six requests of one route: six bindings, one concrete call per tool. Judged once per
    // binding, the search for a flight's prerequisite took 504 hypothetical decisions; now 24.
    const messages = ["train", "flight", "any"].flatMap((mode) =>
      [true, false].map((urgent) => asked([trip({ mode, urgent, travel_class: "any" })])),
    );
    const evaluator = new Evaluator(policy, { search: { maxDecisions: 50 } });
    const decision = evaluator.decide(messages, {
      name: "book_flight",
      arguments: { ...route, travel_class: "economy" },
    });
    assert.equal(decision.verdict, "block");
    assert.equal(decision.searchStopped, undefined);
    assert.deepEqual(decision.advice, {
      kind: "prerequisite",
      call: { name: "check_distance", arguments: route },
    });
  });

  it("stops where it runs out, keeps the call blocked and says why", () => {
    const messages = [asked([trip({ mode: "train" })])];
    const generous = new Evaluator(policy).decide(messages, booking);
    assert.equal(generous.advice?.unblocks, true);
    const starved = new Evaluator(policy, { search: { maxDecisions: 0 } }).decide(messages, booking);
    assert.equal(starved.verdict, "block");
    assert.notEqual(starved.advice?.unblocks, true);
    assert.match(starved.searchStopped ?? "", /0 hypothetical decisions/);
  });

  it("ends at a deadline that has passed", () => {
    const budget = new SearchBudget({}, Date.now() - 1);
    assert.equal(budget.spend(), false);
    assert.match(budget.exhausted ?? "", /deadline/);
    const decision = new Evaluator(policy).decide([asked([trip({ mode: "train" })])], booking, budget);
    assert.equal(decision.verdict, "block");
    assert.match(decision.searchStopped ?? "", /deadline/);
  });

  it("is shared by the token shield's redirects: those not found stay masks, and the sets say so", () => {
    const messages = [asked([trip({ mode: "train" })])];
    const evaluator = new Evaluator(policy);
    const found = shieldSetsFor(evaluator, messages);
    assert.ok(found.redirects?.some((redirect) => redirect.tool === "book_train"));
    const spent = shieldSetsFor(evaluator, messages, undefined, new SearchBudget({ maxDecisions: 0 }));
    assert.equal(spent.redirects, undefined);
    assert.ok(spent.unsafeTools?.includes("book_train"));
    assert.match(spent.searchStopped ?? "", /0 hypothetical decisions/);
  });

  it("gives each unsafe tool its share: a long search for one tool does not starve the next one's redirect", () => {
    // book_flight declared before book_train: its search (which finds nothing for a train trip)
    // comes first and would spend a budget of 30 on its own.
    const text = readFileSync(travelPolicyFile, "utf8");
    const train = /\n {2}book_train:\n(?: {4}.*\n| {6}.*\n)+/.exec(text)?.[0] as string;
    const swapped = parsePolicy(
      text
        .replace(train, "\n")
        .replace(/\n {2}book_flight:\n(?: {4}.*\n| {6}.*\n)+/, (flight) => `${flight}${train.slice(1)}`),
      "swapped.yaml",
    );
    assert.deepEqual(
      [...swapped.tools.keys()].filter((name) => name.startsWith("book_")),
      ["book_flight", "book_train"],
    );
    const messages = [asked([trip({ mode: "train" })])];
    const sets = shieldSetsFor(
      new Evaluator(swapped),
      messages,
      undefined,
      new SearchBudget({ maxDecisions: 30 }),
    );
    assert.deepEqual(
      sets.redirects?.map((redirect) => [redirect.tool, redirect.to]),
      [["book_train", "check_distance"]],
    );
    assert.equal(sets.doneRedirect?.to, "check_distance");
    assert.match(
      sets.searchStopped ?? "",
      /redirect from book_flight stopped after 15 hypothetical decisions \(its share/,
    );
  });
});
