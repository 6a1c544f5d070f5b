/**
 * npm run bench:patterns [-- --baseline-kb 4,8,16] — the shipped policies' patterns on hostile
 * texts (issue 36): a user message grounded, or a tool output labeled, by the rules labeler
 * (`Labeler` with `only: "rules"`), at three sizes per text, so the time per character shows
 * whether reading is linear. The baseline, measured in the same run at small sizes: the same
 * patterns as regexes on the whole text (how the labeler ran them before they read windows), whose
 * time grows with the square of the size.
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy, type Policy, patternWindow, type TextPattern } from "../../src/policy/index.js";
import { shippedPolicy } from "../paths.js";

interface Case {
  policy: string;
  /** A user message, or the output of this tool. */
  tool?: string;
  unit: string;
  repetitions: number[];
}

const cases: Case[] = [
  { policy: "travel", unit: "Aaaa ", repetitions: [5_000, 10_000, 20_000] },
  { policy: "travel", tool: "check_distance", unit: "1,", repetitions: [50_000, 100_000, 200_000] },
  { policy: "travel", tool: "check_seats", unit: "1 seats ", repetitions: [3_000, 6_000, 12_000] },
  { policy: "tau2-mock", unit: "delete tasks ", repetitions: [2_000, 4_000, 8_000] },
  { policy: "tau2-retail", unit: "#W1234567 and ", repetitions: [600, 1_200, 2_400] },
  { policy: "tau2-retail", unit: "a", repetitions: [8_000, 16_000, 32_000] },
  { policy: "tau2-airline", unit: "ABC123, ", repetitions: [1_000, 2_000, 4_000] },
  { policy: "tau2-airline", unit: "cancel ", repetitions: [1_200, 2_400, 4_800] },
];

const { values } = parseArgs({ options: { "baseline-kb": { type: "string", default: "4,8,16" } } });
const baselineSizes = (values["baseline-kb"] as string).split(",").map((kb) => Number(kb) * 1024);

function messagesFor(testCase: Case, text: string): unknown[] {
  if (!testCase.tool) return [{ role: "user", content: text }];
  return [
    { role: "user", content: "Hello." },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: testCase.tool, arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "c1", content: text },
  ];
}

/** The patterns the labeler runs on the text: every task pattern, or the tool's rules. */
function patternsFor(policy: Policy, testCase: Case): TextPattern[] {
  if (testCase.tool)
    return (policy.tools.get(testCase.tool)?.labeler.rules ?? []).flatMap((rule) =>
      "pattern" in rule.test ? [rule.test.pattern] : [],
    );
  return [...policy.taskCalls.values()].flatMap((spec) => spec.grounding?.patterns ?? []);
}

/** The patterns as regexes on the whole text: all matches of a task pattern, the first of a rule. */
function wholeTextMs(patterns: TextPattern[], text: string, all: boolean): number {
  const started = performance.now();
  for (const pattern of patterns) {
    const regex = new RegExp(pattern.source, `${pattern.flags}g`);
    if (all) [...text.matchAll(regex)];
    else regex.exec(text);
  }
  return performance.now() - started;
}

const policies = new Map<string, Policy>();
const policyOf = (name: string): Policy => {
  let policy = policies.get(name);
  if (!policy) {
    policy = loadPolicy(shippedPolicy(name));
    policies.set(name, policy);
  }
  return policy;
};

console.log(
  `bench:patterns — windows of ${patternWindow} characters; times in ms (this machine, one run each)`,
);
for (const testCase of cases) {
  const policy = policyOf(testCase.policy);
  const labeler = new Labeler(policy, { only: "rules" });
  const what = `${testCase.policy} ${testCase.tool ? `${testCase.tool} output` : "user message"} ${JSON.stringify(testCase.unit)}`;
  const windowed: string[] = [];
  for (const repetitions of testCase.repetitions) {
    const text = testCase.unit.repeat(repetitions);
    const started = performance.now();
    await labeler.ground(messagesFor(testCase, text));
    const ms = performance.now() - started;
    windowed.push(
      `×${repetitions} (${(text.length / 1024).toFixed(0)} KB) ${ms.toFixed(0)} ms = ${((ms * 1000) / text.length).toFixed(1)} µs/char`,
    );
  }
  const patterns = patternsFor(policy, testCase);
  const baseline = baselineSizes.map((size) => {
    const text = testCase.unit.repeat(Math.ceil(size / testCase.unit.length)).slice(0, size);
    return `${size / 1024} KB ${wholeTextMs(patterns, text, !testCase.tool).toFixed(0)} ms`;
  });
  console.log(`${what}\n  windows:    ${windowed.join("; ")}\n  whole text: ${baseline.join("; ")}`);
}
