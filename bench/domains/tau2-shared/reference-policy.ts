import { Evaluator } from "../../../src/evaluator/index.js";
import type { Value } from "../../../src/expression/index.js";
import type { ToolCallEvent } from "../../../src/monitor/index.js";
import { loadPolicy } from "../../../src/policy/index.js";
import type { BenchTask } from "../domain.js";
import type { Tau2Environment } from "./domain.js";

/** A reference call the policy would block, with the rules it breaks. */
export interface BlockedReferenceCall {
  task: string;
  position: number;
  call: string;
  rules: string[];
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
  const blocked: BlockedReferenceCall[] = [];
  for (const task of tasks) {
    const environment = freshEnvironment();
    const calls: ToolCallEvent[] = [];
    for (const [position, action] of (task.reference ?? []).entries()) {
      const args = action.arguments as Record<string, Value>;
      const decision = evaluator.decide({ task: [], calls }, { name: action.name, arguments: args });
      if (decision.verdict === "block") {
        blocked.push({
          task: task.id,
          position: position + 1,
          call: action.name,
          rules: decision.violations.map((finding) => finding.rule),
        });
      }
      const result = environment.call(action.name, action.arguments);
      calls.push({
        id: `call_${position}`,
        name: action.name,
        arguments: args,
        outcome: { kind: "json", value: JSON.parse(result.output) as Value },
      });
    }
  }
  return blocked;
}
