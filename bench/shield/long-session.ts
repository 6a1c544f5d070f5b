/**
 * The long-session workload of bench:shield and bench:ltl-harness-latency: ltl-harness's refund
 * rulebook re-expressed as a mentor policy (bench/conformance/ltl-harness-refund.policy.yaml), in
 * sessions of a fixed number of proposed calls. Every request is the whole conversation so far,
 * parsed afresh from its JSON as the server receives it (the parse is not timed: it is the HTTP
 * layer's). `decide` and `next` are timed on two evaluators, so that each sees each conversation
 * once, as a server sees each request once. A call the evaluator blocks stays in the conversation
 * with the shield's `[SHIELD] Blocked` feedback as its result (what a client of the prompt shield
 * sends back); an allowed call with its result.
 */
import { performance } from "node:perf_hooks";
import { seededRandom } from "../../src/base/random.js";
import { Evaluator, type EvaluatorOptions } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { loadPolicy, type Policy } from "../../src/policy/index.js";
import { blockedText } from "../../src/shield/index.js";
import { benchSource } from "../paths.js";

export const REFUND_TOOLS = [
  "look_up_order",
  "request_receipt",
  "verify_receipt",
  "issue_refund",
  "write_audit_note",
  "escalate_to_human",
  "reject_request",
] as const;

export interface RefundCall {
  tool: string;
  result: Record<string, Value>;
}

export function refundPolicy(): Policy {
  return loadPolicy(benchSource("conformance", "ltl-harness-refund.policy.yaml"));
}

/**
 * `count` sessions of `length` calls, drawn as bench:ltl-harness draws them: tools uniformly,
 * except that a session starts with the lookup half the time and a refund is followed by the
 * audit note half the time; a receipt verifies half the time.
 */
export function refundSessions(count: number, length: number, seed: number): RefundCall[][] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => refundSession(next, length));
}

/** One session of `length` calls drawn from `next`, as `refundSessions` describes. */
export function refundSession(next: () => number, length: number): RefundCall[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const session: RefundCall[] = [];
  for (let index = 0; index < length; index++) {
    const previous = session[index - 1]?.tool;
    const tool =
      index === 0 && next() < 0.5
        ? "look_up_order"
        : previous === "issue_refund" && next() < 0.5
          ? "write_audit_note"
          : pick(REFUND_TOOLS);
    session.push({ tool, result: tool === "verify_receipt" ? { verified: next() < 0.5 } : { ok: true } });
  }
  return session;
}

/** One proposed call: where it was in its session, how long each question took (ms), and the verdict. */
export interface CallTiming {
  session: number;
  position: number;
  decideMs: number;
  nextMs: number;
  blocked: boolean;
}

/** The two evaluators of a workload (see the module comment), shared by its sessions as a server's is. */
export interface Evaluators {
  deciding: Evaluator;
  answering: Evaluator;
}

export function evaluators(policy: Policy, options: EvaluatorOptions = {}): Evaluators {
  return { deciding: new Evaluator(policy, options), answering: new Evaluator(policy, options) };
}

/** Times `decide` and `next` on every proposed call of the sessions; the conversation grows as the module comment says. */
export function timeSessions(
  { deciding, answering }: Evaluators,
  sessions: readonly RefundCall[][],
  onRequest?: (position: number, body: string) => void,
): CallTiming[] {
  const timings: CallTiming[] = [];
  sessions.forEach((session, sessionIndex) => {
    const messages: Record<string, unknown>[] = [
      { role: "system", content: "You are the refund agent. Follow the refund rulebook." },
      { role: "user", content: `I would like a refund for order ${1000 + sessionIndex}.` },
    ];
    session.forEach((call, position) => {
      const body = JSON.stringify(messages);
      onRequest?.(position, body);
      const forNext = JSON.parse(body) as unknown[];
      const forDecide = JSON.parse(body) as unknown[];
      const proposed = { name: call.tool, arguments: {} };
      let start = performance.now();
      answering.next(forNext);
      const nextMs = performance.now() - start;
      start = performance.now();
      const decision = deciding.decide(forDecide, proposed);
      const decideMs = performance.now() - start;
      const blocked = decision.verdict === "block";
      timings.push({ session: sessionIndex, position, decideMs, nextMs, blocked });
      const id = `call_${sessionIndex}_${position}`;
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: call.tool, arguments: "{}" } }],
      });
      messages.push({
        role: "tool",
        tool_call_id: id,
        content: blocked ? blockedText(decision) : JSON.stringify(call.result),
      });
    });
  });
  return timings;
}

export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}

/** p50 and p95 of a question's times (ms) at the positions `from` to `to` of every session. */
export function positionFigures(
  timings: readonly CallTiming[],
  question: "decideMs" | "nextMs",
  from: number,
  to: number,
): { p50: number; p95: number; count: number } {
  const values = timings
    .filter((timing) => timing.position >= from && timing.position <= to)
    .map((timing) => timing[question]);
  return { p50: percentile(values, 0.5), p95: percentile(values, 0.95), count: values.length };
}
