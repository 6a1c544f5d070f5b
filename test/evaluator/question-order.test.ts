import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../../src/base/random.js";
import { Evaluator, type NextAnswer, type ProposedCall } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";
import { type Domain, type Pick, randomCall } from "../support/random-calls.js";

// An evaluator's answers must not depend on the questions it was asked before. Its game keeps
// what every question teaches (candidates, components, distances by component shape and projected
// state, call classes): a shared evaluator asked about several conversations, their prefixes in a
// random order, must answer each question exactly as a new evaluator asked only that question,
// and as the reference computation (`incremental: false`) asked in the same order.
//
// What it found, each keyed by something that did not determine the answer:
// - refunds-by-order: a refund names a customer and an order, and the game listed the instances
//   of that pair twice among those the refund affects; a distance looked up after the call then
//   stepped them twice (refunded twice: lost), and the lookup hit only when another conversation
//   had reached that state before (see test/evaluator/run-cache.test.ts);
// - refunds: whether a call for a customer not seen yet is blocked was kept by tool, task and the
//   states of rules without entities, but a run with no compliant finish left blocks every call;
// - watch (below): candidates were kept by instance array, but a call can bind an item without
//   adding an instance, and the game aims a candidate at it.

const fixture = (path: string) => loadPolicy(fileURLToPath(new URL(`../../../${path}`, import.meta.url)));

// An entity whose only rule applies to requested bindings, and a rule without entities that reads
// every call: a call naming an item not asked about binds it and adds no instance (the run keeps
// its instance array), yet the game aims a candidate at it (it is a position of `B`).
const watch = parsePolicy(
  `
policy: watch
manual:
  A: Ping every item asked about.
  B: Note every ping at once.
tools:
  ping: {parameters: {id: string}}
  note: {parameters: {}}
task:
  ask: {parameters: {id: string}}
entities:
  item: {from: {ask: {i: id}}}
propositions:
  pinged(item): {tool: ping, when: "a.id == i"}
  any_ping: {tool: ping}
  noted: {tool: note}
rules:
  - {id: A, ltl: "F pinged(item)", applies_to: requested}
  - {id: B, template: chainResponse, a: any_ping, b: noted}
`,
  "watch.yaml",
);

const cities = ["Toronto", "Chicago", "Ottawa"];
const orders = ["#W0000001", "#W0000002", "#W0000003"];
const domains: Record<string, Domain> = {
  travel: {
    policy: fixture("policies/travel/policy.yaml"),
    task: (pick) =>
      Array.from({ length: pick([1, 1, 2]) }, () => ({
        name: "request_travel",
        arguments: {
          origin: pick(cities),
          destination: pick(cities),
          urgent: pick([true, false]),
          mode: pick(["flight", "train", "any"]),
          travel_class: pick(["business", "economy", "any"]),
        },
      })),
    values: { origin: cities, destination: cities, travel_class: ["economy", "business"] },
    results: [{ status: "confirmed" }, { status: "failed" }],
  },
  refunds: {
    policy: fixture("test/evaluator/fixtures/refunds.yaml"),
    task: (pick) =>
      Array.from({ length: pick([1, 2]) }, () => ({
        name: "open_case",
        arguments: { customer: pick(["c1", "c2", "c3"]) },
      })),
    values: { customer: ["c1", "c2", "c3"], amount: [20, 250] },
    results: [{ status: "confirmed" }, { status: "failed" }],
  },
  refundsByOrder: {
    policy: fixture("test/run/fixtures/refunds-by-order.yaml"),
    task: (pick) =>
      Array.from({ length: pick([1, 1, 2]) }, () => ({
        name: "request_refund",
        arguments: { customer_id: pick(["c1", "c2"]), order_id: pick(["o1", "o2"]) },
      })),
    values: { customer_id: ["c1", "c2", "c3"], order_id: ["o1", "o2", "o3"] },
    results: [{ ok: true }],
  },
  // Every severity: escalate, ask (approvals), stop, override, warn, record.
  severities: {
    policy: fixture("test/evaluator/fixtures/ops.yaml"),
    task: () => [],
    values: { name: ["users"], amount: [20, 500], to: ["team", "press"] },
    results: [{ ok: true }, { ok: false }],
  },
  // Rules that read every call ("immediately followed by", "the first action").
  ltlHarnessRefund: {
    policy: fixture("bench/conformance/ltl-harness-refund.policy.yaml"),
    task: () => [],
    values: {},
    results: [{ verified: true }, { verified: false }, { ok: true }],
  },
  watch: {
    policy: watch,
    task: (pick) => [{ name: "ask", arguments: { id: pick(["i1", "i2"]) } }],
    values: { id: ["i1", "i2", "i3"] },
    results: [{ ok: true }],
  },
  tau2Retail: {
    policy: fixture("policies/tau2-retail/policy.yaml"),
    task: (pick) =>
      Array.from({ length: pick([1, 2, 3]) }, (): { name: string; arguments: Record<string, Value> } => {
        const name = pick([
          "name_order",
          "request_cancel",
          "request_return",
          "request_item_change",
          "request_address_change",
          "request_payment_change",
          "request_user_address_change",
        ]);
        if (name === "request_user_address_change")
          return { name, arguments: { user_id: pick(["u1", "u2"]) } };
        if (name === "request_cancel")
          return {
            name,
            arguments: { order_id: pick(orders), reason: pick(["no longer needed", "unstated"]) },
          };
        return { name, arguments: { order_id: pick(orders) } };
      }),
    values: {
      order_id: orders,
      user_id: ["u1", "u2"],
      reason: ["no longer needed", "ordered by mistake"],
      email: ["a@example.com"],
      item_ids: [["1"]],
      new_item_ids: [["2"]],
      payment_method_id: ["card_1"],
    },
    results: [{ status: "pending" }, { status: "delivered" }, { error: "no such order" }, { user_id: "u1" }],
  },
};

type Outcome = { json?: Value; label?: string | null; text?: string };

function randomOutcome(domain: Domain, name: string, pick: Pick): Outcome {
  const tool = domain.policy.tools.get(name);
  if (tool?.output === "text") return { label: pick([...Object.keys(tool.labels ?? {}), null]) };
  return pick([...domain.results.map((json) => ({ json })), { text: "not json" }]);
}

/** A conversation as its task and calls: conversations that share a prefix share its messages. */
interface Script {
  task: { name: string; arguments: Record<string, Value> }[];
  calls: { call: ProposedCall; outcome: Outcome }[];
}

function randomSteps(domain: Domain, pick: Pick, length: number): Script["calls"] {
  return Array.from({ length }, () => {
    const call = randomCall(domain, pick);
    return { call, outcome: randomOutcome(domain, call.name, pick) };
  });
}

function messagesOf(script: Script, calls: number): Record<string, unknown>[] {
  const conversation = new Conversation(script.task);
  for (const { call, outcome } of script.calls.slice(0, calls))
    conversation.call(call.name, call.arguments, outcome);
  return conversation.messages;
}

/** `next` without the explored-state counts (they say what was searched, which depends on what was known). */
function comparable(answer: NextAnswer): Omit<NextAnswer, "gameStates"> {
  const { gameStates: _, ...rest } = answer;
  return rest;
}

/** A question: `next`, or `decide` on a call, after the first `calls` calls of a script. */
interface Question {
  script: Script;
  calls: number;
  decide?: ProposedCall;
}

function ask(evaluator: Evaluator, question: Question): unknown {
  const messages = messagesOf(question.script, question.calls);
  return question.decide ? evaluator.decide(messages, question.decide) : comparable(evaluator.next(messages));
}

/**
 * Scripts for one seed: a few random conversations, and branches of them (a prefix, then other
 * calls), with every prefix asked `next` and `decide` on random calls, in a random order.
 */
function questionsFor(domain: Domain, seed: number, scripts: number, maxCalls: number): Question[] {
  const next = seededRandom(seed);
  const pick: Pick = (values) => values[Math.floor(next() * values.length)] as (typeof values)[number];
  const all: Script[] = [];
  for (let index = 0; index < scripts; index++) {
    const base = index > 0 && next() < 0.5 ? pick(all) : undefined;
    const length = 1 + Math.floor(next() * maxCalls);
    if (base) {
      const cut = Math.floor(next() * (base.calls.length + 1));
      all.push({
        task: base.task,
        calls: [...base.calls.slice(0, cut), ...randomSteps(domain, pick, Math.max(1, length - cut))],
      });
    } else all.push({ task: domain.task(pick), calls: randomSteps(domain, pick, length) });
  }
  const questions: Question[] = [];
  for (const script of all) {
    for (let calls = 0; calls <= script.calls.length; calls++) {
      questions.push({ script, calls });
      for (let attempt = 0; attempt < 2; attempt++)
        questions.push({ script, calls, decide: randomCall(domain, pick) });
    }
  }
  // Fisher-Yates, seeded.
  for (let index = questions.length - 1; index > 0; index--) {
    const other = Math.floor(next() * (index + 1));
    [questions[index], questions[other]] = [questions[other] as Question, questions[index] as Question];
  }
  return questions;
}

function describeQuestion(question: Question): string {
  const calls = question.script.calls
    .slice(0, question.calls)
    .map(
      ({ call, outcome }) => `${call.name}(${JSON.stringify(call.arguments)}) -> ${JSON.stringify(outcome)}`,
    );
  const asked = question.decide ? `decide ${JSON.stringify(question.decide)}` : "next";
  return `${asked} after task ${JSON.stringify(question.script.task)}; ${calls.join("; ")}`;
}

describe("an evaluator's answers do not depend on the questions asked before", () => {
  const sizes: Record<string, { seeds: number; scripts: number; maxCalls: number }> = {
    travel: { seeds: 12, scripts: 4, maxCalls: 6 },
    refunds: { seeds: 12, scripts: 4, maxCalls: 6 },
    refundsByOrder: { seeds: 20, scripts: 4, maxCalls: 7 },
    severities: { seeds: 12, scripts: 4, maxCalls: 6 },
    ltlHarnessRefund: { seeds: 12, scripts: 4, maxCalls: 6 },
    watch: { seeds: 12, scripts: 4, maxCalls: 5 },
    tau2Retail: { seeds: 5, scripts: 3, maxCalls: 5 },
  };
  for (const [name, domain] of Object.entries(domains)) {
    const { seeds, scripts, maxCalls } = sizes[name] as (typeof sizes)[string];
    test(`${name}: a shared evaluator, asked in random order, answers as a new one per question`, () => {
      for (let seed = 1; seed <= seeds; seed++) {
        const strict = seed % 3 === 0;
        // The decision budget alone bounds the searches: the time backstop would make the answers
        // depend on the machine's load, not on the questions asked before.
        const options = { strict, search: { maxMs: Number.POSITIVE_INFINITY } };
        const shared = new Evaluator(domain.policy, options);
        const reference = new Evaluator(domain.policy, { ...options, incremental: false });
        questionsFor(domain, seed, scripts, maxCalls).forEach((question, index) => {
          const where = `seed ${seed}${strict ? " (strict)" : ""}, question ${index}: ${describeQuestion(question)}`;
          const alone = ask(new Evaluator(domain.policy, options), question);
          assert.deepEqual(ask(shared, question), alone, `shared evaluator, ${where}`);
          assert.deepEqual(ask(reference, question), alone, `incremental: false, ${where}`);
        });
      }
    });
  }
});

describe("what a call for a binding not seen yet would do is judged on the run it is asked on", () => {
  // Escalating the requested customer's case forbids the refund that R4 requires: no compliant
  // finish is left, and every call was unsafe, one for a customer not seen yet too. An evaluator
  // asked first about the case before the escalation (where such a call is allowed) kept that
  // answer by tool, task and the states of rules without entities, and called escalate neutral.
  // Now only a call that breaks a rule for good is unsafe in a run without a compliant finish: the
  // verification the open case needs is progress there and neutral in the trapped run.
  test("refunds: a trapped run after an open one, and the other way round", () => {
    const domain = domains.refunds as Domain;
    const task = [{ name: "open_case", arguments: { customer: "c1" } }];
    const open = new Conversation(task).messages;
    const trapped = new Conversation(task).call(
      "escalate",
      { customer: "c1" },
      { json: { status: "confirmed" } },
    ).messages;
    const toolClass = (answer: NextAnswer, name: string) =>
      answer.tools.find((tool) => tool.name === name)?.class;
    for (const order of [
      [open, trapped],
      [trapped, open],
    ]) {
      const shared = new Evaluator(domain.policy);
      for (const messages of order) {
        const alone = new Evaluator(domain.policy).next(messages);
        assert.deepEqual(comparable(shared.next(messages)), comparable(alone));
      }
    }
    assert.equal(toolClass(new Evaluator(domain.policy).next(trapped), "verify"), "neutral");
    assert.equal(toolClass(new Evaluator(domain.policy).next(open), "verify"), "progressing");
    assert.equal(toolClass(new Evaluator(domain.policy).next(trapped), "refund"), "unsafe");
  });
});

describe("the game's candidates are those of the run asked about", () => {
  // The game kept candidates by instance array only: a run and the run after a call that binds an
  // item nobody asked about (no instance added) shared them, so the later run missed the call aimed
  // at that item, or the earlier one (or another conversation) was offered a call for an item it
  // never named, depending on which was asked first.
  test("watch: a binding that adds no instance, asked before and after the run without it", () => {
    const task = [{ name: "ask", arguments: { id: "i1" } }];
    const before = new Conversation(task).messages;
    const after = new Conversation(task).call("ping", { id: "i9" }, { json: { ok: true } }).messages;
    const pings = (answer: NextAnswer) =>
      answer.calls
        .filter((entry) => entry.call.name === "ping")
        .map((entry) => entry.call.arguments.id ?? null);
    for (const order of [
      [before, after],
      [after, before],
    ]) {
      const shared = new Evaluator(watch);
      for (const messages of order)
        assert.deepEqual(comparable(shared.next(messages)), comparable(new Evaluator(watch).next(messages)));
    }
    assert.deepEqual(pings(new Evaluator(watch).next(after)), ["i1", "i9", null]);
    assert.deepEqual(pings(new Evaluator(watch).next(before)), ["i1", null]);
  });
});
