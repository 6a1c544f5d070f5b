/**
 * npm run bench:agentltl — first AgentLTL's `verify_trace` and `mentor verify` on the examples of
 * agentltl-examples.json (agentltl-verify.ts): the same score and label on each, or exit 1.
 * Then AgentLTL's runtime Enforcer and mentor's monitor on the same random
 * runs: one constraint per severity (agentltl_driver.py; bench/conformance/agentltl-ops.policy.yaml
 * is the same set as a mentor policy), three escalation settings, single calls, chains and
 * resumes. No model. Per step, the action each gives (in AgentLTL's words), whether an override
 * let the call past and whether an escalation fired; every difference is counted by kind, and
 * each kind is explained in bench/conformance/README.md. Not part of `npm test`.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { seededRandom } from "../../src/base/random.js";
import { createMonitor, type Decision, type ProposedCall } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { benchSource, repoRoot } from "../paths.js";
import { compareExamples, examplesReport } from "./agentltl-verify.js";
import { ensureVenv } from "./venv.js";

/** The AgentLTL release the figures are for (pip-installed into the venv if missing). */
const PINNED = "0.2.1";

/** AgentLTL's Enforcer settings, and the same as mentor's `escalate:` of rule S4. */
const configurations = [
  {
    name: "cumulative, 3 attempts, then HARD_STOP",
    agentltl: { max_soft_attempts: 3, soft_block_mode: "cumulative", escalate_to: "HARD_STOP" },
    mentor: "{after: 2, counting: cumulative, to: stop}",
  },
  {
    name: "consecutive, 3 attempts, then HARD_STOP",
    agentltl: { max_soft_attempts: 3, soft_block_mode: "consecutive", escalate_to: "HARD_STOP" },
    mentor: "{after: 2, counting: consecutive, to: stop}",
  },
  {
    name: "hybrid, 2 in a row or 4 in all, then ASK",
    agentltl: {
      max_soft_attempts: 4,
      soft_block_mode: "hybrid",
      max_consecutive_soft_attempts: 2,
      escalate_to: "ASK",
    },
    mentor: "{after: 1, counting: hybrid, total: 3, to: ask}",
  },
] as const;

interface Call {
  tool: string;
  args: Record<string, string | number>;
}
type Step = { kind: "call"; call: Call } | { kind: "chain"; calls: Call[] } | { kind: "resume" };

/** What the driver says of one step (see agentltl_driver.py). */
interface AgentLTLOutcome {
  action: string;
  constraints?: string[];
  escalated?: boolean;
  override?: string | null;
  latched?: boolean;
  index?: number | null;
}

/** One step's outcome in AgentLTL's words, from either side. */
interface Outcome {
  action: string;
  rule?: string;
  override: boolean;
  escalated: boolean;
  index?: number;
}

const CALLS: Call[] = [
  { tool: "drop_table", args: { name: "users" } },
  { tool: "run_tests", args: {} },
  { tool: "deploy", args: {} },
  { tool: "pay", args: { amount: 20 } },
  { tool: "send_external", args: { to: "press" } },
  { tool: "refund", args: { amount: 500 } },
  { tool: "refund", args: { amount: 501 } },
  { tool: "restart", args: {} },
];

const { values: options } = parseArgs({
  options: {
    runs: { type: "string", default: "300" },
    steps: { type: "string", default: "16" },
    seed: { type: "string", default: "1" },
    chains: { type: "string", default: "0.15" },
    venv: { type: "string" },
    python: { type: "string", default: "python3" },
    json: { type: "string" },
    table: { type: "string" },
    "examples-only": { type: "boolean", default: false },
  },
});

function fail(message: string): never {
  process.stderr.write(`bench:agentltl: ${message}\n`);
  process.exit(2);
}

/**
 * Seeded runs of 1 to `maxSteps` steps: a resume (5 %), a chain of two (`chains`, default 15 %),
 * else a call.
 * Calls are drawn uniformly, except `drop_table` a third as often (it stops the run).
 */
function generate(runs: number, maxSteps: number, seed: number, chains: number): Step[][] {
  const next = seededRandom(seed);
  const weighted = CALLS.flatMap((call) => (call.tool === "drop_table" ? [call] : [call, call, call]));
  const pick = (): Call => weighted[Math.floor(next() * weighted.length)] as Call;
  return Array.from({ length: runs }, () => {
    const length = 1 + Math.floor(next() * maxSteps);
    return Array.from({ length }, (): Step => {
      const roll = next();
      if (roll < 0.05) return { kind: "resume" };
      if (roll < 0.05 + chains) return { kind: "chain", calls: [pick(), pick()] };
      return { kind: "call", call: pick() };
    });
  });
}

function runAgentLTL(python: string, config: object, runs: Step[][]): AgentLTLOutcome[][] {
  const wire = runs.map((run) =>
    run.map((step) =>
      step.kind === "call"
        ? { kind: "call", tool: step.call.tool, args: step.call.args }
        : step.kind === "chain"
          ? { kind: "chain", calls: step.calls.map((call) => ({ tool: call.tool, args: call.args })) }
          : step,
    ),
  );
  const result = spawnSync(python, [benchSource("conformance", "agentltl_driver.py")], {
    input: JSON.stringify({ config, runs: wire }),
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (result.status !== 0)
    fail(`the AgentLTL driver failed:\n${result.stderr.trim().split("\n").slice(-8).join("\n")}`);
  return JSON.parse(result.stdout) as AgentLTLOutcome[][];
}

const proposed = (call: Call): ProposedCall => ({ name: call.tool, arguments: call.args });

/** A mentor decision in AgentLTL's words: an `override` refusal is its `warn`, an allowed call `allow`. */
function mentorOutcome(decision: Decision, index?: number): Outcome {
  const overridden = (decision.overridden ?? []).length > 0;
  const escalated = (decision.escalated ?? []).length > 0;
  const at = index === undefined ? {} : { index };
  if (decision.verdict === "allow") return { action: "allow", override: overridden, escalated: false, ...at };
  const byOverride =
    decision.action === "block" &&
    (decision.overridable ?? []).length > 0 &&
    decision.violations.length === decision.overridable?.length;
  const rule = decision.stopped?.rules[0] ?? decision.violations[0]?.rule;
  return {
    action: byOverride ? "warn" : decision.action,
    ...(rule !== undefined ? { rule } : {}),
    override: false,
    escalated: escalated && !decision.stopped,
    ...at,
  };
}

function agentltlOutcome(outcome: AgentLTLOutcome): Outcome {
  const rule = outcome.constraints?.[0];
  return {
    action: outcome.action,
    ...(rule !== undefined ? { rule } : {}),
    override: outcome.override !== null && outcome.override !== undefined,
    escalated: outcome.escalated === true,
    ...(outcome.index !== null && outcome.index !== undefined ? { index: outcome.index } : {}),
  };
}

function runMentor(policyText: string, runs: Step[][]): Outcome[][] {
  const policy = parsePolicy(policyText, benchSource("conformance", "agentltl-ops.policy.yaml"));
  return runs.map((run) => {
    const monitor = createMonitor(policy);
    return run.map((step): Outcome => {
      if (step.kind === "resume") {
        monitor.resume();
        return { action: "resumed", override: false, escalated: false };
      }
      if (step.kind === "call") {
        const decision = monitor.check(proposed(step.call));
        if (decision.verdict === "allow") monitor.record(proposed(step.call), { kind: "json", value: {} });
        return mentorOutcome(decision);
      }
      const decisions = monitor.checkChain(step.calls.map(proposed));
      const refused = decisions.findIndex((decision) => decision.verdict === "block");
      if (refused >= 0) return mentorOutcome(decisions[refused] as Decision, refused);
      for (const call of step.calls) monitor.record(proposed(call), { kind: "json", value: {} });
      const override = decisions.some((decision) => (decision.overridden ?? []).length > 0);
      return { action: "allow", override, escalated: false };
    });
  });
}

/** A difference by the pair of actions. */
function kindOf(step: Step, ours: Outcome, theirs: Outcome): string {
  const what = step.kind === "chain" ? "chain" : "call";
  return `${what}: AgentLTL ${theirs.action}${theirs.override ? " (override)" : ""}, mentor ${ours.action}${ours.override ? " (override)" : ""}`;
}

/**
 * The known causes a difference can have, read from AgentLTL's outcomes before it
 * (bench/conformance/README.md): (a) an allowed call that did not run — an earlier call of a
 * chain AgentLTL refused further on, this one or one before — ends an override's chance and consecutive counts in
 * AgentLTL, not in mentor; (b) a call an override let through does not reset AgentLTL's
 * consecutive counts; mentor resets them at every made call.
 */
function causesOf(before: readonly Outcome[], theirs: Outcome): string[] {
  const causes: string[] = [];
  const allowedUnrun = (outcome: Outcome) => outcome.index !== undefined && outcome.index > 0;
  if (before.some(allowedUnrun) || allowedUnrun(theirs)) causes.push("a");
  if (theirs.action !== "warn" && before.some((outcome) => outcome.override)) causes.push("b");
  return causes;
}

const runs = Number(options.runs);
const steps = Number(options.steps);
const seed = Number(options.seed);
const venv = resolve(
  options.venv ?? process.env.MENTOR_AGENTLTL_VENV ?? join(homedir(), ".cache/mentor/venv-agentltl"),
);
const python = ensureVenv(venv, options.python as string, "agentltl", PINNED, fail);
const examples = await compareExamples(python, fail);
const examplesLines = examplesReport(
  examples,
  `AgentLTL ${PINNED} verify_trace vs mentor verify on the examples (bench/conformance/agentltl-examples.json):`,
);
process.stdout.write(`${examplesLines.join("\n")}\n\n`);
const examplesDiffer = examples.filter(({ same }) => !same).length;
if (examplesDiffer > 0)
  process.stderr.write(
    `bench:agentltl: ${examplesDiffer} example(s) judged differently by AgentLTL and mentor\n`,
  );
if (options["examples-only"]) process.exit(examplesDiffer > 0 ? 1 : 0);
const template = readFileSync(benchSource("conformance", "agentltl-ops.policy.yaml"), "utf8");
const chains = Number(options.chains);
const generated = generate(runs, steps, seed, chains);
interface Row {
  name: string;
  steps: number;
  agree: number;
  /** Agreeing steps by AgentLTL's action (an override and an escalation apart). */
  seen: Record<string, number>;
  differences: Record<string, number>;
}
const rows: Row[] = [];
const differenceExamples: Record<string, unknown> = {};
let unexplained = 0;
for (const configuration of configurations) {
  const theirs = runAgentLTL(python, configuration.agentltl, generated);
  const ours = runMentor(
    template.replace("escalate: ESCALATE", `escalate: ${configuration.mentor}`),
    generated,
  );
  const row: Row = { name: configuration.name, steps: 0, agree: 0, seen: {}, differences: {} };
  generated.forEach((run, runIndex) => {
    // After the first difference the two runs' states may differ: only that step is compared.
    for (const [index, step] of run.entries()) {
      const left = ours[runIndex]?.[index] as Outcome;
      const right = agentltlOutcome(theirs[runIndex]?.[index] as AgentLTLOutcome);
      row.steps++;
      const same =
        left.action === right.action &&
        left.override === right.override &&
        left.escalated === right.escalated &&
        left.index === right.index &&
        (right.rule === undefined || left.rule === right.rule);
      if (same) {
        row.agree++;
        const seen = right.override
          ? "override"
          : right.escalated
            ? `escalated ${right.action}`
            : right.action;
        row.seen[seen] = (row.seen[seen] ?? 0) + 1;
        continue;
      }
      const causes = causesOf((theirs[runIndex] ?? []).slice(0, index).map(agentltlOutcome), right);
      const kind = `${kindOf(step, left, right)} [${causes.length > 0 ? causes.join("+") : "unexplained"}]`;
      if (causes.length === 0) unexplained++;
      row.differences[kind] = (row.differences[kind] ?? 0) + 1;
      differenceExamples[kind] ??= {
        configuration: configuration.name,
        run: run.slice(0, index + 1),
        mentor: left,
        agentltl: right,
      };
      row.steps += run.length - index - 1;
      break;
    }
  });
  rows.push(row);
}

const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], {
  cwd: repoRoot,
  encoding: "utf8",
}).stdout.trim();
const lines = [
  `AgentLTL ${PINNED} vs mentor ${commit}: ${runs} runs of 1–${steps} steps (seed ${seed}, chains ${chains}), per escalation setting.`,
  "A run is compared up to its first difference (the rest of it is not counted as agreeing);",
  "each difference is tagged with its known causes (a), (b) (bench/conformance/README.md), or unexplained.",
  "",
  "| escalation setting | steps | compared | agree | agreeing steps by action | differences (the first of a run) |",
  "| --- | --- | --- | --- | --- | --- |",
  ...rows.map((row) => {
    const differences = Object.entries(row.differences)
      .map(([kind, count]) => `${kind}: ${count}`)
      .join("; ");
    const compared = row.agree + Object.values(row.differences).reduce((sum, count) => sum + count, 0);
    const seen = Object.entries(row.seen)
      .sort(([left], [right]) => left.localeCompare(right))
      .map(([action, count]) => `${action} ${count}`)
      .join(", ");
    return `| ${row.name} | ${row.steps} | ${compared} | ${row.agree} | ${seen} | ${differences || "none"} |`;
  }),
];
process.stdout.write(`${lines.join("\n")}\n`);
if (options.table) writeFileSync(options.table, `${[...examplesLines, "", ...lines].join("\n")}\n`);
if (options.json)
  writeFileSync(
    options.json,
    `${JSON.stringify({ verify: examples, rows, examples: differenceExamples }, null, 2)}\n`,
  );
if (unexplained > 0)
  process.stderr.write(`bench:agentltl: ${unexplained} difference(s) with no known cause (see --json)\n`);
if (unexplained > 0 || examplesDiffer > 0) process.exit(1);
