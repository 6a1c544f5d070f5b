import { Run, traceFromMessages } from "../monitor/index.js";
import type { Policy } from "../policy/index.js";
import type { Evaluator } from "./evaluator.js";
import type { Advice, Decision } from "./types.js";

/** One call of a finished conversation, judged on the trace before it. */
export interface VerifiedCall {
  call: { name: string; arguments: Record<string, unknown> };
  verdict: Decision["verdict"];
  violations: string[];
  warnings: string[];
  failClosed?: string;
  advice?: Advice;
}

/** One automaton instance (rule × binding) at the end of a finished conversation. */
export interface VerifiedRule {
  rule: string;
  mode: string;
  binding: unknown[];
  colour: string | string[];
  satisfied: boolean;
  brokenBy?: number[];
}

/** What `mentor verify` prints for a conversation (without the grounding notes). */
export interface Verification {
  /** Allowed calls and satisfied rules (not `record` ones) over all of them; 1 with nothing to check. */
  score: number;
  /** A call was blocked, or a blocking rule is not satisfied at the end. */
  violated: boolean;
  calls: VerifiedCall[];
  rules: VerifiedRule[];
}

/**
 * Judges a finished, grounded conversation after the fact: each call on the trace before it
 * (refusals, approvals and stops before it too) as the shield would have judged it, and every
 * rule and binding at the end. `mentor verify` and the conflict checker of `mentor formalize`.
 */
export function verifyConversation(policy: Policy, evaluator: Evaluator, messages: unknown[]): Verification {
  const trace = traceFromMessages(messages, policy);
  const calls = trace.calls.map((call, index): VerifiedCall => {
    const notes = (trace.notes ?? []).filter((note) => note.position <= index);
    const decision: Decision = evaluator.decide(
      { task: trace.task, calls: trace.calls.slice(0, index), notes },
      { name: call.name, arguments: call.arguments },
    );
    return {
      call: { name: call.name, arguments: call.arguments },
      verdict: decision.verdict,
      violations: decision.violations.map((finding) => finding.rule),
      warnings: decision.warnings.map((finding) => finding.rule),
      // Why a call was blocked without a broken rule, and what the shield would have advised.
      ...(decision.failClosed !== undefined ? { failClosed: decision.failClosed } : {}),
      ...(decision.advice ? { advice: decision.advice } : {}),
    };
  });
  const run = Run.fromTrace(policy, trace);
  const rules = run.instances.map((instance, index): VerifiedRule => {
    // A rule a call broke stays broken (the monitor re-armed it to judge later calls).
    const brokenBy = run.broken.filter((entry) => entry.instance === index).map((entry) => entry.call);
    const colours =
      brokenBy.length > 0
        ? ["PERM_VIOL"]
        : [...new Set(run.beliefs.map((belief) => instance.rule.automaton.colour(belief[index] as number)))];
    return {
      rule: instance.rule.id,
      mode: instance.rule.mode,
      binding: instance.bindings.map((binding) => binding.values),
      colour: (colours.length === 1 ? colours[0] : colours) as string | string[],
      satisfied: run.satisfies(index),
      ...(brokenBy.length > 0 ? { brokenBy } : {}),
    };
  });
  const checks = [
    ...calls.map((call) => call.verdict === "allow"),
    ...rules.filter((rule) => rule.mode !== "record").map((rule) => rule.satisfied),
  ];
  const passed = checks.filter(Boolean).length;
  const violated =
    calls.some((call) => call.verdict === "block") ||
    rules.some((rule) => rule.mode === "block" && !rule.satisfied);
  return { score: checks.length === 0 ? 1 : passed / checks.length, violated, calls, rules };
}

/**
 * The rules a verified conversation breaks: those a blocked call violates, and the blocking ones
 * left unsatisfied at the end (an open duty, a permanent violation). In the order first seen.
 */
export function brokenRules(verification: Verification): string[] {
  const broken = new Set<string>();
  for (const call of verification.calls)
    if (call.verdict === "block") for (const rule of call.violations) broken.add(rule);
  for (const rule of verification.rules) if (rule.mode === "block" && !rule.satisfied) broken.add(rule.rule);
  return [...broken];
}
