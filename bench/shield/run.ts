/**
 * npm run bench:shield [-- --part synthetic|long|hostile|mask] — policy compile time, game states, and
 * decide / next latency for synthetic policies (synthetic.ts) of 5, 20 and 50 rules with 1, 10
 * and 100 bindings; then long sessions (long-session.ts): decide / next per call in 10-call and
 * 100-call sessions of a refund policy, with the runs kept by message prefix and, as the baseline
 * measured in the same run, rebuilt from the whole conversation per request. `decide` and `next`
 * are timed end to end from the messages. Then requests that repeat themselves (hostile.ts): the
 * token shield's preparation of a turn for N copies of one request, and N requests of one route.
 * Then the token mask of one decoding step of a tool name, and of an exchange's item lists, on
 * real vocabularies (mask.ts).
 */
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Evaluator, type EvaluatorOptions } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { hostileRequests } from "./hostile.js";
import {
  type CallTiming,
  evaluators,
  percentile,
  positionFigures,
  refundPolicy,
  refundSessions,
  timeSessions,
} from "./long-session.js";
import { maskSteps } from "./mask.js";
import { conversation, syntheticPolicy } from "./synthetic.js";

const RULE_COUNTS = [5, 20, 50];
const BINDING_COUNTS = [1, 10, 100];
const MAX_SAMPLES = 30;
const BUDGET_MS = 15_000;

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

const { values: flags } = parseArgs({ options: { part: { type: "string", default: "all" } } });
if (!["all", "synthetic", "long", "hostile", "mask"].includes(flags.part as string)) {
  process.stderr.write(
    `bench:shield: --part must be all, synthetic, long, hostile or mask, got ${flags.part}\n`,
  );
  process.exit(2);
}
console.log(`mentor bench:shield — node ${process.version}, ${new Date().toISOString()}`);
if (flags.part === "all" || flags.part === "synthetic") synthetic();
if (flags.part === "all" || flags.part === "long") longSessions();
if (flags.part === "all" || flags.part === "hostile") {
  const [one, five, fifteen] = loadavg().map((load) => load.toFixed(2));
  console.log(
    `\nrequests that repeat themselves (travel policy, rules labeler, token shield sets); load average ${one} ${five} ${fifteen} (${cpus().length} cores)\n`,
  );
  await hostileRequests([1, 8, 16, 24, 32]);
}
if (flags.part === "all" || flags.part === "mask") {
  const [one, five, fifteen] = loadavg().map((load) => load.toFixed(2));
  console.log(
    `\nthe token mask of a tool-name step and of an exchange's item lists on real vocabularies; load average ${one} ${five} ${fifteen} (${cpus().length} cores)\n`,
  );
  maskSteps();
}

function synthetic(): void {
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
}

/** Long sessions (issue 20): per-call cost against the length of the conversation. */
function longSessions(): void {
  const policy = refundPolicy();
  const [one, five, fifteen] = loadavg().map((load) => load.toFixed(2));
  console.log(
    `\nlong sessions: ltl-harness's refund rulebook as a mentor policy (bench/conformance/ltl-harness-refund.policy.yaml); every request is the whole conversation, parsed afresh; load average ${one} ${five} ${fifteen} (${cpus().length} cores)\n`,
  );
  const modes: { name: string; options: EvaluatorOptions }[] = [
    { name: "kept by prefix", options: {} },
    { name: "rebuilt per request", options: { runCache: { maxMessages: 0 } } },
  ];
  const workloads = [
    { length: 10, count: 200, seed: 11 },
    { length: 100, count: 30, seed: 12 },
  ];
  const results = new Map<string, CallTiming[]>();
  for (const mode of modes) {
    for (const { length, count, seed } of workloads) {
      const pair = evaluators(policy, mode.options);
      timeSessions(pair, refundSessions(5, length, seed + 1000)); // warm-up: JIT and game states
      results.set(`${mode.name}/${length}`, timeSessions(pair, refundSessions(count, length, seed)));
    }
  }
  const micro = (ms: number) => (ms * 1000).toFixed(0);
  const header = `| sessions | calls | question | ${modes.map((mode) => `${mode.name} p50 / p95 (µs)`).join(" | ")} | samples |`;
  console.log(header);
  console.log(header.replace(/[^|]/g, "-"));
  const rows: [number, number, number][] = [
    [10, 0, 9],
    [100, 0, 9],
    [100, 80, 99],
  ];
  for (const question of ["decideMs", "nextMs"] as const) {
    for (const [length, from, to] of rows) {
      const figures = modes.map((mode) =>
        positionFigures(results.get(`${mode.name}/${length}`) ?? [], question, from, to),
      );
      console.log(
        `| ${length}-call | ${from}–${to} | ${question === "decideMs" ? "decide" : "next"} | ${figures.map((entry) => `${micro(entry.p50)} / ${micro(entry.p95)}`).join(" | ")} | ${figures[0]?.count} |`,
      );
    }
  }
  const kept = [...(results.get("kept by prefix/10") ?? []), ...(results.get("kept by prefix/100") ?? [])];
  const blocked = kept.filter((timing) => timing.blocked).length;
  console.log(
    `\n${kept.length} calls proposed, ${blocked} blocked (their refusals stay in the conversation)`,
  );
  console.log(
    "targets (runs kept by prefix; all calls of both workloads, and calls 80–99 against 0–9 of the 100-call sessions):",
  );
  const long = results.get("kept by prefix/100") ?? [];
  for (const question of ["decideMs", "nextMs"] as const) {
    const name = question === "decideMs" ? "decide" : "next";
    const p50 = percentile(
      kept.map((timing) => timing[question]),
      0.5,
    );
    const p95 = percentile(
      kept.map((timing) => timing[question]),
      0.95,
    );
    const ratio = positionFigures(long, question, 80, 99).p50 / positionFigures(long, question, 0, 9).p50;
    const mark = (met: boolean) => (met ? "met" : "NOT met");
    console.log(
      `  ${name}: p50 ${micro(p50)} µs (≤ 50: ${mark(p50 <= 0.05)}), p95 ${micro(p95)} µs (≤ 200: ${mark(p95 <= 0.2)}), p50 at calls 80–99 / 0–9 ×${ratio.toFixed(2)} (≤ 1.3: ${mark(ratio <= 1.3)})`,
    );
  }
  knownPrefixCost(policy);
  // Later calls are blocked more often (a blocked call is judged with advice, and its refusal is
  // read again by the next request): the same ratio among allowed calls that follow an allowed one.
  const allowedAfterAllowed = long.filter(
    (timing, index) => !timing.blocked && timing.position > 0 && !long[index - 1]?.blocked,
  );
  const late = long.filter((timing) => timing.position >= 80);
  console.log(
    `  blocked: ${late.filter((timing) => timing.blocked).length}/${late.length} at calls 80–99, ${long.filter((timing) => timing.position <= 9 && timing.blocked).length}/${long.filter((timing) => timing.position <= 9).length} at calls 0–9`,
  );
  for (const question of ["decideMs", "nextMs"] as const) {
    const ratio =
      positionFigures(allowedAfterAllowed, question, 80, 99).p50 /
      positionFigures(allowedAfterAllowed, question, 1, 9).p50;
    console.log(
      `  ${question === "decideMs" ? "decide" : "next"}, allowed calls after an allowed call: p50 at calls 80–99 / 1–9 ×${ratio.toFixed(2)}`,
    );
  }
}

/**
 * Where the growth with history is: finding a conversation's kept run compares each message with
 * the kept one (the server is stateless, so every request carries them all), against parsing the
 * same request body, which every server does first.
 */
function knownPrefixCost(policy: ReturnType<typeof refundPolicy>): void {
  const pair = evaluators(policy);
  const bodies = new Map<number, string>();
  timeSessions(pair, refundSessions(1, 100, 99), (position, body) => {
    if (position === 9 || position === 99) bodies.set(position, body);
  });
  console.log("  a known conversation's run (the walk over its messages) against JSON.parse of its body:");
  for (const [position, body] of bodies) {
    const copies = Array.from({ length: 2000 }, () => JSON.parse(body) as unknown[]);
    const count = (copies[0] as unknown[]).length;
    let start = performance.now();
    for (const copy of copies) pair.deciding.run(copy);
    const walk = (performance.now() - start) / copies.length;
    start = performance.now();
    for (let round = 0; round < copies.length; round++) JSON.parse(body);
    const parse = (performance.now() - start) / copies.length;
    console.log(
      `    call ${position} (${count} messages): run ${(walk * 1000).toFixed(1)} µs (${((walk * 1e6) / count).toFixed(0)} ns a message), JSON.parse ${(parse * 1000).toFixed(1)} µs (${((parse * 1e6) / count).toFixed(0)} ns a message)`,
    );
  }
}
