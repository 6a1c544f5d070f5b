import type { Policy } from "../policy/index.js";
import {
  groupBy,
  type Instance,
  type TaskCall,
  type TraceEntry,
  traceEntries,
  traceFromMessages,
} from "../run/index.js";
import { type Compliance, complianceOf } from "./compliance.js";
import type { Evaluator } from "./evaluator.js";
import type { Advice, Decision } from "./types.js";

/** One call of a finished conversation, judged on the trace before it. */
export interface VerifiedCall {
  call: { name: string; arguments: Record<string, unknown> };
  verdict: Decision["verdict"];
  violations: string[];
  warnings: string[];
  failClosed?: string;
  /** Arguments not declared, or of another type than declared (`Decision.argumentProblems`). */
  argumentProblems?: string[];
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
  /** AgentLTL's weighted score and FULL / PARTIAL / VIOLATION label over the rules and constraints. */
  compliance: Compliance;
  calls: VerifiedCall[];
  rules: VerifiedRule[];
}

/**
 * Judges a finished, grounded conversation after the fact: each call on the conversation as it
 * stood when the call was made — the calls, refusals, approvals and stops before it, and the task
 * calls of the user messages before it — as the shield would have judged it (`mentor check
 * --call` on that prefix), and every rule and binding at the end. `mentor verify` and the
 * conflict checker of `mentor formalize`.
 *
 * One monitor walks the trace: each made call is judged on the monitor as it stands, then
 * recorded, so the cost grows with the calls, not with their square (a monitor rebuilt for each
 * prefix replays every call before it). A request made later in the conversation starts the
 * monitor again from the grown task and replays what came before, as the server does when a
 * message adds to the task.
 */
export function verifyConversation(policy: Policy, evaluator: Evaluator, messages: unknown[]): Verification {
  const trace = traceFromMessages(messages, policy);
  const taskAt = trace.taskAt ?? [];
  /** The task as it stood before the made call at `position`. */
  const taskBefore = (position: number): TaskCall[] =>
    trace.task.filter((_, index) => (taskAt[index] ?? 0) <= position);
  let monitor = evaluator.monitor(taskBefore(0));
  const applied: TraceEntry[] = [];
  const grown = (task: TaskCall[]): void => {
    if (task.length === monitor.run.task.length) return;
    monitor = evaluator.monitor(task);
    for (const entry of applied) monitor.apply(entry);
  };
  const calls: VerifiedCall[] = [];
  const unmet = new Set<string>();
  // A rule is met or not by the whole run (below): a call's decision may also name rules that
  // only conflict with one another there, which the finished trace can still satisfy.
  const constraints = new Set(policy.constraints.map((constraint) => constraint.id));
  for (const entry of traceEntries(trace)) {
    if (entry.kind === "made") {
      grown(taskBefore(calls.length));
      const call = { name: entry.call.name, arguments: entry.call.arguments };
      const decision = monitor.decide(call);
      for (const finding of [...decision.violations, ...decision.warnings, ...decision.recorded])
        if (constraints.has(finding.rule)) unmet.add(finding.rule);
      calls.push(verifiedCall(call, decision));
    }
    monitor.apply(entry);
    applied.push(entry);
  }
  grown(trace.task);
  const run = monitor.run;
  // A call breaks an instance only if the instance's requests had been made by then: a dispense
  // before the patient reports an allergy does not break the allergy's rule (the call was judged
  // without it, and the replay re-armed the instance).
  const requestedAt = (taskCall: TaskCall | undefined): number =>
    taskCall === undefined ? 0 : (taskAt[trace.task.indexOf(taskCall)] ?? 0);
  const brokenByInstance = groupBy(
    run.broken.filter((entry) =>
      (run.instances[entry.instance] as Instance).bindings.every(
        (binding) => requestedAt(binding.taskCall) <= entry.call,
      ),
    ),
    (entry) => entry.instance,
  );
  const rules = run.instances.map((instance, index): VerifiedRule => {
    // A rule a call broke stays broken (the monitor re-armed it to judge later calls).
    const brokenBy = (brokenByInstance.get(index) ?? []).map((entry) => entry.call);
    const automaton = instance.rule.automaton;
    const colours =
      brokenBy.length > 0
        ? ["PERM_VIOL"]
        : [...new Set(run.beliefs.map((belief) => automaton.colour(belief[index] as number)))];
    return {
      rule: instance.rule.id,
      mode: instance.rule.mode,
      binding: instance.bindings.map((binding) => binding.values),
      colour: (colours.length === 1 ? colours[0] : colours) as string | string[],
      satisfied:
        brokenBy.length === 0 &&
        run.beliefs.every((belief) => automaton.isAccepting(belief[index] as number)),
      ...(brokenBy.length > 0 ? { brokenBy } : {}),
    };
  });
  const checks = [
    ...calls.map((call) => call.verdict === "allow"),
    ...rules.filter((rule) => rule.mode !== "record").map((rule) => rule.satisfied),
  ];
  for (const rule of rules) if (!rule.satisfied) unmet.add(rule.rule);
  const passed = checks.filter(Boolean).length;
  const violated =
    calls.some((call) => call.verdict === "block") ||
    rules.some((rule) => rule.mode === "block" && !rule.satisfied);
  return {
    score: checks.length === 0 ? 1 : passed / checks.length,
    violated,
    compliance: complianceOf(policy, unmet),
    calls,
    rules,
  };
}

function verifiedCall(call: VerifiedCall["call"], decision: Decision): VerifiedCall {
  return {
    call,
    verdict: decision.verdict,
    violations: decision.violations.map((finding) => finding.rule),
    warnings: decision.warnings.map((finding) => finding.rule),
    // Why a call was blocked without a broken rule, and what the shield would have advised.
    ...(decision.failClosed !== undefined ? { failClosed: decision.failClosed } : {}),
    ...(decision.argumentProblems ? { argumentProblems: decision.argumentProblems } : {}),
    ...(decision.advice ? { advice: decision.advice } : {}),
  };
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
