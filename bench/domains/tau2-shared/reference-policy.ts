import { Evaluator } from "../../../src/evaluator/index.js";
import type { Value } from "../../../src/expression/index.js";
import type { TaskCall, ToolCallEvent } from "../../../src/monitor/index.js";
import { loadPolicy } from "../../../src/policy/index.js";
import type { BenchTask, Environment } from "../domain.js";
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
