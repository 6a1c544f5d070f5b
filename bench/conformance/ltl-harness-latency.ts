/**
 * npm run bench:ltl-harness-latency [-- --seed N --short 100 --long 20] — time per call, mentor
 * against ltl-harness, on the same refund sessions in the same run: ltl-harness 0.2.0's own
 * hooks on its bundled refund rulebook (ltl_harness_latency_driver.py, in a cached venv from
 * PyPI, as bench:ltl-harness installs it), and mentor's evaluator on the rulebook re-expressed
 * (ltl-harness-refund.policy.yaml) with every request the whole conversation (bench/shield/
 * long-session.ts: runs kept by prefix, and rebuilt per request as before). Not part of npm test.
 *
 * ltl-harness keeps its monitor's state between hooks (PreToolUse decides a call, PostToolUse
 * records an allowed one); mentor is stateless between requests and reads the conversation each
 * time, so its `decide` also pays for reading the calls made since its previous request (what
 * ltl-harness pays in PostToolUse). The figures are printed with the load average.
 */
import { spawnSync } from "node:child_process";
import { cpus, homedir, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { benchSource } from "../paths.js";
import {
  type CallTiming,
  evaluators,
  percentile,
  type RefundCall,
  refundPolicy,
  refundSessions,
  timeSessions,
} from "../shield/long-session.js";
import { ensureVenv } from "./venv.js";

const PINNED = "0.2.0";

const { values: options } = parseArgs({
  options: {
    seed: { type: "string", default: "11" },
    short: { type: "string", default: "100" },
    long: { type: "string", default: "20" },
    venv: { type: "string" },
    python: { type: "string", default: "python3" },
  },
});

function fail(message: string): never {
  process.stderr.write(`bench:ltl-harness-latency: ${message}\n`);
  process.exit(2);
}

interface HarnessCall {
  pre_us: number;
  post_us: number | null;
  deny: boolean;
}

function harness(python: string, sessions: RefundCall[][], warmup: RefundCall[][]): HarnessCall[][] {
  const result = spawnSync(python, [benchSource("conformance", "ltl_harness_latency_driver.py")], {
    input: JSON.stringify({ sessions, warmup }),
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (result.status !== 0) fail(`the ltl-harness driver failed:\n${result.stderr.trim()}`);
  return (JSON.parse(result.stdout) as { calls: HarnessCall[][] }).calls;
}

function whole(text: string | undefined, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) fail(`--${name} must be a positive whole number, got ${text}`);
  return value;
}

function main(): void {
  const seed = whole(options.seed, "seed");
  const venv = resolve(
    options.venv ?? process.env.MENTOR_CONFORMANCE_VENV ?? join(homedir(), ".cache/mentor/venv-ltl-harness"),
  );
  const python = ensureVenv(venv, options.python as string, "ltl-harness", PINNED, fail);
  const policy = refundPolicy();
  const workloads = [
    { length: 10, sessions: refundSessions(whole(options.short, "short"), 10, seed) },
    { length: 100, sessions: refundSessions(whole(options.long, "long"), 100, seed + 1) },
  ];
  const load = () =>
    loadavg()
      .map((value) => value.toFixed(2))
      .join(" ");
  console.log(
    `# mentor vs ltl-harness ${PINNED}: time per call on the refund rulebook (seed ${seed}); node ${process.version}, ${cpus().length} cores, load average ${load()} at the start`,
  );
  const rows: string[] = [];
  const micro = (values: number[]) =>
    values.length === 0
      ? "-"
      : `${percentile(values, 0.5).toFixed(0)} / ${percentile(values, 0.95).toFixed(0)}`;
  let agree = 0;
  let compared = 0;
  for (const { length, sessions } of workloads) {
    const warmup = refundSessions(5, length, seed + 1000);
    const kept = evaluators(policy);
    timeSessions(kept, warmup);
    const keptTimes = timeSessions(kept, sessions);
    const rebuilt = evaluators(policy, { runCache: { maxMessages: 0 } });
    timeSessions(rebuilt, warmup);
    const rebuiltTimes = timeSessions(rebuilt, sessions);
    const theirs = harness(python, sessions, warmup);
    theirs.forEach((calls, session) => {
      calls.forEach((call, position) => {
        const ours = keptTimes.find((timing) => timing.session === session && timing.position === position);
        compared++;
        if (ours?.blocked === call.deny) agree++;
      });
    });
    const ranges: [number, number][] =
      length === 10
        ? [[0, 9]]
        : [
            [0, 9],
            [80, 99],
          ];
    for (const [from, to] of ranges) {
      const at = (timings: CallTiming[], question: "decideMs" | "nextMs") =>
        timings
          .filter((timing) => timing.position >= from && timing.position <= to)
          .map((timing) => timing[question] * 1000);
      const harnessAt = (field: "pre_us" | "post_us") =>
        theirs.flatMap((calls) =>
          calls.slice(from, to + 1).flatMap((call) => (call[field] === null ? [] : [call[field] as number])),
        );
      rows.push(
        `| ${length}-call | ${from}–${to} | ${micro(at(keptTimes, "decideMs"))} | ${micro(at(keptTimes, "nextMs"))} | ${micro(at(rebuiltTimes, "decideMs"))} | ${micro(harnessAt("pre_us"))} | ${micro(harnessAt("post_us"))} |`,
      );
    }
  }
  console.log(
    "\np50 / p95 in µs; mentor: every request the whole conversation, parsed afresh (parse not timed)\n",
  );
  const header =
    "| sessions | calls | mentor decide | mentor next | mentor decide, rebuilt per request | ltl-harness PreToolUse | ltl-harness PostToolUse |";
  console.log(header);
  console.log(header.replace(/[^|]/g, "-"));
  for (const row of rows) console.log(row);
  console.log(`\nverdicts: mentor blocks where ltl-harness denies on ${agree}/${compared} calls`);
  console.log(`load average at the end: ${load()}`);
}

main();
