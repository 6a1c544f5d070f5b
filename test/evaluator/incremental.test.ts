import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { syntheticPolicy } from "../../bench/shield/synthetic.js";
import { seededRandom } from "../../src/base/random.js";
import { Evaluator, type NextAnswer, type ProposedCall } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { loadPolicy, type Policy, parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// The incremental evaluator (the run's cached template, stepping only the components a call
// touches, memoized classes, advice judged from projected component states, duties read through
// unchanged components) must answer exactly like the reference computation (the run rebuilt
// after every call, every component summed) on random runs.

const travel = loadPolicy(fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url)));

// The refunds rulebook of test/evaluator/refunds.test.ts, per customer, with a warn rule and
// the joint trap (existence with not-succession).
const refunds = loadPolicy(
  fileURLToPath(new URL("../../../test/evaluator/fixtures/refunds.yaml", import.meta.url)),
);

interface Domain {
  policy: Policy;
  task: (pick: <T>(values: readonly T[]) => T) => { name: string; arguments: Record<string, Value> }[];
  values: Record<string, readonly Value[]>;
  /** Results of JSON tools (a text that is not JSON leaves the outcome unknown). */
  results: readonly Value[];
}

const cities = ["Toronto", "Chicago", "Ottawa", "Montreal"];
const domains: Record<string, Domain> = {
  travel: {
    policy: travel,
    task: (pick) =>
      Array.from({ length: pick([1, 1, 2]) }, () => ({
        name: "request_travel",
        arguments: { origin: pick(cities), destination: pick(cities), urgent: pick([true, false]) },
      })),
    values: {
      origin: cities,
      destination: cities,
      travel_class: ["economy", "business", "first"],
    },
    results: [{ status: "confirmed" }, { status: "failed" }],
  },
  refunds: {
    policy: refunds,
    task: (pick) =>
      Array.from({ length: pick([1, 2]) }, () => ({
        name: "open_case",
        arguments: { customer: pick(["c1", "c2", "c3"]) },
      })),
    values: { customer: ["c1", "c2", "c3"], amount: [20, 100, 250] },
    results: [{ status: "confirmed" }, { status: "failed" }],
  },
  // A proposition over two entities: a refund names a customer and an order (test/run/two-entities.test.ts).
  refundsByOrder: {
    policy: loadPolicy(
      fileURLToPath(new URL("../../../test/run/fixtures/refunds-by-order.yaml", import.meta.url)),
    ),
    task: (pick) => [
      {
        name: "request_refund",
        arguments: { customer_id: pick(["c1", "c2"]), order_id: pick(["o1", "o2"]) },
      },
    ],
    values: { customer_id: ["c1", "c2"], order_id: ["o1", "o2", "o3"] },
    results: [{ status: "confirmed" }, { status: "failed" }],
  },
  // bench:shield's policy (12 rules over 4 tools, one automaton per rule and item): the
  // workload the incremental computation was tuned on, with items the task does not request.
  synthetic: {
    policy: parsePolicy(syntheticPolicy(12), "synthetic.yaml"),
    task: (pick) =>
      Array.from({ length: pick([1, 2, 3]) }, (_, item) => ({
        name: "request",
        arguments: { id: `item${item}` },
      })),
    values: { id: ["item0", "item1", "item2", "item3"] },
    results: [{ ok: true }, { ok: false }],
  },
};

function randomCall(policy: Policy, domain: Domain, pick: <T>(values: readonly T[]) => T): ProposedCall {
  const tool = pick([...policy.tools.values()]);
  const args: Record<string, Value> = {};
  for (const parameter of tool.parameters)
    args[parameter.name] = pick(domain.values[parameter.name] ?? [null]);
  return { name: tool.name, arguments: args };
}

function randomOutcome(
  domain: Domain,
  name: string,
  pick: <T>(values: readonly T[]) => T,
): { json?: Value; label?: string | null; text?: string } {
  const tool = domain.policy.tools.get(name);
  if (tool?.output === "text") return { label: pick([...Object.keys(tool.labels ?? {}), null]) };
  return pick([...domain.results.map((json) => ({ json })), { text: "not json" }]);
}

/** `next` without the explored-state counts (the two computations share their searches differently). */
function comparable(answer: NextAnswer): Omit<NextAnswer, "gameStates"> {
  const { gameStates: _, ...rest } = answer;
  return rest;
}

describe("incremental evaluator agrees with the reference computation", () => {
  for (const [name, domain] of Object.entries(domains)) {
    for (const strict of [false, true]) {
      test(`${name}${strict ? ", strict" : ""}: 60 random runs`, () => {
        for (let seed = 1; seed <= 60; seed++) {
          const next = seededRandom(seed * (strict ? 7919 : 1));
          const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
          const fast = new Evaluator(domain.policy, { strict });
          const reference = new Evaluator(domain.policy, { strict, incremental: false });
          const conversation = new Conversation(domain.task(pick));
          const length = Math.floor(next() * 7);
          for (let position = 0; position <= length; position++) {
            const where = `seed ${seed}, after ${position} calls`;
            assert.deepEqual(
              comparable(fast.next(conversation.messages)),
              comparable(reference.next(conversation.messages)),
              `next, ${where}`,
            );
            for (let attempt = 0; attempt < 4; attempt++) {
              const call = randomCall(domain.policy, domain, pick);
              assert.deepEqual(
                fast.decide(conversation.messages, call),
                reference.decide(conversation.messages, call),
                `decide ${JSON.stringify(call)}, ${where}`,
              );
            }
            const made = randomCall(domain.policy, domain, pick);
            conversation.call(made.name, made.arguments, randomOutcome(domain, made.name, pick));
          }
        }
      });
    }
  }
});
