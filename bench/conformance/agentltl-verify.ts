/**
 * The examples part of `npm run bench:agentltl`: AgentLTL's `verify_trace` and `mentor verify`
 * on the traces of bench/conformance/agentltl-examples.json, each suite's constraints with their
 * weights on AgentLTL's side (agentltl_driver.py) and as a mentor policy
 * (agentltl-examples/*.policy.yaml) on mentor's. Per trace: the score, the label and which
 * constraints fail, from each.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readMessagesFile } from "../../src/cli/input.js";
import { Evaluator, verifyConversation } from "../../src/evaluator/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy, type Policy } from "../../src/policy/index.js";
import { benchSource } from "../paths.js";

type TraceCall = string | Record<string, unknown>;

interface Suite {
  name: string;
  policy: string;
  constraints: { name: string; formula: string; weight: number }[];
  traces: Record<string, TraceCall[]>;
}

/** One side's judgement of a trace. */
export interface Judgement {
  score: number;
  label: string;
  /** The constraints (rule ids) not met, in the suite's order. */
  failed: string[];
}

export interface ExampleComparison {
  suite: string;
  trace: string;
  agentltl: Judgement;
  mentor: Judgement;
  same: boolean;
}

/** The examples file's suites, each checked against its policy: the same ids with the same weights. */
function readSuites(fail: (message: string) => never): { suite: Suite; policy: Policy }[] {
  const file = benchSource("conformance", "agentltl-examples.json");
  const { suites } = JSON.parse(readFileSync(file, "utf8")) as { suites: Suite[] };
  return suites.map((suite) => {
    const policy = loadPolicy(benchSource("conformance", "agentltl-examples", suite.policy));
    const ours = [...policy.rules, ...policy.constraints].map(({ id, weight }) => `${id}:${weight}`);
    const theirs = suite.constraints.map(({ name, weight }) => `${name}:${weight}`);
    if (ours.join(",") !== theirs.join(","))
      fail(`${suite.policy} does not state ${file}'s ${suite.name} constraints: ${ours} vs ${theirs}`);
    return { suite, policy };
  });
}

function agentltlJudgements(
  python: string,
  suites: Suite[],
  fail: (message: string) => never,
): Record<string, Record<string, { score: number; label: string; passed: Record<string, boolean> }>> {
  const result = spawnSync(python, [benchSource("conformance", "agentltl_driver.py")], {
    input: JSON.stringify({ suites }),
    encoding: "utf8",
  });
  if (result.status !== 0)
    fail(
      `the AgentLTL driver failed on the examples:\n${result.stderr.trim().split("\n").slice(-8).join("\n")}`,
    );
  return JSON.parse(result.stdout);
}

/** `mentor verify -p POLICY -m TRACE` in process: the trace file read as the CLI reads it, grounded, verified. */
async function mentorJudgement(policy: Policy, traceFile: string): Promise<Judgement> {
  const { messages } = await new Labeler(policy).ground(readMessagesFile(traceFile));
  const { compliance } = verifyConversation(policy, new Evaluator(policy), messages);
  return {
    score: compliance.score,
    label: compliance.label,
    failed: compliance.violated.map(({ id }) => id),
  };
}

/** Every example's judgement by AgentLTL and by mentor. */
export async function compareExamples(
  python: string,
  fail: (message: string) => never,
): Promise<ExampleComparison[]> {
  const suites = readSuites(fail);
  const theirs = agentltlJudgements(
    python,
    suites.map(({ suite }) => suite),
    fail,
  );
  const dir = mkdtempSync(join(tmpdir(), "mentor-agentltl-examples-"));
  const comparisons: ExampleComparison[] = [];
  try {
    for (const { suite, policy } of suites) {
      for (const [trace, calls] of Object.entries(suite.traces)) {
        const file = join(dir, "trace.json");
        const toolCalls = calls.map((call) => (typeof call === "string" ? { tool_name: call } : call));
        writeFileSync(file, JSON.stringify({ tool_calls: toolCalls }));
        const mentor = await mentorJudgement(policy, file);
        const judged = theirs[suite.name]?.[trace];
        if (judged === undefined) fail(`the AgentLTL driver did not judge ${suite.name}/${trace}`);
        const agentltl: Judgement = {
          score: judged.score,
          label: judged.label,
          failed: suite.constraints.map(({ name }) => name).filter((name) => judged.passed[name] === false),
        };
        const same =
          agentltl.score === mentor.score &&
          agentltl.label === mentor.label &&
          agentltl.failed.join(",") === mentor.failed.join(",");
        comparisons.push({ suite: suite.name, trace, agentltl, mentor, same });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return comparisons;
}

/** The comparison as lines: one per example, then the count that agree. */
export function examplesReport(comparisons: readonly ExampleComparison[], header: string): string[] {
  const judged = ({ score, label }: Judgement) => `${label} ${score}`;
  const lines = comparisons.map(({ suite, trace, agentltl, mentor, same }) => {
    const verdict = same
      ? "yes"
      : `**no**: fail AgentLTL [${agentltl.failed.join(", ")}], mentor [${mentor.failed.join(", ")}]`;
    return `| ${suite} | ${trace} | ${judged(agentltl)} | ${judged(mentor)} | ${verdict} |`;
  });
  const agree = comparisons.filter(({ same }) => same).length;
  return [
    header,
    "",
    "| suite | trace | AgentLTL | mentor | same |",
    "| --- | --- | --- | --- | --- |",
    ...lines,
    "",
    `${agree}/${comparisons.length} examples agree (score, label and the constraints that fail).`,
  ];
}
