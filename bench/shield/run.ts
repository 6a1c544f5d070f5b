/**
 * npm run bench:shield — policy compile time, game states, and decide / next latency for
 * synthetic policies (synthetic.ts) of 5, 20 and 50 rules with 1, 10 and 100 bindings. `decide`
 * and `next` are timed end to end from the messages (the server rebuilds the run per request).
 */
import { performance } from "node:perf_hooks";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { conversation, syntheticPolicy } from "./synthetic.js";

const RULE_COUNTS = [5, 20, 50];
const BINDING_COUNTS = [1, 10, 100];
const MAX_SAMPLES = 30;
const BUDGET_MS = 15_000;

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}

function timeSamples(body: (sample: number) => void): number[] {
  const times: number[] = [];
  const started = performance.now();
  for (let sample = 0; sample < MAX_SAMPLES && performance.now() - started < BUDGET_MS; sample++) {
    const start = performance.now();
    body(sample);
    times.push(performance.now() - start);
  }
  return times;
}

console.log(`mentor bench:shield — node ${process.version}, ${new Date().toISOString()}`);
console.log(`samples: up to ${MAX_SAMPLES} per figure within ${BUDGET_MS / 1000} s; times in ms\n`);
const header =
  "| rules | bindings | instances | compile | decide p50 | decide p95 | next p50 | next p95 | game states known | samples |";
console.log(header);
console.log(header.replace(/[^|]/g, "-"));
for (const ruleCount of RULE_COUNTS) {
  const text = syntheticPolicy(ruleCount);
  const compileStart = performance.now();
  const policy = parsePolicy(text, "synthetic.yaml");
  for (const rule of policy.rules) rule.automaton.compile();
  const compileMs = performance.now() - compileStart;
  // One evaluator per policy, as the server keeps: its game states are known across the rows.
  const evaluator = new Evaluator(policy);
  for (const bindingCount of BINDING_COUNTS) {
    const messages = conversation(bindingCount);
    const toolCount = policy.tools.size;
    const decideTimes = timeSamples((sample) => {
      evaluator.decide(messages, {
        name: `step_${sample % toolCount}`,
        arguments: { id: `item${(sample * 7) % bindingCount}` },
      });
    });
    let states = 0;
    const nextTimes = timeSamples(() => {
      states = evaluator.next(messages).gameStates.known;
    });
    const instances = evaluator.run(messages).instances.length;
    console.log(
      `| ${ruleCount} | ${bindingCount} | ${instances} | ${compileMs.toFixed(1)} | ${percentile(decideTimes, 0.5).toFixed(2)} | ${percentile(decideTimes, 0.95).toFixed(2)} | ${percentile(nextTimes, 0.5).toFixed(2)} | ${percentile(nextTimes, 0.95).toFixed(2)} | ${states} | ${decideTimes.length}/${nextTimes.length} |`,
    );
  }
}
console.log("\ntargets: decide p50 ≤ 0.5 ms at 20 rules × 10 bindings; compile ≤ 1 s");

// How state counts grow: each configuration from a fresh policy and evaluator (the table above shares one per
// rule count), after next() and decide on every tool for every item. Joint states: the product
// of the instances' automaton sizes, the space a game over whole states would face.
console.log(
  "\nstate counts per configuration (fresh policy; game states: component states with a known distance)\n",
);
const growthHeader = "| rules | bindings | instances | joint states (bound) | game states known |";
console.log(growthHeader);
console.log(growthHeader.replace(/[^|]/g, "-"));
const knownByRules = new Map<number, number[]>();
for (const ruleCount of RULE_COUNTS) {
  const counts: number[] = [];
  knownByRules.set(ruleCount, counts);
  for (const bindingCount of BINDING_COUNTS) {
    const policy = parsePolicy(syntheticPolicy(ruleCount), "synthetic.yaml");
    const messages = conversation(bindingCount);
    const evaluator = new Evaluator(policy);
    for (const tool of policy.tools.keys())
      for (let item = 0; item < bindingCount; item++)
        evaluator.decide(messages, { name: tool, arguments: { id: `item${item}` } });
    const known = evaluator.next(messages).gameStates.known;
    const instances = evaluator.run(messages).instances;
    const joint = instances.reduce(
      (sum, instance) => sum + Math.log10(instance.rule.automaton.stateCount),
      0,
    );
    counts.push(known);
    console.log(
      `| ${ruleCount} | ${bindingCount} | ${instances.length} | 10^${joint.toFixed(1)} | ${known} |`,
    );
  }
}
const growth = (counts: number[]): string =>
  counts.map((count) => `×${(count / (counts[0] as number)).toFixed(2)}`).join(" ");
console.log(
  `\ngame states, ${BINDING_COUNTS.join(" → ")} bindings: ${RULE_COUNTS.map((rules) => `${rules} rules ${growth(knownByRules.get(rules) ?? [])}`).join("; ")}`,
);
const byRules = RULE_COUNTS.map((rules) => knownByRules.get(rules)?.[0] ?? 0);
console.log(
  `game states, ${RULE_COUNTS.join(" → ")} rules (1 binding): ${byRules.join(" → ")} (×${byRules.map((count) => (count / (byRules[0] as number)).toFixed(1)).join(" ×")})`,
);
