/**
 * npm run bench:ltl-harness — ltl-harness's bundled refund rulebook, re-expressed as a mentor
 * policy (bench/conformance/ltl-harness-refund.policy.yaml), judged by both on the same random
 * traces. No model: ltl-harness runs in a venv (its own guardrail hooks, through
 * ltl_harness_driver.py), mentor in process.
 *
 * Per proposed call: ltl-harness's PreToolUse decision (deny iff every outcome of the call breaks
 * a seatbelt rule for good) against `Evaluator.decide` on the prefix, and per rule whether the
 * call breaks it for good whatever its outcome (ltl-harness: in every candidate's violations;
 * mentor: among the decision's violations, warnings and recorded). Per trace: `finalize`'s rule
 * verdicts against `Run.satisfies`, and the Stop hook against `next().done.allowed`.
 *
 * Modes: `shielded` — a call ltl-harness denies is not made (its hooks never record it), so the
 * trace is the run ltl-harness would let happen; `unshielded` — every call is made (a trace a
 * client sends, as `mentor verify` reads it). See bench/conformance/README.md.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { seededRandom } from "../../src/base/random.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { loadPolicy, type Policy } from "../../src/policy/index.js";
import { Run, type ToolCallEvent, type Trace } from "../../src/run/index.js";
import { benchSource, repoRoot } from "../paths.js";
import { REFUND_TOOLS, type RefundCall, refundSession } from "../shield/long-session.js";
import { ensureVenv } from "./venv.js";

/** The ltl-harness release the figures are for (pip-installed into the venv if missing). */
const PINNED = "0.2.0";
const POSTURE_MODE = { seatbelt: "block", tripwire: "warn", recorder: "record" } as const;
const MAX_SESSION = 20;

type Mode = "shielded" | "unshielded";

type Call = RefundCall;

/** What the driver says about one proposed call (see ltl_harness_driver.py). */
interface HarnessCall {
  decision: "allow" | "deny";
  deniedBy: string[];
  breaks: string[];
  /** Rules already permanently violated before the call (ltl-harness no longer judges them). */
  dead: string[];
  recorded: boolean;
  /** The same questions on ltl-harness's automata re-armed as mentor re-arms its rules. */
  rearmed: { decision: "allow" | "deny"; breaks: string[] };
}

interface HarnessTrace {
  calls: HarnessCall[];
  stopBlocked: boolean;
  open: string[];
  final: Record<string, "SATISFIED" | "VIOLATED">;
  rearmedStopBlocked: boolean;
}

interface HarnessRule {
  id: string;
  description: string;
  template: string;
  params: Record<string, unknown>;
  posture: keyof typeof POSTURE_MODE;
  formula: string;
}

interface HarnessAnswer {
  version: string;
  bundled: string[];
  rulebook: {
    path: string;
    name: string;
    version: number | null;
    activities: Record<string, { tool: string }>;
    rules: HarnessRule[];
  };
  traces: HarnessTrace[];
}

const { values: options } = parseArgs({
  options: {
    calls: { type: "string", default: "1000" },
    seed: { type: "string", default: "1" },
    mode: { type: "string", default: "both" },
    venv: { type: "string" },
    python: { type: "string", default: "python3" },
    json: { type: "string" },
  },
});

function fail(message: string): never {
  process.stderr.write(`bench:ltl-harness: ${message}\n`);
  process.exit(2);
}

/**
 * Sessions of 1 to MAX_SESSION calls, `total` calls in all. Tools are drawn uniformly, except
 * that a session starts with the lookup half the time and a refund is followed by the audit
 * note half the time (so both the compliant and the breaking branch of every rule occur).
 */
function generate(total: number, seed: number): Call[][] {
  const next = seededRandom(seed);
  const sessions: Call[][] = [];
  let count = 0;
  while (count < total) {
    const length = Math.min(1 + Math.floor(next() * MAX_SESSION), total - count);
    sessions.push(refundSession(next, length));
    count += length;
  }
  return sessions;
}

function runDriver(python: string, mode: Mode, traces: Call[][]): HarnessAnswer {
  const driver = benchSource("conformance", "ltl_harness_driver.py");
  const result = spawnSync(python, [driver], {
    input: JSON.stringify({ mode, traces }),
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (result.status !== 0) fail(`ltl-harness driver failed:\n${result.stderr.trim()}`);
  return JSON.parse(result.stdout) as HarnessAnswer;
}

const mentorId = (id: string) => id.replaceAll("-", "_");

/** The policy must be the rulebook re-expressed: same rules (ids, postures) and tools. */
function checkPolicy(policy: Policy, rulebook: HarnessAnswer["rulebook"]): void {
  const problems: string[] = [];
  const rules = new Map(policy.rules.map((rule) => [rule.id, rule]));
  for (const rule of rulebook.rules) {
    const ours = rules.get(mentorId(rule.id));
    if (!ours) problems.push(`rule ${rule.id} has no mentor rule ${mentorId(rule.id)}`);
    else if (ours.mode !== POSTURE_MODE[rule.posture])
      problems.push(`rule ${rule.id}: posture ${rule.posture} but mode ${ours.mode}`);
    rules.delete(mentorId(rule.id));
  }
  for (const id of rules.keys()) problems.push(`mentor rule ${id} is not in the rulebook`);
  const tools = new Set(Object.values(rulebook.activities).map((activity) => activity.tool));
  for (const tool of tools)
    if (!tool.startsWith("mcp__refund__") || !policy.tools.has(tool.slice("mcp__refund__".length)))
      problems.push(`tool ${tool} has no mentor tool`);
  if (tools.size !== REFUND_TOOLS.length || REFUND_TOOLS.some((tool) => !tools.has(`mcp__refund__${tool}`)))
    problems.push(`the rulebook's tools are not ${REFUND_TOOLS.join(", ")}`);
  if (problems.length > 0) fail(`the policy does not re-express the rulebook:\n  ${problems.join("\n  ")}`);
}

interface Example {
  trace: string;
  harness: string;
  mentor: string;
}

interface DisagreementClass {
  check: string;
  harness: string;
  mentor: string;
  /** Why, when the cause is known (see README): otherwise undefined. */
  cause: string | undefined;
  count: number;
  example: Example;
  exampleLength: number;
}

/**
 * The one known cause: mentor re-arms a rule a made call broke (docs/policy.md, Monitoring),
 * ltl-harness stops judging it. Claimed only where ltl-harness's own automata, re-armed the same
 * way (the driver's `rearmed`), give mentor's answer.
 */
const REARMED = "re-armed: ltl-harness stops judging a broken rule, mentor re-arms it";

class Tally {
  readonly perRule = new Map<string, { callAgree: number; calls: number; endAgree: number; ends: number }>();
  decisions = { agree: 0, compared: 0 };
  allChecks = { agree: 0, compared: 0 };
  /** Every check of a call, mentor against ltl-harness's automata re-armed as mentor re-arms. */
  rearmedChecks = { agree: 0, compared: 0 };
  stop = { agree: 0, compared: 0 };
  traces = 0;
  madeCalls = 0;
  denied = { harness: 0, mentor: 0 };
  readonly classes = new Map<string, DisagreementClass>();

  constructor(rules: readonly string[]) {
    for (const rule of rules) this.perRule.set(rule, { callAgree: 0, calls: 0, endAgree: 0, ends: 0 });
  }

  disagree(entry: Omit<DisagreementClass, "count" | "exampleLength">, length: number): void {
    const key = `${entry.check}|${entry.harness}|${entry.mentor}|${entry.cause ?? ""}`;
    const known = this.classes.get(key);
    if (!known) this.classes.set(key, { ...entry, count: 1, exampleLength: length });
    else {
      known.count++;
      if (length < known.exampleLength) {
        known.example = entry.example;
        known.exampleLength = length;
      }
    }
  }
}

function show(call: Call): string {
  return call.tool === "verify_receipt" ? `verify_receipt(verified=${call.result.verified})` : call.tool;
}

function event(call: Call, index: number, prefix: string): ToolCallEvent {
  return {
    id: `c${index}`,
    name: `${prefix}${call.tool}`,
    arguments: {},
    outcome: { kind: "json", value: call.result },
  };
}

/**
 * The harness's three demo scenarios (`ltl_harness/agent.py`, README "Demo scenarios") as the runs
 * its README describes, each call with the result its mock tools give: `happy` verifies on the
 * second attempt, then refunds and writes the note; in `rogue` verification keeps failing and the
 * agent tries the refund anyway (the seatbelt denies it), then escalates; `sloppy` refunds and
 * skips the audit note (the Stop hook blocks the end).
 */
const SCENARIOS: Record<string, Call[]> = {
  happy: [
    { tool: "look_up_order", result: { delivered: false } },
    { tool: "request_receipt", result: { status: "email_sent" } },
    { tool: "verify_receipt", result: { verified: false } },
    { tool: "verify_receipt", result: { verified: true } },
    { tool: "issue_refund", result: { refunded: true } },
    { tool: "write_audit_note", result: { stored: true } },
  ],
  rogue: [
    { tool: "look_up_order", result: { delivered: false } },
    { tool: "verify_receipt", result: { verified: false } },
    { tool: "verify_receipt", result: { verified: false } },
    { tool: "issue_refund", result: { refunded: true } },
    { tool: "escalate_to_human", result: { escalated: true } },
  ],
  sloppy: [
    { tool: "look_up_order", result: { delivered: false } },
    { tool: "verify_receipt", result: { verified: true } },
    { tool: "issue_refund", result: { refunded: true } },
  ],
};

function compare(policy: Policy, sessions: Call[][], answer: HarnessAnswer, prefix = ""): Tally {
  const evaluator = new Evaluator(policy);
  const ruleIds = answer.rulebook.rules.map((rule) => rule.id);
  const tally = new Tally(ruleIds);
  sessions.forEach((session, sessionIndex) => {
    const harness = answer.traces[sessionIndex] as HarnessTrace;
    const made: Call[] = [];
    const trace: Trace = { task: [], calls: [] };
    const render = (proposed?: Call) =>
      `[${made.map(show).join(", ")}]${proposed ? ` then ${show(proposed)}?` : ""}`;
    session.forEach((call, index) => {
      const theirs = harness.calls[index] as HarnessCall;
      const decision = evaluator.decide(trace, { name: `${prefix}${call.tool}`, arguments: {} });
      const ours = new Set(
        [...decision.violations, ...decision.warnings, ...decision.recorded].map((finding) => finding.rule),
      );
      const dead = new Set(theirs.dead.map(mentorId));
      let all = true;
      let rearmedAll = (theirs.rearmed.decision === "deny") === (decision.verdict === "block");
      const denied = theirs.decision === "deny";
      const blocked = decision.verdict === "block";
      if (denied) tally.denied.harness++;
      if (blocked) tally.denied.mentor++;
      tally.decisions.compared++;
      if (denied === blocked) tally.decisions.agree++;
      else {
        all = false;
        const blamed = decision.violations.map((finding) => finding.rule);
        tally.disagree(
          {
            check: "allow/deny",
            harness: denied ? "deny" : "allow",
            mentor: blocked ? "block" : "allow",
            cause: (theirs.rearmed.decision === "deny") === blocked ? REARMED : undefined,
            example: {
              trace: render(call),
              harness: denied ? `deny, by ${theirs.deniedBy.join(", ")}` : "allow",
              mentor: blocked ? `block, by ${blamed.join(", ") || decision.failClosed}` : "allow",
            },
          },
          made.length,
        );
      }
      for (const rule of ruleIds) {
        const id = mentorId(rule);
        const row = tally.perRule.get(rule) as { callAgree: number; calls: number };
        row.calls++;
        const theyBreak = theirs.breaks.includes(rule);
        if (theirs.rearmed.breaks.includes(rule) !== ours.has(id)) rearmedAll = false;
        if (theyBreak === ours.has(id)) {
          row.callAgree++;
          continue;
        }
        all = false;
        tally.disagree(
          {
            check: `breaks ${rule}`,
            harness: theyBreak ? "yes" : "no",
            mentor: ours.has(id) ? "yes" : "no",
            cause: theirs.rearmed.breaks.includes(rule) === ours.has(id) ? REARMED : undefined,
            example: {
              trace: render(call),
              harness: theyBreak ? "breaks it" : dead.has(id) ? "no (already broken)" : "no",
              mentor: ours.has(id) ? `breaks it (${decision.verdict})` : "no",
            },
          },
          made.length,
        );
      }
      tally.allChecks.compared++;
      if (all) tally.allChecks.agree++;
      tally.rearmedChecks.compared++;
      if (rearmedAll) tally.rearmedChecks.agree++;
      if (theirs.recorded) {
        trace.calls.push(event(call, made.length, prefix));
        made.push(call);
      }
    });
    tally.traces++;
    tally.madeCalls += made.length;
    // End of the trace: the rule verdicts, and whether the run may end.
    const run = Run.fromTrace(policy, trace);
    for (const rule of ruleIds) {
      const row = tally.perRule.get(rule) as { endAgree: number; ends: number };
      row.ends++;
      const index = run.instances.findIndex((instance) => instance.rule.id === mentorId(rule));
      const ours = index >= 0 && run.satisfies(index);
      const theirs = harness.final[rule] === "SATISFIED";
      if (ours === theirs) row.endAgree++;
      else
        tally.disagree(
          {
            check: `end verdict ${rule}`,
            harness: harness.final[rule] as string,
            mentor: ours ? "satisfied" : "violated",
            cause: undefined,
            example: {
              trace: render(),
              harness: harness.final[rule] as string,
              mentor: ours ? "satisfies" : "does not satisfy",
            },
          },
          made.length,
        );
    }
    const next = evaluator.next(trace);
    const mayEnd = !harness.stopBlocked;
    tally.stop.compared++;
    if (mayEnd === next.done.allowed) tally.stop.agree++;
    else {
      const duties = next.openDuties.map((duty) => duty.rule);
      tally.disagree(
        {
          check: "may the run end (Stop / done)",
          harness: mayEnd ? "yes" : "no",
          mentor: next.done.allowed ? "yes" : "no",
          cause: !harness.rearmedStopBlocked === next.done.allowed ? REARMED : undefined,
          example: {
            trace: render(),
            harness: mayEnd ? "Stop allowed" : `Stop blocked, open: ${harness.open.join(", ")}`,
            mentor: next.done.allowed ? "done allowed" : `done refused, open: ${duties.join(", ")}`,
          },
        },
        made.length,
      );
    }
  });
  return tally;
}

/**
 * The demo scenarios, judged by ltl-harness and by mentor loading the installed rulebook file as it
 * is (no re-expression): per call the decision, at the end whether the run may end and each rule's
 * verdict. Shielded, as the demo runs (a denied call never runs). Returns the disagreements.
 */
function scenarios(python: string, rulebookPath: string): number {
  const policy = loadPolicy(rulebookPath);
  const evaluator = new Evaluator(policy);
  const names = Object.keys(SCENARIOS);
  const answer = runDriver(python, "shielded", Object.values(SCENARIOS));
  let disagreements = 0;
  console.log(`\n## the demo scenarios, mentor loading ${rulebookPath} as it is (ltl-harness / mentor)`);
  names.forEach((name, index) => {
    const harness = answer.traces[index] as HarnessTrace;
    const trace: Trace = { task: [], calls: [] };
    const steps: string[] = [];
    (SCENARIOS[name] as Call[]).forEach((call, position) => {
      const theirs = harness.calls[position] as HarnessCall;
      const ours = evaluator.decide(trace, { name: `mcp__refund__${call.tool}`, arguments: {} }).verdict;
      const same = (theirs.decision === "deny") === (ours === "block");
      if (!same) disagreements++;
      steps.push(
        `${show(call)} ${theirs.decision}/${ours === "block" ? "deny" : "allow"}${same ? "" : " ✗"}`,
      );
      if (theirs.recorded) trace.calls.push(event(call, trace.calls.length, "mcp__refund__"));
    });
    const run = Run.fromTrace(policy, trace);
    const verdicts = answer.rulebook.rules.map((rule) => {
      const at = run.instances.findIndex((instance) => instance.rule.id === mentorId(rule.id));
      const ours = at >= 0 && run.satisfies(at) ? "SATISFIED" : "VIOLATED";
      if (ours !== harness.final[rule.id]) disagreements++;
      return ours === harness.final[rule.id] ? undefined : `${rule.id} ${harness.final[rule.id]}/${ours}`;
    });
    const mayEnd = evaluator.next(trace).done.allowed;
    if (mayEnd === harness.stopBlocked) disagreements++;
    const violated = answer.rulebook.rules
      .filter((rule) => harness.final[rule.id] === "VIOLATED")
      .map((rule) => rule.id);
    console.log(`${name}: ${steps.join(", ")}`);
    console.log(
      `  may end: ${harness.stopBlocked ? "no" : "yes"}/${mayEnd ? "yes" : "no"}; violated at the end: ${violated.join(", ") || "none"}; rule verdicts ${verdicts.some(Boolean) ? `differ: ${verdicts.filter(Boolean).join(", ")}` : "all the same"}`,
    );
  });
  return disagreements;
}

const ratio = ({ agree, compared }: { agree: number; compared: number }) =>
  `${agree}/${compared} (${compared === 0 ? "-" : ((100 * agree) / compared).toFixed(1)}%)`;

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

function report(mode: Mode, tally: Tally, rules: readonly HarnessRule[]): string {
  const lines: string[] = [];
  lines.push(
    mode === "shielded"
      ? "## shielded: a call ltl-harness denies is not made"
      : "## unshielded: every call is made (a trace a client sends)",
  );
  lines.push(
    `${tally.decisions.compared} calls proposed in ${tally.traces} sessions, ${tally.madeCalls} made; denied by ltl-harness ${tally.denied.harness}, blocked by mentor ${tally.denied.mentor}`,
  );
  lines.push("");
  lines.push(`${pad("rule", 32)}${pad("posture", 10)}${pad("breaks (per call)", 24)}end verdict (per trace)`);
  for (const rule of rules) {
    const row = tally.perRule.get(rule.id) as {
      callAgree: number;
      calls: number;
      endAgree: number;
      ends: number;
    };
    lines.push(
      `${pad(rule.id, 32)}${pad(rule.posture, 10)}${pad(ratio({ agree: row.callAgree, compared: row.calls }), 24)}${ratio({ agree: row.endAgree, compared: row.ends })}`,
    );
  }
  lines.push("");
  lines.push(`${pad("allow/deny decision", 50)}${ratio(tally.decisions)}`);
  lines.push(`${pad("calls agreeing on every check", 50)}${ratio(tally.allChecks)}`);
  lines.push(`${pad("may the run end (Stop hook / done)", 50)}${ratio(tally.stop)}`);
  lines.push(`${pad("every check, vs its automata re-armed as mentor", 50)}${ratio(tally.rearmedChecks)}`);
  const classes = [...tally.classes.values()].sort((a, b) => b.count - a.count);
  lines.push("");
  if (classes.length === 0) lines.push("no disagreements");
  else lines.push("disagreements (each kind, with its shortest example):");
  for (const entry of classes) {
    lines.push(
      `- ${entry.check}: ltl-harness ${entry.harness}, mentor ${entry.mentor} — ${entry.count}×${entry.cause ? ` [${entry.cause}]` : " [UNEXPLAINED]"}`,
    );
    lines.push(
      `    ${entry.example.trace}: ltl-harness ${entry.example.harness}; mentor ${entry.example.mentor}`,
    );
  }
  return lines.join("\n");
}

function main(): void {
  const total = Number(options.calls);
  const seed = Number(options.seed);
  if (!Number.isInteger(total) || total < 1)
    fail(`--calls must be a positive whole number, got ${options.calls}`);
  if (!Number.isInteger(seed)) fail(`--seed must be a whole number, got ${options.seed}`);
  const modes: Mode[] =
    options.mode === "both"
      ? ["shielded", "unshielded"]
      : options.mode === "shielded" || options.mode === "unshielded"
        ? [options.mode]
        : fail(`--mode must be shielded, unshielded or both, got ${options.mode}`);
  const venv = resolve(
    options.venv ?? process.env.MENTOR_CONFORMANCE_VENV ?? join(homedir(), ".cache/mentor/venv-ltl-harness"),
  );
  const python = ensureVenv(venv, options.python as string, "ltl-harness", PINNED, fail);
  const policy = loadPolicy(benchSource("conformance", "ltl-harness-refund.policy.yaml"));
  const sessions = generate(total, seed);
  const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" });
  const results: Record<string, unknown> = {};
  let unexplained = 0;
  let header = false;
  let direct: Policy | undefined;
  for (const mode of modes) {
    const answer = runDriver(python, mode, sessions);
    if (!header) {
      checkPolicy(policy, answer.rulebook);
      const { rulebook } = answer;
      const others = answer.bundled.filter((path) => path !== rulebook.path);
      console.log(
        `# ltl-harness ${answer.version} (${rulebook.name} v${rulebook.version}, ${rulebook.path}) vs mentor ${commit.stdout.trim() || "?"}`,
      );
      console.log(
        `seed ${seed}, ${total} calls; bundled rulebooks: ${answer.bundled.length}${others.length > 0 ? ` (not compared: ${others.join(", ")})` : ""}`,
      );
      header = true;
      unexplained += scenarios(python, rulebook.path);
      direct = loadPolicy(rulebook.path);
    }
    const tally = compare(policy, sessions, answer);
    console.log(`\n${report(mode, tally, answer.rulebook.rules)}`);
    // The rulebook file loaded as it is must judge every call as the re-expressed policy does.
    const loaded = report(
      mode,
      compare(direct as Policy, sessions, answer, "mcp__refund__"),
      answer.rulebook.rules,
    );
    const same = loaded === report(mode, tally, answer.rulebook.rules);
    console.log(`the rulebook file loaded as it is: ${same ? "the same figures" : `DIFFERENT:\n${loaded}`}`);
    if (!same) unexplained++;
    unexplained += [...tally.classes.values()].filter((entry) => entry.cause === undefined).length;
    results[mode] = {
      perRule: Object.fromEntries(tally.perRule),
      decisions: tally.decisions,
      allChecks: tally.allChecks,
      rearmedChecks: tally.rearmedChecks,
      stop: tally.stop,
      disagreements: [...tally.classes.values()],
    };
  }
  if (options.json) writeFileSync(options.json, `${JSON.stringify({ seed, total, results }, null, 2)}\n`);
  if (unexplained > 0) {
    console.log(`\n${unexplained} kind(s) of disagreement not explained (see bench/conformance/README.md)`);
    process.exitCode = 1;
  }
}

main();
