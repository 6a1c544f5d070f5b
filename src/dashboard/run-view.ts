import type { AttemptCall } from "../agent/index.js";
import { type Advice, type Duty, Evaluator, type ProposedCall, type Stop } from "../evaluator/index.js";
import type { GroundingNote } from "../labeler/index.js";
import type { Colour } from "../logic/index.js";
import type { Policy } from "../policy/index.js";
import {
  describeInstance,
  type Outcome,
  Run,
  type TaskCall,
  type ToolCallEvent,
  traceFromMessages,
} from "../run/index.js";
import { brokeRule, type FlightRecord, returnedCalls } from "./records.js";

/** A row of the matrix: a rule for one binding (an automaton instance), or an argument constraint. */
export interface MatrixRow {
  /** `P1 for route(x="Toronto", y="Chicago")`; a constraint's id. */
  key: string;
  rule: string;
  kind: "rule" | "constraint";
  mode: string;
  /** The rule's severity (`stop`, `block`, `ask`, `escalate`, `override`, `warn`, `record`). */
  severity: string;
  sentence: string;
}

/** A column of the matrix: a call of the conversation, a call proposed in a recorded turn, or an answer. */
export interface MatrixColumn {
  /** `made`: in the conversation; `proposed`: generated in a recorded turn and not made (yet); `answer`: text without a call. */
  kind: "made" | "proposed" | "answer";
  /** The request (index in `RunView.requests`) that proposed it; a made call: the request whose messages first hold it. */
  request: number;
  call?: ProposedCall;
  /** What came back: a label, JSON, pending (not answered yet), unknown; `not made` for a refused call. */
  outcome?: string;
  /** For proposed calls: the generation (attempt) of the turn. */
  attempt?: number;
  verdict: "allow" | "block";
  /** What the rules' severities made of it: `block`, `stop`, `ask`, `retry`, `warn`, `allow`. */
  action: string;
  /** Block-mode rules and constraints the call breaks (for an answer: the duties that refused it). */
  rules: string[];
  warnings: string[];
  advice?: Advice;
  feedback?: string;
  failClosed?: string;
  /** An answer the shield refused while duties were open. */
  refused?: boolean;
  /** An answer's text. */
  content?: string;
  /** Proposed calls only: returned to the client (allowed, or unshielded, in the turn's last generation). */
  returned?: boolean;
  /** A call that was made (or returned) although it breaks rules (`brokeRule`: no shield, a warn rule, an override, an approval). */
  broke?: boolean;
}

/** A cell: the rule's colour after the column's call, and the automaton state(s) it is in. */
export interface MatrixCell {
  colour: Colour;
  /** Automaton states (more than one when an outcome could not be placed). */
  states: number[];
  /** This call breaks the row's rule: why the call is blocked (or warned about, or recorded). */
  broken?: boolean;
  /**
   * An earlier made call broke the rule for good (the column it is in): the cell stays
   * `PERM_VIOL`; the monitor re-armed the instance to judge later calls, and it is `now` that.
   */
  rearmed?: { by: number; now: Colour };
}

/** Which rules make a tool unsafe now (a refusal with nothing allowed, 422). */
export interface UnsafeTool {
  tool: string;
  /** Per call the game considers: the rules it breaks (empty: it breaks none now, but every way on from it does). */
  calls: { call: ProposedCall; rules: string[] }[];
}

/** One request of the run: a boundary in the timeline. */
export interface RunRequest {
  id: string;
  time: string;
  status: number;
  mode?: string;
  error?: { code?: string | null; message?: string };
  /** The columns it brought: `from` (inclusive) to `to` (exclusive). */
  from: number;
  to: number;
  /** A `stop` rule stopped the run in this request. */
  stopped?: Stop;
  /** A 422 (MNT_ERR_NOTHING_ALLOWED): the tools the policy counted unsafe, and why. */
  unsafe?: UnsafeTool[];
}

export interface RunView {
  policy: string;
  task: TaskCall[];
  grounding: GroundingNote[];
  requests: RunRequest[];
  rows: MatrixRow[];
  columns: MatrixColumn[];
  /** The colours before any call (the task grounded, nothing done). */
  start: (MatrixCell | null)[];
  /** `cells[row][column]`; null where the row's instance does not exist yet or a constraint is not involved. */
  cells: (MatrixCell | null)[][];
  /** Duties still open after the calls made and returned. */
  openDuties: Duty[];
  /** The run is stopped at its end (a `stop` rule, not resumed). */
  stopped?: Stop;
  /** Why parts of the view are missing (no messages recorded, …). */
  notes: string[];
}

const worst: Colour[] = ["PERM_VIOL", "CURR_VIOL", "CURR_SAT", "PERM_SAT"];

/**
 * The rules × calls view of a run: the requests of one conversation (or one request), merged into
 * one timeline. The conversation is the last request's messages, with the grounding every request
 * recorded put back in (so no model is needed); each made call is judged on the run before it (as
 * `mentor verify` does). Each request adds, where it stood, the calls its generations proposed and
 * did not get made (blocked, or returned by the last request), and its refused answers: they keep
 * the verdicts the turn recorded, and their colours are those of the run with the call added, its
 * outcome pending, and show where the call would lead (a blocked call: permanently violated).
 */
export function runView(policy: Policy, records: FlightRecord | readonly FlightRecord[]): RunView {
  const requests = Array.isArray(records) ? (records as readonly FlightRecord[]) : [records as FlightRecord];
  const last = requests.at(-1) as FlightRecord;
  const notes: string[] = [];
  const grounding = mergedGrounding(requests);
  const traceOf = (record: FlightRecord) =>
    record.messages === undefined
      ? { task: [], calls: [] }
      : traceFromMessages(withGrounding(record.messages, grounding), policy);
  if (last.messages === undefined)
    notes.push(
      "the record has no messages (written before the recorder kept them): only the turn's own calls are shown",
    );
  const { task, calls: made } = traceOf(last);
  const evaluator = new Evaluator(policy);
  const columns: MatrixColumn[] = [];
  const runs: Run[] = [];
  /** Per made call, its column; and per column, the made call's position (made calls only). */
  const madeColumn: number[] = [];
  const position = new Map<number, number>();
  const severityOf = new Map<string, string>(
    [...policy.rules, ...policy.constraints].map((one) => [one.id, one.severity.kind]),
  );

  const pushMade = (index: number, request: number) => {
    const call = made[index] as ToolCallEvent;
    const decision = evaluator.decide(
      { task, calls: made.slice(0, index) },
      { name: call.name, arguments: call.arguments },
    );
    madeColumn.push(columns.length);
    position.set(columns.length, index);
    columns.push({
      kind: "made",
      request,
      call: { name: call.name, arguments: call.arguments },
      outcome: outcomeText(call.outcome),
      verdict: decision.verdict,
      action: decision.action,
      rules: decision.violations.map((finding) => finding.rule),
      warnings: decision.warnings.map((finding) => finding.rule),
      ...(brokeRule(decision) ? { broke: true } : {}),
      ...(decision.advice ? { advice: decision.advice } : {}),
      ...(decision.failClosed !== undefined ? { failClosed: decision.failClosed } : {}),
    });
    runs.push(Run.fromTrace(policy, { task, calls: made.slice(0, index + 1) }));
  };

  // Request by request: its proposed calls, then the calls made after it (those it returned, with
  // their outcomes, as the next request's messages hold them); the first also the client's history.
  const madeBy = requests.map((record) => Math.min(traceOf(record).calls.length, made.length));
  const boundaries: RunRequest[] = [];
  let madeSoFar = 0;
  let returned: ToolCallEvent[] = [];
  requests.forEach((record, request) => {
    const from = columns.length;
    if (request === 0) for (; madeSoFar < (madeBy[0] ?? 0); madeSoFar++) pushMade(madeSoFar, request);
    const isLast = request === requests.length - 1;
    const shown = proposedColumns(policy, record, request, {
      task,
      made: made.slice(0, madeBy[request]),
      isLast,
    });
    for (const { column, run } of shown.columns) {
      columns.push(column);
      runs.push(run);
    }
    if (isLast) returned = shown.returned;
    const upTo = isLast ? made.length : (madeBy[request + 1] ?? made.length);
    for (; madeSoFar < upTo; madeSoFar++) pushMade(madeSoFar, request);
    const stopped = record.mentor?.stopped;
    const boundary: RunRequest = {
      id: record.id,
      time: record.time,
      status: record.status,
      from,
      to: columns.length,
      ...(record.mode !== undefined ? { mode: record.mode } : {}),
      ...(record.error
        ? { error: { code: record.error.code ?? null, message: record.error.message ?? "" } }
        : {}),
      ...(stopped ? { stopped: stopRules(stopped, severityOf) } : {}),
    };
    if (record.error?.code === "MNT_ERR_NOTHING_ALLOWED")
      boundary.unsafe = unsafeTools(evaluator, { task, calls: made.slice(0, madeBy[request]) });
    boundaries.push(boundary);
  });

  // Rows: every instance any column's run has, in order of first appearance, then the constraints.
  const start = Run.fromTrace(policy, { task, calls: [] });
  const rows: MatrixRow[] = [];
  const seen = new Set<string>();
  for (const run of [start, ...runs]) {
    for (const instance of run.instances) {
      const key = describeInstance(instance);
      if (seen.has(key)) continue;
      seen.add(key);
      rows.push({
        key,
        rule: instance.rule.id,
        kind: "rule",
        mode: instance.rule.mode,
        severity: instance.rule.severity.kind,
        sentence: instance.rule.sentence,
      });
    }
  }
  for (const constraint of policy.constraints)
    rows.push({
      key: constraint.id,
      rule: constraint.id,
      kind: "constraint",
      mode: constraint.mode,
      severity: severityOf.get(constraint.id) ?? constraint.mode,
      sentence: constraint.sentence,
    });

  const cells = rows.map((row) =>
    columns.map((column, index) =>
      cellAt(row, column, runs[index] as Run, position.get(index), (call) => madeColumn[call] ?? -1),
    ),
  );
  // Stops are read from the messages (the shield's stop text); the last request's own stop is in its record.
  // (The messages do not say which rules stopped the run: the request that stopped it does.)
  const stillStopped =
    (last.messages !== undefined
      ? evaluator.monitorOf(withGrounding(last.messages, grounding)).stopped
      : undefined) ?? last.mentor?.stopped;
  const stopped =
    stillStopped && (requests.findLast((record) => record.mentor?.stopped)?.mentor?.stopped ?? stillStopped);
  return {
    policy: policy.name,
    task,
    grounding,
    requests: boundaries,
    rows,
    columns,
    start: rows.map((row) => (row.kind === "rule" ? colourOf(start, row.key, undefined, () => -1) : null)),
    cells,
    openDuties: evaluator.next({ task, calls: [...made, ...returned] }).openDuties,
    ...(stopped ? { stopped: stopRules(stopped, severityOf) } : {}),
    notes,
  };
}

/**
 * The columns one request adds: the calls its generations proposed (not those it returned, unless
 * it is the last request: the next one's messages hold them as made) and its answers.
 */
function proposedColumns(
  policy: Policy,
  record: FlightRecord,
  request: number,
  context: { task: TaskCall[]; made: ToolCallEvent[]; isLast: boolean },
): { columns: { column: MatrixColumn; run: Run }[]; returned: ToolCallEvent[] } {
  const { task, made } = context;
  const afterMade = Run.fromTrace(policy, { task, calls: made });
  const attempts = record.mentor?.attempts ?? [];
  const lastAttempt = attempts.length - 1;
  const shown: { column: MatrixColumn; run: Run }[] = [];
  let returned: ToolCallEvent[] = [];
  attempts.forEach((attempt, attemptIndex) => {
    if (attempt.calls.length === 0) {
      const refused = attempt.done?.refused ?? false;
      // An answer that ended the turn is the conversation's too; a refused one is shown where it was refused.
      if (!refused && !context.isLast) return;
      shown.push({
        column: {
          kind: "answer",
          request,
          attempt: attemptIndex,
          verdict: refused ? "block" : "allow",
          action: refused ? "block" : "allow",
          refused,
          content: attempt.content ?? "",
          rules: refused ? openRules(afterMade) : [],
          warnings: [],
          ...(attempt.done?.feedback !== undefined ? { feedback: attempt.done.feedback } : {}),
        },
        run: afterMade,
      });
      return;
    }
    const events = attempt.calls.map(
      (judged, callIndex): ToolCallEvent => ({
        id: `attempt-${attemptIndex}-${callIndex}`,
        name: judged.call.name,
        arguments: judged.call.arguments,
        outcome: { kind: "pending" },
      }),
    );
    const isReturned = attemptIndex === lastAttempt && returnedCalls(record).length > 0;
    if (isReturned) returned = events;
    // Returned calls are made by the next request's messages: shown there, with their outcomes.
    if (isReturned && !context.isLast) return;
    attempt.calls.forEach((judged: AttemptCall, callIndex) => {
      const column: MatrixColumn = {
        kind: "proposed",
        request,
        call: judged.call,
        outcome: isReturned ? "pending" : "not made",
        attempt: attemptIndex,
        verdict: judged.verdict,
        action: judged.action ?? judged.verdict,
        rules: judged.rules,
        warnings: judged.warnings,
        returned: isReturned,
        ...(isReturned && brokeRule(judged, record.mentor?.approved !== undefined) ? { broke: true } : {}),
        ...(judged.advice ? { advice: judged.advice } : {}),
        ...(judged.feedback !== undefined ? { feedback: judged.feedback } : {}),
        ...(judged.failClosed !== undefined ? { failClosed: judged.failClosed } : {}),
      };
      // Not re-armed (unlike a made call): the colours show where the call would lead.
      const before = Run.fromTrace(policy, { task, calls: [...made, ...events.slice(0, callIndex)] });
      const event = events[callIndex] as ToolCallEvent;
      shown.push({ column, run: before.after(event, before.outcomeCases(event.name, event.outcome)) });
    });
  });
  return { columns: shown, returned };
}

/** A stop with the rules of severity `stop` that made it (the call's other broken rules only blocked it). */
function stopRules(stop: Stop, severityOf: ReadonlyMap<string, string>): Stop {
  const stopping = stop.rules.filter((rule) => severityOf.get(rule) === "stop");
  return { ...stop, rules: stopping.length > 0 ? stopping : stop.rules };
}

/** Every request's grounding notes (a request's notes name messages its successors hold at the same places). */
function mergedGrounding(records: readonly FlightRecord[]): GroundingNote[] {
  const byPlace = new Map<string, GroundingNote>();
  for (const record of records)
    for (const note of record.mentor?.grounding ?? []) byPlace.set(`${note.message}:${note.kind}`, note);
  return [...byPlace.values()].sort((left, right) => left.message - right.message);
}

/** The tools the policy counts unsafe after `trace`, with the rules each of their calls breaks. */
function unsafeTools(
  evaluator: Evaluator,
  trace: { task: TaskCall[]; calls: ToolCallEvent[] },
): UnsafeTool[] {
  const next = evaluator.next(trace);
  return next.tools
    .filter((tool) => tool.class === "unsafe")
    .map((tool) => ({
      tool: tool.name,
      calls: next.calls
        .filter((verdict) => verdict.call.name === tool.name)
        .map((verdict) => {
          const decision = evaluator.decide(trace, verdict.call);
          return { call: verdict.call, rules: decision.violations.map((finding) => finding.rule) };
        }),
    }));
}

function cellAt(
  row: MatrixRow,
  column: MatrixColumn,
  run: Run,
  madePosition: number | undefined,
  columnOfCall: (call: number) => number,
): MatrixCell | null {
  const broken = column.rules.includes(row.rule) || column.warnings.includes(row.rule);
  if (row.kind === "constraint") {
    if (!broken || column.kind === "answer") return null;
    return { colour: "PERM_VIOL", states: [], broken: true };
  }
  // A made call that broke the rule is in the run's `broken` at its position (the monitor re-armed the instance).
  const cell = colourOf(run, row.key, madePosition, columnOfCall);
  if (!cell) return null;
  if (column.kind === "answer") {
    // A refused answer: the rules whose duties were open are why.
    if (column.refused && cell.colour === "CURR_VIOL" && column.rules.includes(row.rule)) cell.broken = true;
    return cell;
  }
  if (!cell.broken && broken && cell.colour === "PERM_VIOL") cell.broken = true;
  return cell;
}

/**
 * The colour and states of an instance in a run. A made call at `position` that broke it shows as
 * permanently violated; so do the cells after it, re-armed (`rearmed`: by which column, and the
 * colour the monitor now judges with).
 */
function colourOf(
  run: Run,
  key: string,
  position: number | undefined,
  columnOfCall: (call: number) => number,
): MatrixCell | null {
  const index = run.instances.findIndex((instance) => describeInstance(instance) === key);
  if (index < 0) return null;
  const instance = run.instances[index];
  if (!instance) return null;
  const automaton = instance.rule.automaton;
  const states = [...new Set(run.beliefs.map((belief) => belief[index] as number))];
  const breaks = run.broken.filter((entry) => entry.instance === index);
  if (position !== undefined && breaks.some((entry) => entry.call === position))
    return { colour: "PERM_VIOL", states, broken: true };
  const colours = states.map((state) => automaton.colour(state));
  const colour = worst.find((candidate) => colours.includes(candidate)) as Colour;
  const first = breaks[0];
  if (first) return { colour: "PERM_VIOL", states, rearmed: { by: columnOfCall(first.call), now: colour } };
  return { colour, states };
}

function openRules(run: Run): string[] {
  const open = new Set<string>();
  run.instances.forEach((instance, index) => {
    if (instance.rule.mode === "record") return;
    if (run.beliefs.some((belief) => !instance.rule.automaton.isAccepting(belief[index] as number)))
      open.add(instance.rule.id);
  });
  return [...open];
}

/**
 * The messages with the grounding the turn recorded written back in (`mentor.task` on user
 * messages, `mentor.label` on tool messages), as the turn's grounder handed them to the evaluator.
 */
export function withGrounding(messages: readonly unknown[], notes: readonly GroundingNote[]): unknown[] {
  const copy = structuredClone(messages) as unknown[];
  for (const note of notes) {
    if (note.value === undefined || note.source === "client") continue;
    const message = copy[note.message];
    if (typeof message !== "object" || message === null) continue;
    const shaped = message as { mentor?: Record<string, unknown> };
    shaped.mentor = { ...shaped.mentor, [note.kind]: note.value };
  }
  return copy;
}

function outcomeText(outcome: Outcome): string {
  switch (outcome.kind) {
    case "pending":
      return "pending";
    case "label":
      return outcome.label === null ? "label: none" : `label: ${outcome.label}`;
    case "json":
      return `json: ${JSON.stringify(outcome.value)}`;
    case "unknown":
      return `unknown (${outcome.reason})`;
  }
}
