import type { AttemptCall } from "../agent/index.js";
import { type Advice, type Duty, Evaluator, type ProposedCall } from "../evaluator/index.js";
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
import type { FlightRecord } from "./records.js";

/** A row of the matrix: a rule for one binding (an automaton instance), or an argument constraint. */
export interface MatrixRow {
  /** `P1 for route(x="Toronto", y="Chicago")`; a constraint's id. */
  key: string;
  rule: string;
  kind: "rule" | "constraint";
  mode: string;
  sentence: string;
}

/** A column of the matrix: a call of the conversation, a call proposed in the recorded turn, or an answer. */
export interface MatrixColumn {
  /** `made`: in the conversation; `proposed`: generated in the recorded turn; `answer`: text without a call. */
  kind: "made" | "proposed" | "answer";
  call?: ProposedCall;
  /** What came back: a label, JSON, pending (not answered yet), unknown. */
  outcome?: string;
  /** For proposed calls: the generation (attempt) of the turn. */
  attempt?: number;
  verdict: "allow" | "block";
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
  /** Proposed calls only: returned to the client (allowed, in the turn's last generation). */
  returned?: boolean;
}

/** A cell: the rule's colour after the column's call, and the automaton state(s) it is in. */
export interface MatrixCell {
  colour: Colour;
  /** Automaton states (more than one when an outcome could not be placed). */
  states: number[];
  /** This call breaks the row's rule: why the call is blocked (or warned about, or recorded). */
  broken?: boolean;
}

export interface RunView {
  policy: string;
  task: TaskCall[];
  grounding: GroundingNote[];
  rows: MatrixRow[];
  columns: MatrixColumn[];
  /** The colours before any call (the task grounded, nothing done). */
  start: (MatrixCell | null)[];
  /** `cells[row][column]`; null where the row's instance does not exist yet or a constraint is not involved. */
  cells: (MatrixCell | null)[][];
  /** Duties still open after the calls made and returned. */
  openDuties: Duty[];
  /** Why parts of the view are missing (no messages recorded, …). */
  notes: string[];
}

const worst: Colour[] = ["PERM_VIOL", "CURR_VIOL", "CURR_SAT", "PERM_SAT"];

/**
 * The rules × calls view of one recorded turn: the conversation it judged (its messages, with the
 * grounding the turn recorded put back in, so no model is needed), then every call the turn's
 * generations proposed. Each made call is judged on the run before it (as `mentor verify` does);
 * proposed calls keep the verdicts the turn recorded, and their colours are those of the run with
 * the call added, its outcome pending (each after the earlier calls of its generation, as the turn
 * judged them), and show where the call would lead (a blocked call: permanently violated). Blocked
 * calls are not made: later columns start from the conversation again.
 */
export function runView(policy: Policy, record: FlightRecord): RunView {
  const notes: string[] = [];
  const grounding = record.mentor?.grounding ?? [];
  let task: TaskCall[] = [];
  let made: ToolCallEvent[] = [];
  if (record.messages === undefined) {
    notes.push(
      "the record has no messages (written before the recorder kept them): only the turn's own calls are shown",
    );
  } else {
    const trace = traceFromMessages(withGrounding(record.messages, grounding), policy);
    task = trace.task;
    made = trace.calls;
  }
  const evaluator = new Evaluator(policy);
  const columns: MatrixColumn[] = [];
  const runs: Run[] = [];

  made.forEach((call, index) => {
    const before = { task, calls: made.slice(0, index) };
    const decision = evaluator.decide(before, { name: call.name, arguments: call.arguments });
    columns.push({
      kind: "made",
      call: { name: call.name, arguments: call.arguments },
      outcome: outcomeText(call.outcome),
      verdict: decision.verdict,
      rules: decision.violations.map((finding) => finding.rule),
      warnings: decision.warnings.map((finding) => finding.rule),
      ...(decision.advice ? { advice: decision.advice } : {}),
      ...(decision.failClosed !== undefined ? { failClosed: decision.failClosed } : {}),
    });
    runs.push(Run.fromTrace(policy, { task, calls: made.slice(0, index + 1) }));
  });

  const afterMade = Run.fromTrace(policy, { task, calls: made });
  const attempts = record.mentor?.attempts ?? [];
  const lastAttempt = attempts.length - 1;
  let returned: ToolCallEvent[] = [];
  attempts.forEach((attempt, attemptIndex) => {
    if (attempt.calls.length === 0) {
      const refused = attempt.done?.refused ?? false;
      columns.push({
        kind: "answer",
        attempt: attemptIndex,
        verdict: refused ? "block" : "allow",
        refused,
        content: attempt.content ?? "",
        rules: refused ? openRules(afterMade) : [],
        warnings: [],
        ...(attempt.done?.feedback !== undefined ? { feedback: attempt.done.feedback } : {}),
      });
      runs.push(afterMade);
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
    const allowed = attempt.calls.every((judged) => judged.verdict === "allow");
    if (attemptIndex === lastAttempt && allowed) returned = events;
    attempt.calls.forEach((judged: AttemptCall, callIndex) => {
      columns.push({
        kind: "proposed",
        call: judged.call,
        outcome: "pending",
        attempt: attemptIndex,
        verdict: judged.verdict,
        rules: judged.rules,
        warnings: judged.warnings,
        returned: attemptIndex === lastAttempt && allowed,
        ...(judged.advice ? { advice: judged.advice } : {}),
        ...(judged.feedback !== undefined ? { feedback: judged.feedback } : {}),
        ...(judged.failClosed !== undefined ? { failClosed: judged.failClosed } : {}),
      });
      // Not re-armed (unlike a made call): the colours show where the call would lead.
      const before = Run.fromTrace(policy, { task, calls: [...made, ...events.slice(0, callIndex)] });
      const event = events[callIndex] as ToolCallEvent;
      runs.push(before.after(event, before.outcomeCases(event.name, event.outcome)));
    });
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
      sentence: constraint.sentence,
    });

  const cells = rows.map((row) =>
    columns.map((column, index) => cellAt(row, column, runs[index] as Run, index)),
  );
  return {
    policy: policy.name,
    task,
    grounding,
    rows,
    columns,
    start: rows.map((row) => (row.kind === "rule" ? colourOf(start, row.key, undefined) : null)),
    cells,
    openDuties: evaluator.next({ task, calls: [...made, ...returned] }).openDuties,
    notes,
  };
}

function cellAt(row: MatrixRow, column: MatrixColumn, run: Run, columnIndex: number): MatrixCell | null {
  const broken = column.rules.includes(row.rule) || column.warnings.includes(row.rule);
  if (row.kind === "constraint") {
    if (!broken || column.kind === "answer") return null;
    return { colour: "PERM_VIOL", states: [], broken: true };
  }
  // A made call that broke the rule is in the run's `broken` at its position (the monitor re-armed the instance).
  const cell = colourOf(run, row.key, column.kind === "made" ? columnIndex : undefined);
  if (!cell) return null;
  if (column.kind === "answer") {
    // A refused answer: the rules whose duties were open are why.
    if (column.refused && cell.colour === "CURR_VIOL" && column.rules.includes(row.rule)) cell.broken = true;
    return cell;
  }
  if (!cell.broken && broken && cell.colour === "PERM_VIOL") cell.broken = true;
  return cell;
}

/** The colour and states of an instance in a run; a call at `position` that broke it shows as permanently violated. */
function colourOf(run: Run, key: string, position: number | undefined): MatrixCell | null {
  const index = run.instances.findIndex((instance) => describeInstance(instance) === key);
  if (index < 0) return null;
  const instance = run.instances[index];
  if (!instance) return null;
  const automaton = instance.rule.automaton;
  const states = [...new Set(run.beliefs.map((belief) => belief[index] as number))];
  if (
    position !== undefined &&
    run.broken.some((entry) => entry.instance === index && entry.call === position)
  )
    return { colour: "PERM_VIOL", states, broken: true };
  const colours = states.map((state) => automaton.colour(state));
  const colour = worst.find((candidate) => colours.includes(candidate)) as Colour;
  return { colour, states };
}

/** The enforced rules with an open duty in the run (why an answer is refused). */
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
