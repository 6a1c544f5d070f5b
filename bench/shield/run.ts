/**
 * npm run bench:shield — policy compile time, game states, and decide / next latency for
 * synthetic policies of 5, 20 and 50 rules with 1, 10 and 100 bindings.
 *
 * The synthetic domain: tools step_0 … step_{T-1} on an item id; propositions s_k(item)
 * ("step k was called for the item") and ok_k(item) ("and it succeeded"); rules cycle through
 * precedence(s_k, s_k+1), response(s_k, s_k+1), absence(s_k, 3) and not-succession, plus one
 * duty per requested item. The conversation has two successful steps per item. `decide` and
 * `next` are timed end to end from the messages (the server rebuilds the run per request).
 */
import { performance } from "node:perf_hooks";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";

const RULE_COUNTS = [5, 20, 50];
const BINDING_COUNTS = [1, 10, 100];
const MAX_SAMPLES = 30;
const BUDGET_MS = 15_000;

function syntheticPolicy(ruleCount: number): string {
  const toolCount = Math.max(4, Math.ceil(ruleCount / 3));
  const lines: string[] = ["policy: synthetic", "manual:"];
  for (let rule = 0; rule < ruleCount; rule++) lines.push(`  S${rule}: Synthetic rule ${rule}.`);
  lines.push("tools:");
  for (let tool = 0; tool < toolCount; tool++) lines.push(`  step_${tool}: {parameters: {id: string}}`);
  lines.push(
    "task:",
    "  request: {parameters: {id: string}}",
    "entities:",
    "  item: {from: {request: {x: id}}}",
    "propositions:",
  );
  for (let tool = 0; tool < toolCount; tool++) {
    lines.push(`  s_${tool}(item): {tool: step_${tool}, when: "a.id == x"}`);
    lines.push(`  ok_${tool}(item): {tool: step_${tool}, when: "a.id == x", outcome: "o.ok == true"}`);
  }
  lines.push("rules:");
  for (let rule = 0; rule < ruleCount; rule++) {
    const a = rule % toolCount;
    const b = (rule + 1) % toolCount;
    const kind = rule % 4;
    if (rule === 0) lines.push(`  - {id: S0, template: existence, a: "ok_0(item)", applies_to: requested}`);
    else if (kind === 1)
      lines.push(`  - {id: S${rule}, template: precedence, a: "ok_${a}(item)", b: "s_${b}(item)"}`);
    else if (kind === 2)
      lines.push(`  - {id: S${rule}, template: response, a: "s_${a}(item)", b: "ok_${b}(item)", mode: warn}`);
    else if (kind === 3) lines.push(`  - {id: S${rule}, template: absence, a: "s_${a}(item)", n: 3}`);
    else lines.push(`  - {id: S${rule}, ltl: "G(ok_${a}(item) -> WX G !s_${a}(item))"}`);
  }
  return `${lines.join("\n")}\n`;
}

function conversation(bindingCount: number): Record<string, unknown>[] {
  const task = Array.from({ length: bindingCount }, (_, item) => ({
    name: "request",
    arguments: { id: `item${item}` },
  }));
  const messages: Record<string, unknown>[] = [
    { role: "user", content: "Process the items.", mentor: { task } },
  ];
  let id = 0;
  for (let item = 0; item < bindingCount; item++) {
    for (const tool of [0, 1]) {
      const callId = `call_${id++}`;
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: callId,
            type: "function",
            function: { name: `step_${tool}`, arguments: JSON.stringify({ id: `item${item}` }) },
          },
        ],
      });
      messages.push({ role: "tool", tool_call_id: callId, content: JSON.stringify({ ok: true }) });
    }
  }
  return messages;
}

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
  for (const bindingCount of BINDING_COUNTS) {
    const messages = conversation(bindingCount);
    const evaluator = new Evaluator(policy);
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
