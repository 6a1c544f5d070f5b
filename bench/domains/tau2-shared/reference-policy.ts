import { Evaluator } from "../../../src/evaluator/index.js";
import type { Value } from "../../../src/expression/index.js";
import { Labeler } from "../../../src/labeler/index.js";
import { loadPolicy, type Policy } from "../../../src/policy/index.js";
import type { TaskCall, ToolCallEvent } from "../../../src/run/index.js";
import type { BenchTask, Domain, Environment } from "../domain.js";
import type { Tau2Environment } from "./domain.js";

/** A reference call the policy would block, with the rules it breaks. */
export interface BlockedReferenceCall {
  task: string;
  position: number;
  call: string;
  rules: string[];
}

/** The policy's verdicts on one replayed run: the blocked calls, and whether `done` is allowed after it. */
export interface ReplayVerdict {
  task: string;
  blocked: BlockedReferenceCall[];
  /** `next(...).done.allowed` after the last call: no block-mode duty left open. */
  doneAllowed: boolean;
  /** The duties still open after the last call (rule and binding). */
  openDuties: string[];
}

/**
 * The policy's decisions on the reference traces: each task's reference actions replayed on a
 * fresh database, every call judged on the trace before it as the shield would judge it.
 */
export function blockedReferenceCalls(
  policyFile: string,
  tasks: readonly BenchTask[],
  freshEnvironment: () => Tau2Environment,
): BlockedReferenceCall[] {
  const evaluator = new Evaluator(loadPolicy(policyFile));
  return tasks.flatMap(
    (task) => replayCalls(evaluator, task, task.reference ?? [], [], freshEnvironment()).blocked,
  );
}

/**
 * Replays `calls` (a task's reference, or part of it) on a fresh database with `grounding` as the
 * task (the pseudo calls of the opening message): every call judged on the trace before it, and
 * `done` judged after the last.
 */
export function replayCalls(
  evaluator: Evaluator,
  task: BenchTask,
  calls: readonly { name: string; arguments: Record<string, unknown> }[],
  grounding: readonly { name: string; arguments: Record<string, unknown> }[],
  environment: Environment,
): ReplayVerdict {
  const blocked: BlockedReferenceCall[] = [];
  const trace = { task: grounding as TaskCall[], calls: [] as ToolCallEvent[] };
  for (const [position, action] of calls.entries()) {
    const args = action.arguments as Record<string, Value>;
    const decision = evaluator.decide(
      { task: trace.task, calls: [...trace.calls] },
      { name: action.name, arguments: args },
    );
    if (decision.verdict === "block") {
      blocked.push({
        task: task.id,
        position: position + 1,
        call: action.name,
        rules: decision.violations.map((finding) => finding.rule),
      });
    }
    const result = environment.call(action.name, action.arguments);
    trace.calls.push({
      id: `call_${position}`,
      name: action.name,
      arguments: args,
      outcome: { kind: "json", value: parsedOutput(result.output) },
    });
  }
  const next = evaluator.next(trace);
  return {
    task: task.id,
    blocked,
    doneAllowed: next.done.allowed,
    openDuties: next.openDuties.map((duty) => `${duty.rule}${duty.binding ? ` for ${duty.binding}` : ""}`),
  };
}

/** A tool's output as JSON, or as the text itself when it is not JSON (the mock's "Transfer successful"). */
function parsedOutput(output: string): Value {
  try {
    return JSON.parse(output) as Value;
  } catch {
    return output;
  }
}

type Call = { name: string; arguments: Record<string, unknown> };

/** How the policy's patterns ground an opening, next to the oracle's grounding of the task. */
export interface GroundingComparison {
  task: string;
  patterns: Call[];
  oracle: Call[];
  /** `agree`: the same calls (none on both sides included); `partial`: some of the oracle's and
   * nothing else; `extra`: a call the oracle does not give; `none`: nothing where the oracle gives calls. */
  kind: "agree" | "partial" | "extra" | "none";
}

/**
 * The policy's patterns (the labeler's rules only, no model) on every task's opening, compared
 * with the domain's oracle grounding, which is read from the reference's writes. An opening no
 * pattern matches grounds nothing; any other grounding error is thrown.
 */
export async function compareGrounding(
  domain: Domain,
  tasks: readonly BenchTask[],
): Promise<GroundingComparison[]> {
  const policy = loadPolicy(domain.policyPath);
  const labeler = new Labeler(policy, { only: "rules" });
  const isRequest = requestCall(policy);
  const comparisons: GroundingComparison[] = [];
  for (const task of tasks) {
    const result = await labeler.groundTask(task.opening, true);
    if ("error" in result && !/no task pattern matches/.test(result.error))
      throw new Error(`task ${task.id}: ${result.error}`);
    const patterns = ("value" in result ? (result.value as Call[]) : []).filter(isRequest);
    const oracle = (domain.grounding?.(task) ?? []).filter(isRequest);
    const [found, truth] = [callKeys(patterns), callKeys(oracle)];
    const kind =
      found.join() === truth.join()
        ? "agree"
        : found.length === 0
          ? "none"
          : found.every((key) => truth.includes(key))
            ? "partial"
            : "extra";
    comparisons.push({ task: task.id, patterns, oracle, kind });
  }
  return comparisons;
}

/**
 * Whether a task call is a request: a call without patterns holds the message as written
 * (tau2-retail's `opening`) and asks for nothing.
 */
export function requestCall(policy: Policy): (call: { name: string }) => boolean {
  return (call) => (policy.taskCalls.get(call.name)?.grounding?.patterns.length ?? 1) > 0;
}

/** How many comparisons of each kind. */
export function countKinds(
  comparisons: readonly GroundingComparison[],
): Record<GroundingComparison["kind"], number> {
  const counts = { agree: 0, partial: 0, extra: 0, none: 0 };
  for (const comparison of comparisons) counts[comparison.kind] += 1;
  return counts;
}

/** A set of task calls as comparable keys. */
function callKeys(calls: readonly Call[]): string[] {
  return [...new Set(calls.map((call) => canonical(call)))].sort();
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}
