import { fileURLToPath } from "node:url";
import { seededRandom } from "../../src/base/random.js";
import type { ProposedCall } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { loadPolicy, type Policy } from "../../src/policy/index.js";

/** One of the values, drawn by a seeded generator. */
export type Pick = <T>(values: readonly T[]) => T;

/** A policy and the values random conversations over it draw from. */
export interface Domain {
  policy: Policy;
  task: (pick: Pick) => { name: string; arguments: Record<string, Value> }[];
  /** Argument values by parameter name (null for the others). */
  values: Record<string, readonly Value[]>;
  /** Results of JSON tools. */
  results: readonly Value[];
}

/** A call of one of the policy's tools, each argument drawn from the domain's values. */
export function randomCall(domain: Domain, pick: Pick): ProposedCall {
  const tool = pick([...domain.policy.tools.values()]);
  const args: Record<string, Value> = {};
  for (const parameter of tool.parameters)
    args[parameter.name] = pick(domain.values[parameter.name] ?? [null]);
  return { name: tool.name, arguments: args };
}

const fixture = (path: string) => loadPolicy(fileURLToPath(new URL(`../../../${path}`, import.meta.url)));

const cities = ["Toronto", "Chicago", "Ottawa"];
/**
 * Domains of random conversations: the travel policy, refunds (one and two entities), every
 * severity (ops), and the ltl-harness refund policy.
 */
export const conversationDomains: Record<string, Domain> = {
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
    policy: fixture("test/run/fixtures/refunds-by-order.yaml"),
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

export type Message = Record<string, unknown>;

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
 * answered), with everything reading a conversation looks at: parallel calls, answers late,
 * answered twice or never, refusals, approvals, stops, resumes, task calls added later, ids used
 * twice, malformed messages. Ids are unique to the seed, except where one is used twice on purpose.
 */
export function randomConversation(
  domain: Domain,
  seed: number,
  length: number,
  start: Message[] = [],
): Message[] {
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
