import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BenchConversation, manualLeftOut } from "../../src/dashboard/bench-runs.js";
import { MentorError } from "../../src/errors/index.js";
import { readTurnRecord, type TraceEvent } from "../agent.js";
import { summarize } from "../metrics.js";
import { type BenchResults, type RunRecord, renderReport } from "../report.js";
import { summaryTable } from "../run.js";

/** One SOPBench run as saved in `runs/…/<action>-<index>-r<run>.json` (what the driver wrote, and where it ran). */
export interface SopbenchRun {
  domain: string;
  action: string;
  index: number;
  condition: string;
  envMode: "prompt" | "program";
  run: number;
  model: string;
  policy: string;
  /** Exceptions of failed attempts (SOPBench's loop retries them); no `evaluation` when all failed. */
  errors: string[];
  /** The server's `mentor` field of each response. */
  turns: unknown[];
  /** The latest attempt's messages as sent to the server and each request's `mentor` field (manual included). */
  conversation?: BenchConversation;
  /** Wall time of the model's turns. */
  seconds: number;
  /** SOPBench's messages (`sender` instead of `role`), as its evaluator read them. */
  interaction?: Record<string, unknown>[];
  /** env/evaluator.py's verdict on the run. */
  evaluation?: Record<string, unknown>;
  prompt?: string;
}

/** Where a run is saved under `out`. */
export function runFile(
  out: string,
  run: Pick<SopbenchRun, "domain" | "envMode" | "condition" | "action" | "index" | "run">,
): string {
  return join(
    out,
    "runs",
    run.domain,
    run.envMode,
    run.condition,
    `${run.action}-${run.index}-r${run.run}.json`,
  );
}

/** Every run saved under the `runs/` folder of each of `outs`. */
export function readRuns(outs: readonly string[]): SopbenchRun[] {
  const runs: SopbenchRun[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".json")) runs.push(JSON.parse(readFileSync(path, "utf8")) as SopbenchRun);
    }
  };
  for (const out of outs) {
    const dir = join(out, "runs");
    if (!existsSync(dir))
      throw new MentorError("MNT_ERR_BENCH_INPUT", `${out} has no runs/ folder of SOPBench runs`);
    walk(dir);
  }
  return runs;
}

/** The checks of SOPBench's verdict, each a reason when false. */
const checks = [
  "no_tool_call_error",
  "constraint_not_violated",
  "database_match",
  "action_called_correctly",
  "dirgraph_satisfied",
] as const;

/** A SOPBench run as the benchmark report reads runs (domain `sopbench-<domain>`, condition `<shield>` or `<shield>+program`). */
export function runRecord(run: SopbenchRun): RunRecord {
  const turns = run.turns.map(readTurnRecord);
  const sum = (pick: (turn: (typeof turns)[number]) => number) =>
    turns.reduce((total, turn) => total + pick(turn), 0);
  const trace: TraceEvent[] = [];
  for (const turn of turns) for (const blocked of turn.blocked) trace.push({ kind: "blocked", ...blocked });
  const messages = run.interaction ?? [];
  let ended = false;
  messages.forEach((message, position) => {
    const calls = (message.tool_calls ?? []) as {
      id: string;
      function: { name: string; arguments: string };
    }[];
    if (message.sender === "user" && position > 0)
      trace.push({ kind: "reply", text: String(message.content) });
    else if (
      calls.length === 0 &&
      typeof message.content === "string" &&
      message.sender !== "user" &&
      !("tool_call_id" in message)
    )
      trace.push({ kind: "answer", text: message.content });
    for (const call of calls) {
      const output = messages.find((other) => other.tool_call_id === call.id);
      if (output === undefined) {
        ended = true;
        trace.push({ kind: "answer", text: `(${call.function.name})` });
        continue;
      }
      const content = String(output.content);
      trace.push({
        kind: "call",
        name: call.function.name,
        arguments: parsed(call.function.arguments),
        output: content,
        error: /^\w+(Error|Exception): /.test(content),
      });
    }
  });
  const calls = trace.filter((event) => event.kind === "call").length;
  const blocked = sum((turn) => turn.blocked.length);
  const evaluation = run.evaluation;
  return {
    domain: `sopbench-${run.domain}`,
    condition: run.envMode === "program" ? `${run.condition}+program` : run.condition,
    task: `${run.action}/${run.index}`,
    run: run.run,
    seed: 0,
    solvable: true,
    pass: evaluation?.success === true,
    reasons: evaluation ? checks.filter((check) => evaluation[check] === false) : [],
    trace,
    proposed: calls + blocked,
    blocked,
    repaired: sum((turn) => turn.repaired),
    violations: sum((turn) => turn.violations),
    doneRefusals: sum((turn) => turn.doneRefusals),
    seconds: run.seconds,
    shieldSeconds: sum((turn) => turn.shieldSeconds),
    secondsPerCall: calls + blocked > 0 ? run.seconds / (calls + blocked) : 0,
    stopped: evaluation === undefined ? "error" : ended ? "answer" : "limit",
    ...(run.conversation
      ? {
          conversation: {
            ...run.conversation,
            messages: manualLeftOut(run.conversation.messages, run.policy),
          },
        }
      : {}),
    ...(evaluation === undefined ? { error: run.errors.join("; ") || "no verdict" } : {}),
  };
}

function parsed(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The runs as results.json and report.html in `out` (the benchmark's formats), scored with Pass^k for k = `runs`. */
export function saveResults(
  out: string,
  runs: readonly SopbenchRun[],
  meta: BenchResults["meta"],
): BenchResults {
  const records = runs.map(runRecord);
  const results: BenchResults = { meta, summary: summarize(records, meta.runs), runs: records };
  writeFileSync(join(out, "results.json"), `${JSON.stringify(results, null, 1)}\n`);
  writeFileSync(join(out, "report.html"), renderReport(results));
  return results;
}

/** The table of saved results and where they are, as the bench and its merge print them. */
export function savedSummary(out: string, results: BenchResults): string {
  return `${summaryTable(results.summary)}\n\nresults: ${join(out, "results.json")}\nreport:  ${join(out, "report.html")}\n`;
}
