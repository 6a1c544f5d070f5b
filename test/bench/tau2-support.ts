import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchTask, Domain, ExecutedCall } from "../../bench/domains/domain.js";
import type { Tau2Environment } from "../../bench/domains/tau2-shared/domain.js";
import {
  blockedReferenceCalls,
  type ReplayVerdict,
  replayCalls,
  requestCall,
} from "../../bench/domains/tau2-shared/reference-policy.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { lintConstraints, lintPolicy } from "../../src/game/index.js";
import type { Labeler } from "../../src/labeler/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { SolverClient } from "../../src/smt/index.js";
import { fixtureBenchData } from "../support/bench-data.js";

const repository = fileURLToPath(new URL("../../../", import.meta.url));

/** The tests' own benchmark data, in the benchmarks' formats. */
export const dataDir = fixtureBenchData;

export type Tau2Domain = Domain & {
  writeTools(dataDir: string): Set<string>;
  freshEnvironment(dataDir: string): Tau2Environment;
};

/** The message of a tool error output (`{"error": "..."}`). */
export function errorOf(output: string): string {
  return (JSON.parse(output) as { error: string }).error;
}

/** Runs calls on a fresh environment of the task, as the runner would, and returns the executed calls. */
export function execute(
  domain: Domain,
  task: BenchTask,
  calls: readonly { name: string; arguments: Record<string, unknown> }[],
): { environment: Tau2Environment; run: ExecutedCall[] } {
  const environment = domain.environment(task, dataDir) as Tau2Environment;
  const run = calls.map((call) => ({ ...call, ...environment.call(call.name, call.arguments) }));
  return { environment, run };
}

/** The reference with one action replaced (or removed, with `undefined`). */
export function referenceWith(
  task: BenchTask,
  position: number,
  replacement: { name: string; arguments: Record<string, unknown> } | undefined,
): { name: string; arguments: Record<string, unknown> }[] {
  const reference = [...(task.reference ?? [])];
  if (replacement) reference[position] = replacement;
  else reference.splice(position, 1);
  return reference;
}

/** The first task whose reference calls `tool` (found by content, not by id), and the call's position. */
export function taskCalling(
  tasks: readonly BenchTask[],
  tool: string,
): { task: BenchTask; position: number } {
  for (const task of tasks) {
    const position = (task.reference ?? []).findIndex((action) => action.name === tool);
    if (position >= 0) return { task, position };
  }
  throw new Error(`no task calls ${tool}`);
}

/** Lints the policy: no error, no warning. */
export function assertPolicyLintsClean(policyPath: string): void {
  const findings = lintPolicy(loadPolicy(policyPath));
  assert.deepEqual(
    findings.map((finding) => `${finding.severity} ${finding.kind}: ${finding.message}`),
    [],
  );
}

/** What `mentor lint` reports: the game's findings and, with constraints, the solver's. No error, no warning. */
export async function assertMentorLintClean(policyPath: string): Promise<void> {
  const policy = loadPolicy(policyPath);
  const findings = lintPolicy(policy);
  if (policy.constraints.length > 0) {
    const solver = new SolverClient({ timeoutMs: 20_000 });
    try {
      findings.push(...(await lintConstraints(policy, solver)));
    } finally {
      await solver.close();
    }
  }
  assert.deepEqual(
    findings.map((finding) => `${finding.severity} ${finding.kind}: ${finding.message}`),
    [],
  );
}

/**
 * Every solvable task's reference replayed with the oracle grounding as the task: no call is
 * blocked that is not blocked without a task (the duties never block a reference call), `done`
 * is allowed after the whole reference (every requested action done or exempted), and refused
 * after the reference without its writes (a run that stops before the requested actions).
 * Returns the verdicts of the full replays.
 */
export function assertOracleRunsFinish(domain: Tau2Domain, tasks: readonly BenchTask[]): ReplayVerdict[] {
  const policy = loadPolicy(domain.policyPath);
  const evaluator = new Evaluator(policy);
  const plain = new Evaluator(loadPolicy(domain.policyPath));
  const writes = domain.writeTools(dataDir);
  const isRequest = requestCall(policy);
  const verdicts: ReplayVerdict[] = [];
  for (const task of tasks.filter((candidate) => candidate.solvable)) {
    const grounding = domain.grounding?.(task) ?? [];
    const reference = task.reference ?? [];
    const full = replayCalls(evaluator, task, reference, grounding, domain.freshEnvironment(dataDir));
    const ungrounded = replayCalls(plain, task, reference, [], domain.freshEnvironment(dataDir));
    assert.deepEqual(
      full.blocked,
      ungrounded.blocked,
      `task ${task.id}: the grounding changes what is blocked`,
    );
    assert.equal(
      full.doneAllowed,
      true,
      `task ${task.id}: done refused, open: ${full.openDuties.join("; ")}`,
    );
    if (grounding.some(isRequest)) {
      const reads = reference.filter((action) => !writes.has(action.name));
      const stopped = replayCalls(evaluator, task, reads, grounding, domain.freshEnvironment(dataDir));
      assert.equal(stopped.doneAllowed, false, `task ${task.id}: done allowed before the requested writes`);
      assert.ok(stopped.openDuties.length > 0, `task ${task.id}`);
    }
    verdicts.push(full);
  }
  return verdicts;
}

/** `mentor check` loads the policy and answers for a conversation: exit 0 and the JSON answer. */
export function assertCheckLoads(
  policyPath: string,
  messages: unknown[],
  call: unknown,
): Record<string, unknown> {
  const directory = mkdtempSync(join(tmpdir(), "mentor-tau2-"));
  const file = join(directory, "messages.json");
  writeFileSync(file, JSON.stringify({ messages }));
  const cli = join(repository, "dist", "src", "cli", "main.js");
  const result = spawnSync(
    process.execPath,
    [cli, "check", "--policy", policyPath, "--messages", file, "--call", JSON.stringify(call)],
    { encoding: "utf8" },
  );
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/**
 * The policy's decisions on every reference trace. A blocked reference call is accepted only
 * when the reference omits a lookup the broken rule reads (`lookupFor(rule, action)` gives the
 * tool and, where it matters, the argument that must match): then the reference, not the policy,
 * skips a step the manual requires. Returns the blocked calls for the report.
 */
export function assertReferenceBlocksExplained(
  domain: Tau2Domain,
  tasks: readonly BenchTask[],
  lookupFor: (rule: string) => { tool: string[]; key?: string },
): ReturnType<typeof blockedReferenceCalls> {
  const blocked = blockedReferenceCalls(domain.policyPath, tasks, () => domain.freshEnvironment(dataDir));
  for (const block of blocked) {
    const task = tasks.find((candidate) => candidate.id === block.task) as BenchTask;
    const reference = task.reference ?? [];
    const action = reference[block.position - 1] as { arguments: Record<string, unknown> };
    for (const rule of block.rules) {
      const { tool, key } = lookupFor(rule);
      const earlier = reference
        .slice(0, block.position - 1)
        .some(
          (candidate) =>
            tool.includes(candidate.name) &&
            (key === undefined || candidate.arguments[key] === action.arguments[key]),
        );
      assert.equal(
        earlier,
        false,
        `task ${block.task}: reference call ${block.position} (${block.call}) is blocked by ${rule} although the reference makes the lookup the rule reads`,
      );
    }
  }
  return blocked;
}

/** The task calls the policy's rules ground from a text, as `name(field values)` lines (none if ungrounded). */
export function groundedCalls(labeler: Labeler): (text: string) => Promise<string[]> {
  return async (text) => {
    const result = await labeler.groundTask(text, true);
    return "value" in result
      ? (result.value as { name: string; arguments: Record<string, unknown> }[]).map(
          (call) => `${call.name}(${Object.values(call.arguments).join(", ")})`,
        )
      : [];
  };
}
