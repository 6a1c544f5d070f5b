import { listItems, type PersistentList, withItem } from "../base/persistent-list.js";
import { MentorError } from "../errors/index.js";
import { argumentProblems } from "../policy/index.js";
import {
  type Outcome,
  Run,
  type TaskCall,
  type ToolCallEvent,
  type Trace,
  type TraceEntry,
  traceEntries,
} from "../run/index.js";
import type { SolverClient } from "../smt/index.js";
import type { SearchBudget } from "./budget.js";
import type { RunRecords } from "./flight.js";
import type { Judge } from "./judge.js";
import type { NextCalls } from "./next-calls.js";
import { type EnforcementState, emptyEnforcement, type Severities } from "./severities.js";
import type { Decision, Duty, NextAnswer, ProposedCall, Stop } from "./types.js";

/** What a monitor is built on: one evaluator's judge, its answers to `next`, the policy's severities. */
export interface MonitorParts {
  judge: Judge;
  nextCalls: NextCalls;
  severities: Severities;
}

/** One entry of a monitor's log, as `toJSON` writes it. */
export type LogEntry =
  | { kind: "made"; call: ProposedCall; outcome: Outcome }
  | { kind: "refused"; call: ProposedCall }
  | { kind: "approved"; call: ProposedCall }
  | { kind: "stopped"; reason: string }
  | { kind: "resumed" };

/** A monitor as JSON: the policy's name, the task and the log (`fromJSON` replays it). */
export interface MonitorJSON {
  version: 1;
  policy: string;
  task: TaskCall[];
  log: LogEntry[];
}

/** A monitor's log as a persistent list: a snapshot shares it, a later entry does not change it. */
type LogList = PersistentList<LogEntry>;

/**
 * A monitor's whole state at one point, immutable: its run, what the severities remember, its log.
 * A run cache keeps snapshots and steps monitors made from them (`Monitor.fromSnapshot`), which
 * leaves the snapshot as it was.
 */
export interface MonitorSnapshot {
  readonly run: Run;
  readonly enforcement: EnforcementState;
  readonly log: LogList | undefined;
}

/** Whether the run may end now, and why not. */
export interface DoneCheck {
  allowed: boolean;
  openDuties: Duty[];
  stopped?: Stop;
}

/**
 * A run's monitor for an agent loop that runs its own tools (docs/embedding.md):
 * `check` a proposed call before running it, `record` it with its outcome after, ask `next` and
 * `checkDone`. Each `record` steps the run by that one call (the run is not rebuilt from the
 * history), and the severities' counters by that one entry. `toJSON` / `fromJSON` carry a run
 * between processes (`fromJSON` replays the log once). With `records`, each question (`check`,
 * `checkChain`, `checkDone`) writes a flight record of the run so far (`flight.ts`).
 */
export class Monitor {
  private current: Run;
  private state: EnforcementState = emptyEnforcement();
  private log: LogList | undefined;

  constructor(
    private readonly parts: MonitorParts,
    task: readonly TaskCall[] | Run = [],
    readonly records?: RunRecords,
  ) {
    this.current = task instanceof Run ? task : Run.start(parts.judge.policy, task);
  }

  /** A monitor after a trace (the made calls and, in order with them, its notes). */
  static fromTrace(parts: MonitorParts, trace: Trace): Monitor {
    const monitor = new Monitor(parts, trace.task);
    for (const entry of traceEntries(trace)) monitor.apply(entry);
    return monitor;
  }

  /** A monitor in a snapshot's state; stepping it leaves the snapshot as it was. */
  static fromSnapshot(parts: MonitorParts, snapshot: MonitorSnapshot): Monitor {
    const monitor = new Monitor(parts, snapshot.run);
    monitor.state = snapshot.enforcement;
    monitor.log = snapshot.log;
    return monitor;
  }

  static fromJSON(parts: MonitorParts, json: MonitorJSON, records?: RunRecords): Monitor {
    if (json?.version !== 1 || !Array.isArray(json.log) || !Array.isArray(json.task))
      throw new MentorError("MNT_ERR_BAD_INPUT", "a monitor's JSON must be {version: 1, policy, task, log}");
    if (json.policy !== parts.judge.policy.name)
      throw new MentorError(
        "MNT_ERR_BAD_INPUT",
        `the monitor's JSON is for policy ${json.policy}, not ${parts.judge.policy.name}`,
      );
    const monitor = new Monitor(parts, json.task, records);
    json.log.forEach((entry, index) => {
      if (entry?.kind === "made") monitor.record(entry.call, entry.outcome);
      else if (entry?.kind === "refused") monitor.replayRefusal(entry.call);
      else if (entry?.kind === "approved") monitor.approve(entry.call);
      else if (entry?.kind === "stopped") monitor.stop(entry.reason);
      else if (entry?.kind === "resumed") monitor.resume();
      else
        throw new MentorError(
          "MNT_ERR_BAD_INPUT",
          `log[${index}] of the monitor's JSON has kind ${JSON.stringify((entry as { kind?: unknown })?.kind)}; expected made, refused, approved, stopped or resumed`,
        );
    });
    return monitor;
  }

  get run(): Run {
    return this.current;
  }

  /** The monitor's state now, to keep (see `MonitorSnapshot`). */
  snapshot(): MonitorSnapshot {
    return { run: this.current, enforcement: this.state, log: this.log };
  }

  /**
   * Steps the monitor by one entry read from a conversation (`traceEntries`, `MessageReader`): a
   * made call is recorded, a refusal judged again where it was made (see `replayRefusal`), a
   * note applied.
   */
  apply(entry: TraceEntry): void {
    if (entry.kind === "made") this.recordEvent(entry.call);
    else if (entry.kind === "refused")
      this.replayRefusal({ name: entry.call.name, arguments: entry.call.arguments });
    else if (entry.kind === "approved") this.approve(entry.call);
    else if (entry.kind === "stopped") this.stop(entry.reason);
    else if (entry.kind === "resumed") this.resume();
  }

  get stopped(): Stop | undefined {
    return this.state.stopped;
  }

  /**
   * The decision on a call proposed now, changing nothing (the server's question). Arguments the
   * tool does not declare or of another type are noted here, on the question asked, not on the
   * hypothetical decisions of the advice searches.
   */
  decide(call: ProposedCall, withAdvice = true, budget?: SearchBudget): Decision {
    const decision = this.parts.severities.apply(
      this.parts.judge.decide(this.current, call, withAdvice, budget),
      this.state,
    );
    const tool = this.parts.judge.policy.tools.get(call.name);
    const problems = tool ? argumentProblems(tool.parameters, call.arguments, call.name) : [];
    return problems.length > 0 ? { ...decision, argumentProblems: problems } : decision;
  }

  /**
   * The decision on a call proposed now. A refused call is noted (it counts for `escalate`, may
   * be overridden next, latches a stop); an allowed one changes nothing until it is `record`ed.
   */
  check(call: ProposedCall): Decision {
    const started = performance.now();
    const decision = this.decide(call);
    this.records?.decided([decision], performance.now() - started);
    if (decision.verdict === "block") this.refuse(decision);
    return decision;
  }

  /**
   * Calls that run together (one message's parallel calls, a command line), all or nothing: each
   * is judged after the ones before it with their outcomes still open, up to the first refused
   * one (noted as `check` notes it; the decisions end there). None is recorded: when every call
   * is allowed, `record` each as it runs.
   */
  checkChain(calls: readonly ProposedCall[]): Decision[] {
    const started = performance.now();
    const chain = Monitor.fromSnapshot(this.parts, this.snapshot());
    const decisions: Decision[] = [];
    for (const call of calls) {
      const decision = chain.decide(call);
      decisions.push(decision);
      if (decision.verdict === "block") break;
      chain.recordPending(call);
    }
    this.records?.decided(decisions, performance.now() - started);
    const refused = decisions.at(-1);
    if (refused?.verdict === "block") this.refuse(refused);
    return decisions;
  }

  /**
   * A call proposed with others in one message, judged: the run steps by it made with its outcome
   * still open, as a conversation that ends in that message reads it, so the next call of the
   * message is judged after it (`checkChain`, a turn's parallel calls).
   */
  recordPending(call: ProposedCall): void {
    this.record(call, { kind: "pending" });
  }

  /**
   * For a decision of this monitor (`decide`) on a call blocked only by argument constraints the
   * concrete search could not repair, a repair from the solver: only the tool's repairable
   * arguments change, and the repaired call must pass `decide` before it becomes the advice. A
   * solver timeout or error leaves the call blocked and says so in `failClosed`. The decision is
   * the one made, not made again.
   */
  repairWithSolver(decision: Decision, solver: SolverClient): Promise<Decision> {
    return this.parts.judge.advisor.repairWithSolver(this.current, decision.call, decision, solver);
  }

  /** A call that was made, with its outcome: the run steps by it. */
  record(call: ProposedCall & { id?: string }, outcome: Outcome): void {
    this.recordEvent({
      id: call.id ?? `call_${this.log?.length ?? 0}`,
      name: call.name,
      arguments: call.arguments,
      outcome,
    });
  }

  /** Whether the run may end now (no refusing duty open, and not stopped). */
  checkDone(): DoneCheck {
    const started = performance.now();
    const next = this.next();
    const done: DoneCheck = this.state.stopped
      ? { allowed: false, openDuties: next.openDuties, stopped: this.state.stopped }
      : { allowed: next.done.allowed, openDuties: next.openDuties };
    this.records?.doneAsked(done, performance.now() - started);
    return done;
  }

  next(): NextAnswer {
    return this.parts.nextCalls.answer(this.current);
  }

  /** A person approves a call an `ask` rule held: the identical call is allowed until the next made call. */
  approve(call: ProposedCall): void {
    this.state = this.parts.severities.approve(this.state, call);
    this.push({ kind: "approved", call });
    this.records?.approved(call);
  }

  /** Stops the run (latched): every call is refused with `stop` until `resume`. */
  stop(reason: string): void {
    this.state = this.parts.severities.stop(this.state, { rules: [] });
    this.push({ kind: "stopped", reason });
    this.records?.stopped(reason);
  }

  resume(): void {
    this.state = this.parts.severities.resume(this.state);
    this.push({ kind: "resumed" });
    this.records?.resumed();
  }

  toJSON(): MonitorJSON {
    return {
      version: 1,
      policy: this.parts.judge.policy.name,
      task: [...this.current.task],
      log: listItems(this.log),
    };
  }

  /**
   * A refusal read from a history, judged again (without advice) where it was made: it counts only
   * if this policy refuses it there too.
   */
  private replayRefusal(call: ProposedCall): void {
    const decision = this.decide(call, false);
    if (decision.verdict === "block") this.refuse(decision);
  }

  private refuse(decision: Decision): void {
    this.state = this.parts.severities.refused(this.state, decision);
    this.push({ kind: "refused", call: decision.call });
    this.records?.refused(
      decision.call,
      decision.violations.map((finding) => finding.rule),
    );
  }

  private push(entry: LogEntry): void {
    this.log = withItem(this.log, entry);
  }

  private recordEvent(event: ToolCallEvent): void {
    this.current = this.current.made(event);
    this.state = this.parts.severities.made(this.state);
    this.push({
      kind: "made",
      call: { name: event.name, arguments: event.arguments },
      outcome: event.outcome,
    });
    this.records?.made(event);
  }
}
