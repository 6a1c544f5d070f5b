/**
 * npm run bench:cli — how `mentor verify` and `mentor lint` scale, end to end through the command
 * line (a process per run, its start included): verify on generated travel conversations of 250,
 * 500, 1,000 and 2,000 calls (policies/travel), lint on generated policies of 1,000, 2,000 and
 * 4,000 rules (copies of the travel rules, workload.ts), then whether a 50,000-rule lint finishes
 * within a cap. Each figure is one run, in sequence; the ratio to the row before is per doubling
 * (2 for linear, 4 for quadratic). The load average is printed with each row: the figures are
 * wall-clock seconds and mean little on a busy machine.
 *
 * Options: --cli FILE (the mentor CLI to time, default this build's dist/src/cli/main.js; give an
 * older build's to compare), --part verify|lint|all (all), --calls 250,500,1000,2000,
 * --rules 1000,2000,4000, --big-rules N (50000; 0 skips it), --cap S (300: the big lint's limit),
 * --timeout S (600: any other run's limit).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { repoRoot, shippedPolicy } from "../paths.js";
import { RULES_PER_COPY, travelConversation, travelPolicy } from "./workload.js";

const { values: options } = parseArgs({
  options: {
    cli: { type: "string", default: join(repoRoot, "dist", "src", "cli", "main.js") },
    part: { type: "string", default: "all" },
    calls: { type: "string", default: "250,500,1000,2000" },
    rules: { type: "string", default: "1000,2000,4000" },
    "big-rules": { type: "string", default: "50000" },
    cap: { type: "string", default: "300" },
    timeout: { type: "string", default: "600" },
  },
});

const counts = (text: string, name: string): number[] => {
  const values = text.split(",").map(Number);
  if (values.some((value) => !Number.isInteger(value) || value < 1)) {
    process.stderr.write(`bench:cli: --${name} must list counts ≥ 1, got ${text}\n`);
    process.exit(2);
  }
  return values;
};
const part = options.part as string;
if (!["all", "verify", "lint"].includes(part)) {
  process.stderr.write(`bench:cli: --part must be all, verify or lint, got ${part}\n`);
  process.exit(2);
}
const cli = options.cli as string;
const timeoutS = Number(options.timeout);
const capS = Number(options.cap);
const bigRules = Number(options["big-rules"]);

interface Timed {
  seconds: number;
  /** Why the run gives no figure: over its limit, or a failure. */
  failed?: string;
}

/** Runs the CLI once; `ok` says which exit statuses are answers (verify and lint exit 1 on findings). */
function time(args: string[], limitS: number, ok: (status: number, stdout: string) => boolean): Timed {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [cli, ...args], {
    encoding: "utf8",
    timeout: limitS * 1000,
    maxBuffer: 1 << 30,
  });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (result.error && (result.error as NodeJS.ErrnoException).code === "ETIMEDOUT")
    return { seconds, failed: `over ${limitS} s` };
  if (result.status === null || !ok(result.status, result.stdout))
    return {
      seconds,
      failed: `exit ${result.status ?? result.signal}: ${(result.stderr || result.stdout).trim().split("\n")[0]}`,
    };
  return { seconds };
}

/** How many calls a verify printed (undefined when it printed no verification). */
function verifiedCalls(stdout: string): number | undefined {
  try {
    return (JSON.parse(stdout) as { calls?: unknown[] }).calls?.length;
  } catch {
    return undefined;
  }
}

const load = (): string => loadavg()[0]?.toFixed(2) ?? "?";

function row(size: number, timed: Timed, before: Timed | undefined): string {
  if (timed.failed) return `| ${size} | — (${timed.failed}) | | ${load()} |`;
  const ratio = before && !before.failed ? (timed.seconds / before.seconds).toFixed(2) : "";
  return `| ${size} | ${timed.seconds.toFixed(2)} | ${ratio} | ${load()} |`;
}

const dir = mkdtempSync(join(tmpdir(), "mentor-bench-cli-"));
try {
  console.log(`mentor bench:cli — ${cli}, node ${process.version}, ${new Date().toISOString()}`);
  console.log(
    "one run per row, in sequence; ratio = time / the row before's (per doubling: 2 linear, 4 quadratic)\n",
  );
  if (part !== "lint") {
    console.log("mentor verify -p policies/travel/policy.yaml -m <conversation>\n");
    console.log("| calls | seconds | ratio | load (1 min) |\n| --- | --- | --- | --- |");
    let before: Timed | undefined;
    for (const calls of counts(options.calls as string, "calls")) {
      const file = join(dir, `conversation-${calls}.json`);
      writeFileSync(file, JSON.stringify(travelConversation(calls)));
      const timed = time(
        ["verify", "-p", shippedPolicy("travel"), "-m", file],
        timeoutS,
        (status, stdout) => status <= 1 && verifiedCalls(stdout) === calls,
      );
      console.log(row(calls, timed, before));
      before = timed;
    }
    console.log("");
  }
  if (part !== "verify") {
    const lint = (rules: number, limitS: number): Timed => {
      const file = join(dir, `policy-${rules}.yaml`);
      writeFileSync(file, travelPolicy(Math.ceil(rules / RULES_PER_COPY)));
      return time(["lint", file], limitS, (status) => status <= 1);
    };
    console.log(`mentor lint <policy: N/${RULES_PER_COPY} copies of the travel rules>\n`);
    console.log("| rules | seconds | ratio | load (1 min) |\n| --- | --- | --- | --- |");
    let before: Timed | undefined;
    for (const rules of counts(options.rules as string, "rules")) {
      const timed = lint(rules, timeoutS);
      console.log(row(rules, timed, before));
      before = timed;
    }
    if (bigRules > 0) {
      const timed = lint(bigRules, capS);
      console.log(
        `\n${bigRules} rules: ${timed.failed ? `did not finish (${timed.failed})` : `finished in ${timed.seconds.toFixed(1)} s`} (cap ${capS} s, load ${load()})`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
