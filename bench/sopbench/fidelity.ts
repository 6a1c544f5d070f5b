import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { Evaluator, type NextAnswer } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy, type Policy, policyForSystem } from "../../src/policy/index.js";
import { benchSource, repoRoot } from "../paths.js";
import { domainPolicy, sopbenchDataDir, sopbenchDomains, sopbenchPython } from "./run.js";

/**
 * How faithful a SOPBench policy is, without a model: each task's oracle run (bench/sopbench/oracle.py:
 * the calls its action graph asks for, run on SOPBench's tools, then the goal) is put to the shield
 * call by call, as the server would judge it. The policy agrees with the task when it allows every
 * oracle call and allows the goal exactly when SOPBench says the action should succeed. A
 * "false allow" (the goal allowed where it must not be) is the shield letting a violation through;
 * a "false block" stops an agent that did everything right.
 */
export interface OracleRun {
  domain: string;
  action: string;
  index: number;
  should_succeed: boolean;
  system: string;
  user: string;
  calls: { name: string; arguments: Record<string, unknown>; content: string }[];
  goal: { name: string; arguments: Record<string, unknown>; available: boolean };
}

export interface TaskFidelity {
  task: string;
  shouldSucceed: boolean;
  /** `agree`, or how the policy disagrees with SOPBench's ground truth. */
  outcome: "agree" | "false block" | "false allow";
  /** The call the policy judged wrongly and the rules it named (none for a false allow). */
  call?: string;
  rules?: string[];
  /**
   * Where the run stands after the oracle calls (absent where one of them was blocked): whether
   * `done` is allowed, and whether the goal is progressing in `next` or the first open duty's next
   * call. A task whose action should fail is **trapped** where the run may not end (no excuse
   * meets the duty); one whose action should succeed, where it may not end and is not led to the
   * goal either.
   */
  end?: { doneAllowed: boolean; ledToGoal: boolean; trapped: boolean };
  /**
   * For a task whose action should succeed: at each oracle call (the goal included), what the
   * token shield would boost (`next`'s progressing tools). A step is **led** where it boosts only
   * tools the oracle still calls, **misled** where it boosts one the oracle no longer needs (an
   * excuse, a repeat, a lookup the task never asks for), **unled** where it boosts nothing.
   */
  steering?: { led: number; misled: number; unled: number; misleading: string[] };
  settings: Record<string, number | boolean>;
}

/**
 * Each oracle run judged call by call by the policy its system prompt sets; with `steering` (the
 * default), each step of a run that should succeed is also judged for what `next` would boost.
 */
export async function judgeOracleRuns(
  base: Policy,
  runs: readonly OracleRun[],
  { steering: withSteering = true }: { steering?: boolean } = {},
): Promise<TaskFidelity[]> {
  const parts = new Map<Policy, { evaluator: Evaluator; labeler: Labeler }>();
  const results: TaskFidelity[] = [];
  for (const run of runs) {
    const policy = policyForSystem(base, run.system);
    let judge = parts.get(policy);
    if (!judge) {
      judge = { evaluator: new Evaluator(policy), labeler: new Labeler(policy) };
      parts.set(policy, judge);
    }
    const { evaluator, labeler } = judge;
    const messages: Record<string, unknown>[] = [
      { role: "system", content: run.system },
      { role: "user", content: run.user },
    ];
    const task = `${run.action}/${run.index}`;
    const result = (outcome: TaskFidelity["outcome"], call?: string, rules?: string[]): TaskFidelity => ({
      task,
      shouldSucceed: run.should_succeed,
      outcome,
      ...(call !== undefined ? { call, rules: rules ?? [] } : {}),
      settings: policy.settings.values,
    });
    const grounded = async () => (await labeler.ground(messages)).messages;
    const decide = async (call: { name: string; arguments: Record<string, unknown> }) => {
      return evaluator.decide(await grounded(), {
        name: call.name,
        arguments: call.arguments as Record<string, Value>,
      });
    };
    let verdict: TaskFidelity | undefined;
    const steering = { led: 0, misled: 0, unled: 0, misleading: [] as string[] };
    const steer = (at: number, next: NextAnswer) => {
      const needed = new Set([...run.calls.slice(at).map((call) => call.name), run.goal.name]);
      const boosted = next.tools.filter((tool) => tool.class === "progressing").map((tool) => tool.name);
      const needless = boosted.filter((name) => !needed.has(name));
      if (boosted.length === 0) steering.unled++;
      else if (needless.length === 0) steering.led++;
      else {
        steering.misled++;
        steering.misleading.push(...needless.filter((name) => !steering.misleading.includes(name)));
      }
    };
    for (const [at, call] of run.calls.entries()) {
      if (withSteering && run.should_succeed) steer(at, evaluator.next(await grounded()));
      const decision = await decide(call);
      if (decision.verdict === "block") {
        verdict = result(
          "false block",
          call.name,
          decision.violations.map((finding) => finding.rule),
        );
        break;
      }
      const id = `oracle_${at}`;
      messages.push(
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id,
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.arguments) },
            },
          ],
        },
        { role: "tool", tool_call_id: id, content: call.content },
      );
    }
    // After the oracle calls: one `next` for the last step and for the end.
    const last = verdict ? undefined : evaluator.next(await grounded());
    if (last && withSteering && run.should_succeed) steer(run.calls.length, last);
    const end = last && endAfterOracle(last, run);
    if (!verdict && run.goal.available) {
      const decision = await decide(run.goal);
      const rules = decision.violations.map((finding) => finding.rule);
      if (decision.verdict === "block" && run.should_succeed)
        verdict = result("false block", run.goal.name, rules);
      else if (decision.verdict === "allow" && !run.should_succeed)
        verdict = result("false allow", run.goal.name);
    }
    const judged = verdict ?? result("agree");
    results.push({
      ...judged,
      ...(end ? { end } : {}),
      ...(withSteering && run.should_succeed ? { steering } : {}),
    });
  }
  return results;
}

/** Whether the run may end, or is led to the goal, where the oracle calls leave it. */
function endAfterOracle(next: NextAnswer, run: OracleRun): NonNullable<TaskFidelity["end"]> {
  const doneAllowed = next.done.allowed;
  const ledToGoal =
    next.tools.some((tool) => tool.name === run.goal.name && tool.class === "progressing") ||
    next.openDuties[0]?.fulfil?.name === run.goal.name;
  return { doneAllowed, ledToGoal, trapped: !doneAllowed && (!run.should_succeed || !ledToGoal) };
}

/** The oracle runs of a domain, written by SOPBench's own code (bench/sopbench/oracle.py). */
export function oracleRuns(domain: string, sopbenchDir: string, python: string): OracleRun[] {
  const work = mkdtempSync(join(tmpdir(), "mentor-sopbench-oracle-"));
  try {
    const out = join(work, `${domain}.jsonl`);
    execFileSync(
      python,
      [benchSource("sopbench", "oracle.py"), "--sopbench", sopbenchDir, "--domain", domain, "--out", out],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    return readFileSync(out, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as OracleRun);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Counts per outcome and the rules behind the disagreements, most frequent first. */
export function fidelitySummary(results: readonly TaskFidelity[]) {
  const count = (outcome: TaskFidelity["outcome"]) =>
    results.filter((result) => result.outcome === outcome).length;
  const rules = new Map<string, number>();
  for (const result of results)
    for (const rule of result.outcome === "false block" ? (result.rules ?? []) : [])
      rules.set(rule, (rules.get(rule) ?? 0) + 1);
  return {
    tasks: results.length,
    agree: count("agree"),
    falseBlocks: count("false block"),
    falseAllows: count("false allow"),
    trapped: results.filter((result) => result.end?.trapped).length,
    /**
     * Tasks whose action should succeed, and of them those the policy agrees with and the run is
     * led to the goal in (a goal the policy falsely blocks is no goal to lead to).
     */
    shouldSucceed: results.filter((result) => result.shouldSucceed).length,
    ledToGoal: results.filter(
      (result) => result.shouldSucceed && result.outcome === "agree" && result.end?.ledToGoal,
    ).length,
    /** Over the oracle steps of those the policy agrees with: led, misled and unled (`TaskFidelity.steering`). */
    steps: (["led", "misled", "unled"] as const).map((kind) =>
      results.reduce(
        (sum, result) => sum + (result.outcome === "agree" ? (result.steering?.[kind] ?? 0) : 0),
        0,
      ),
    ),
    blockingRules: [...rules.entries()].sort((left, right) => right[1] - left[1]),
  };
}

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("npm run bench:sopbench:fidelity --")
    .description(
      "How faithful the SOPBench policies are: every task's oracle run judged by the shield, no model",
    )
    .option(
      "--domains <names>",
      "SOPBench domains, comma-separated",
      (value) => value.split(","),
      sopbenchDomains,
    )
    .option("--data <dir>", "a SOPBench folder (env/, data/; default ../shared/bench-data/sopbench)")
    .option("--policy-dir <dir>", "where the sopbench-<domain> policies are (default policies/)")
    .option("--out <dir>", "write each domain's per-task results as <domain>.json");
  program.parse(argv);
  const options = program.opts<{ domains: string[]; data?: string; policyDir?: string; out?: string }>();
  const dataDir = sopbenchDataDir(options.data);
  const python = sopbenchPython(process.env.MENTOR_PYTHON ?? "python3");
  const policyDir = resolve(options.policyDir ?? join(repoRoot, "policies"));
  if (options.out) mkdirSync(options.out, { recursive: true });
  console.log(
    "| domain | tasks | agree | false blocks | false allows | trapped | led to the goal | steps led / misled / unled | rules behind the false blocks |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const domain of options.domains) {
    const policy = loadPolicy(domainPolicy(policyDir, domain).file);
    const results = await judgeOracleRuns(policy, oracleRuns(domain, dataDir, python));
    const summary = fidelitySummary(results);
    if (options.out)
      writeFileSync(join(options.out, `${domain}.json`), `${JSON.stringify(results, null, 1)}\n`);
    const rules = summary.blockingRules.map(([rule, count]) => `${rule} ${count}`).join(", ");
    console.log(
      `| ${domain} | ${summary.tasks} | ${summary.agree} | ${summary.falseBlocks} | ${summary.falseAllows} | ${summary.trapped} | ${summary.ledToGoal} of ${summary.shouldSucceed} | ${summary.steps.join(" / ")} | ${rules} |`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv);
