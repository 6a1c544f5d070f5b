import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../src/errors/index.js";
import { Evaluator, type NextAnswer, type ProposedCall } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { seededRandom } from "../support/random.js";
import { type Domain, type Pick, randomCall } from "../support/random-calls.js";

// The runs kept by message prefix (src/evaluator/run-cache.ts) must answer exactly as the run
// rebuilt from the whole history (`runCache: {maxMessages: 0}`, the reference): on random
// conversations with everything reading a conversation looks at (parallel calls, answers late,
// answered twice or never, refusals, approvals, stops, resumes, task calls added later, ids used
// twice, malformed messages), their prefixes asked in random order, conversations that share a
// prefix and then diverge, a cache small enough to evict all the time, and callers that change
// a monitor they were given or a message they sent.

const fixture = (path: string) => loadPolicy(fileURLToPath(new URL(`../../../${path}`, import.meta.url)));

const cities = ["Toronto", "Chicago", "Ottawa"];
const domains: Record<string, Domain> = {
  travel: {
    policy: fixture("policies/travel/policy.yaml"),
    task: (pick) => [
      {
        name: "request_travel",
        arguments: { origin: pick(cities), destination: pick(cities), urgent: pick([true, false]) },
      },
    ],
    values: { origin: cities, destination: cities, travel_class: ["economy", "business"] },
    results: [{ status: "confirmed" }, { status: "failed" }],
  },
  refunds: {
    policy: fixture("test/evaluator/fixtures/refunds.yaml"),
    task: (pick) => [{ name: "open_case", arguments: { customer: pick(["c1", "c2"]) } }],
    values: { customer: ["c1", "c2", "c3"], amount: [20, 250] },
    results: [{ status: "confirmed" }],
  },
  // A proposition over two entities (a refund names a customer and an order).
  refundsByOrder: {
    policy: fixture("test/monitor/fixtures/refunds-by-order.yaml"),
    task: (pick) => [
      {
        name: "request_refund",
        arguments: { customer_id: pick(["c1", "c2"]), order_id: pick(["o1", "o2"]) },
      },
    ],
    values: { customer_id: ["c1", "c2"], order_id: ["o1", "o2"] },
    results: [{ ok: true }],
  },
  // Every severity: escalate, ask (approvals), stop (latched until resumed), override, warn, record.
  severities: {
    policy: fixture("test/evaluator/fixtures/ops.yaml"),
    task: () => [],
    values: { name: ["users"], amount: [20, 500], to: ["team", "press"] },
    results: [{ ok: true }],
  },
  ltlHarnessRefund: {
    policy: fixture("bench/conformance/ltl-harness-refund.policy.yaml"),
    task: () => [],
    values: {},
    results: [{ verified: true }, { verified: false }, { ok: true }],
  },
};

type Message = Record<string, unknown>;

/** A tool message answering `id`: a result (JSON, a label, text), or the shield's refusal. */
function answer(domain: Domain, id: string, call: ProposedCall, next: () => number, pick: Pick): Message {
  if (next() < 0.15)
    return { role: "tool", tool_call_id: id, content: `[SHIELD] Blocked ${call.name}(). Rule X: no.` };
  const tool = domain.policy.tools.get(call.name);
  if (tool?.output === "text") {
    const message: Message = { role: "tool", tool_call_id: id, content: "some text" };
    if (next() < 0.85) message.mentor = { label: pick([...Object.keys(tool.labels), null]) };
    return message;
  }
  return {
    role: "tool",
    tool_call_id: id,
    content: next() < 0.9 ? JSON.stringify(pick(domain.results)) : "not json",
  };
}

/**
 * A random conversation of about `length` messages after `start` (whose calls may still be
 * answered). Ids are unique to the seed, except where one is used twice on purpose.
 */
function conversation(domain: Domain, seed: number, length: number, start: Message[] = []): Message[] {
  const next = seededRandom(seed);
  const pick: Pick = (values) => values[Math.floor(next() * values.length)] as (typeof values)[number];
  const messages: Message[] =
    start.length > 0
      ? [...start]
      : [{ role: "user", content: "Please help.", mentor: { task: domain.task(pick) } }];
  const unanswered: { id: string; call: ProposedCall }[] = [];
  const answered: { id: string; call: ProposedCall }[] = [];
  let ids = 0;
  const newId = () => `c${seed}_${ids++}`;
  while (messages.length < length + start.length) {
    const roll = next();
    if (roll < 0.45) {
      const calls = Array.from({ length: next() < 0.2 ? 2 : 1 }, () => ({
        id: next() < 0.03 && answered.length > 0 ? pick(answered).id : newId(),
        call: randomCall(domain, pick),
      }));
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: calls.map(({ id, call }) => ({
          id,
          type: "function",
          function: {
            name: call.name,
            arguments: next() < 0.9 ? JSON.stringify(call.arguments) : call.arguments,
          },
        })),
      });
      for (const entry of calls) {
        const when = next();
        if (when < 0.75) {
          messages.push(answer(domain, entry.id, entry.call, next, pick));
          answered.push(entry);
        } else if (when < 0.95) unanswered.push(entry);
      }
    } else if (roll < 0.55 && unanswered.length > 0) {
      const entry = unanswered.splice(Math.floor(next() * unanswered.length), 1)[0] as (typeof unanswered)[0];
      messages.push(answer(domain, entry.id, entry.call, next, pick));
      answered.push(entry);
    } else if (roll < 0.6 && answered.length > 0) {
      // Answered again: traceFromMessages rewrites the call (the cache reads the whole history).
      const entry = pick(answered);
      messages.push(answer(domain, entry.id, entry.call, next, pick));
    } else if (roll < 0.66) {
      messages.push({ role: "user", content: "Yes.", mentor: { approve: randomCall(domain, pick) } });
    } else if (roll < 0.7) {
      messages.push({ role: "assistant", content: "[SHIELD] Stopped the run. Rule S1: no." });
    } else if (roll < 0.75) {
      messages.push({ role: "user", content: "Go on.", mentor: { resume: true } });
    } else if (roll < 0.8) {
      messages.push({ role: "user", content: "Also this.", mentor: { task: domain.task(pick) } });
    } else if (roll < 0.81) {
      messages.push(
        pick([
          { role: "tool", tool_call_id: "nobody", content: "{}" },
          { role: "assistant", tool_calls: "not an array" },
          { role: "tool", content: "no id" },
        ]),
      );
    } else messages.push({ role: pick(["user", "assistant", "system"]), content: `text ${next()}` });
  }
  return messages;
}

/** `next` without the explored-state counts (searches are shared differently). */
function comparable(answer: NextAnswer): Omit<NextAnswer, "gameStates"> {
  const { gameStates: _, ...rest } = answer;
  return rest;
}

/** Everything an evaluator says about a conversation, or the error it reports. */
function answers(evaluator: Evaluator, messages: unknown[], calls: readonly ProposedCall[]): unknown {
  try {
    const monitor = evaluator.monitorOf(messages);
    return {
      next: comparable(evaluator.next(messages)),
      decisions: calls.map((call) => evaluator.decide(messages, call)),
      log: monitor.toJSON(),
      stopped: monitor.stopped,
      calls: evaluator.run(messages).calls,
    };
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    return { error: error.code, message: error.message };
  }
}

/** Asks the prefixes of `conversations` in a random order of `asks`, each compared with the reference. */
function check(domain: Domain, seed: number, conversations: Message[][], asks: number, limits = {}): void {
  const next = seededRandom(seed * 7919);
  const pick: Pick = (values) => values[Math.floor(next() * values.length)] as (typeof values)[number];
  const kept = new Evaluator(domain.policy, { runCache: limits });
  const reference = new Evaluator(domain.policy, { runCache: { maxMessages: 0 } });
  for (let ask = 0; ask < asks; ask++) {
    const messages = pick(conversations);
    const length = Math.floor(next() * (messages.length + 1));
    // Sometimes the same objects again, sometimes a copy (as a server parses each request afresh).
    const prefix = next() < 0.5 ? messages.slice(0, length) : structuredClone(messages.slice(0, length));
    const calls = [randomCall(domain, pick), randomCall(domain, pick)];
    assert.deepEqual(
      answers(kept, prefix, calls),
      answers(reference, prefix, calls),
      `seed ${seed}, ask ${ask}: ${JSON.stringify(prefix)}`,
    );
  }
}

describe("runs kept by message prefix answer as the run rebuilt from the whole history", () => {
  for (const [name, domain] of Object.entries(domains)) {
    test(`${name}: prefixes of random conversations in random order, and branches`, () => {
      for (let seed = 1; seed <= 25; seed++) {
        const first = conversation(domain, seed, 10 + (seed % 14));
        const cut = Math.floor(seededRandom(seed)() * first.length);
        const branch = conversation(domain, seed + 1000, 8, first.slice(0, cut));
        check(domain, seed, [first, branch], 30);
      }
    });

    test(`${name}: a cache of 6 messages, evicting all the time`, () => {
      for (let seed = 1; seed <= 12; seed++) {
        const conversations = [1, 2, 3].map((offset) => conversation(domain, seed * 10 + offset, 12));
        check(domain, seed, conversations, 30, { maxMessages: 6 });
        check(domain, seed, conversations, 10, { maxCharacters: 300 });
      }
    });
  }

  test("a monitor the cache gave is the caller's: stepping it changes no later answer", () => {
    const domain = domains.severities as Domain;
    const kept = new Evaluator(domain.policy);
    const reference = new Evaluator(domain.policy, { runCache: { maxMessages: 0 } });
    for (let seed = 1; seed <= 20; seed++) {
      const messages = conversation(domain, seed, 14);
      const next = seededRandom(seed);
      const pick: Pick = (values) => values[Math.floor(next() * values.length)] as (typeof values)[number];
      for (let length = 0; length <= messages.length; length++) {
        const prefix = messages.slice(0, length);
        let monitor: ReturnType<Evaluator["monitorOf"]>;
        try {
          monitor = kept.monitorOf(prefix);
        } catch {
          continue;
        }
        const call = randomCall(domain, pick);
        monitor.check(call);
        monitor.record(call, { kind: "json", value: { ok: true } });
        monitor.approve(call);
        monitor.stop("the caller's");
        const calls = [randomCall(domain, pick)];
        assert.deepEqual(
          answers(kept, prefix, calls),
          answers(reference, prefix, calls),
          `seed ${seed}, ${length}`,
        );
      }
    }
  });

  test("a message changed in place after it was asked about is read again", () => {
    const domain = domains.travel as Domain;
    const kept = new Evaluator(domain.policy);
    const reference = new Evaluator(domain.policy, { runCache: { maxMessages: 0 } });
    for (let seed = 1; seed <= 20; seed++) {
      const messages = conversation(domain, seed, 12);
      const next = seededRandom(seed);
      const pick: Pick = (values) => values[Math.floor(next() * values.length)] as (typeof values)[number];
      const calls = [randomCall(domain, pick)];
      answers(kept, messages, calls);
      for (const message of messages) {
        if (message.role === "tool" && typeof message.mentor === "object") {
          (message.mentor as { label?: unknown }).label = pick(["short", "long", "available", "full", null]);
        } else if (message.role === "tool") message.content = JSON.stringify(pick(domain.results));
        const args = (message.tool_calls as { function: { arguments: unknown } }[] | undefined)?.[0]
          ?.function;
        if (args && typeof args.arguments === "object")
          (args.arguments as Record<string, Value>).origin = pick(cities);
      }
      assert.deepEqual(answers(kept, messages, calls), answers(reference, messages, calls), `seed ${seed}`);
    }
  });

  test("the bound holds: at most maxMessages prefixes are kept", () => {
    const domain = domains.refunds as Domain;
    const kept = new Evaluator(domain.policy, { runCache: { maxMessages: 40 } });
    for (let seed = 1; seed <= 30; seed++) {
      const messages = conversation(domain, seed, 20).filter((message) => message.tool_call_id !== "nobody");
      for (let length = 1; length <= messages.length; length++) {
        try {
          kept.monitorOf(messages.slice(0, length));
        } catch {
          // malformed: the reference reports it
        }
        assert.ok(kept.cachedMessages <= 40, `${kept.cachedMessages} prefixes kept`);
      }
    }
    assert.ok(kept.cachedMessages > 0);
  });

  // Found by the test above (refundsByOrder, seed 1), and there before the run cache (it rebuilds
  // here): an evaluator asked one conversation answered a second one otherwise than a new evaluator.
  // The game listed the instances of a (customer, order) pair twice among those a refund of it
  // affects, and a distance after the refund, looked up by projected state, stepped them twice
  // (refunded twice: lost); the lookup hit only once another conversation had reached that state.
  // More orders of questions: test/evaluator/question-order.test.ts.
  test("the incremental template's answers do not depend on the questions asked before", () => {
    const domain = domains.refundsByOrder as Domain;
    const first = conversation(domain, 1, 11);
    const second = conversation(domain, 1001, 8, first.slice(0, 7)).slice(0, 12);
    const asked = new Evaluator(domain.policy, { runCache: { maxMessages: 0 } });
    asked.next(first.slice(0, 11));
    const fresh = new Evaluator(domain.policy, { runCache: { maxMessages: 0 } });
    assert.deepEqual(comparable(asked.next(second)), comparable(fresh.next(second)));
  });
});
