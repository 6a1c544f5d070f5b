import { MentorError } from "../errors/index.js";
import type { Policy } from "../policy/index.js";
import type { Run, TaskCall } from "../run/index.js";
import type { SolverClient } from "../smt/index.js";
import type { SearchBudget } from "./budget.js";
import { type RecordsOption, RunRecords } from "./flight.js";
import { Judge } from "./judge.js";
import { Monitor, type MonitorJSON } from "./monitor.js";
import { NextCalls } from "./next-calls.js";
import { RunCache } from "./run-cache.js";
import { Severities } from "./severities.js";
import type { Decision, EvaluatorOptions, NextAnswer, ProposedCall } from "./types.js";

export interface MonitorOptions extends EvaluatorOptions {
  /** The grounded task (`request_travel(…)` pseudo calls); default none. */
  task?: TaskCall[];
  /** Resume a monitor from its `toJSON()` (the task comes with it). */
  state?: MonitorJSON;
  /** Share this evaluator's game and caches (many monitors of one policy); default a new one. */
  evaluator?: Evaluator;
  /**
   * Write the run's flight records (docs/embedding.md, "The monitor, without the server"): a
   * directory (one file per run, `<runId>.jsonl`) or a writer. Default none.
   */
  records?: RecordsOption;
  /** The run's id in its records and file name: letters, digits, `_`, `.`, `-`. Default `run-<time>-<random>`. */
  runId?: string;
}

/**
 * A monitor for one run of an agent loop that runs its own tools: `check` each proposed call
 * before running it, `record` it with its outcome after (docs/embedding.md).
 */
export function createMonitor(policy: Policy, options: MonitorOptions = {}): Monitor {
  const { task, state, evaluator: shared, records, runId, ...evaluatorOptions } = options;
  if (shared && shared.policy !== policy)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `options.evaluator is for policy ${shared.policy.name}, not ${policy.name}`,
    );
  const evaluator = shared ?? new Evaluator(policy, evaluatorOptions);
  const flight =
    records !== undefined
      ? new RunRecords(records, policy.name, state?.task ?? task ?? [], runId)
      : undefined;
  return state ? evaluator.monitorFromJSON(state, flight) : evaluator.monitor(task, flight);
}

/**
 * The evaluator's two questions, answered from a policy and the run so far (an OpenAI
 * `messages` array or a trace): may this call be made (`decide`), and what may come next (`next`).
 * It owns what it learns on the way (recent runs, their game templates, distances, duties,
 * advice), so two evaluators share nothing.
 *
 * The jobs live in their own modules: `run-cache.ts` (runs by conversation), `judge.ts`
 * (verdicts and findings), `advisor.ts` (repairs and prerequisites), `duties.ts` (open duties),
 * `next-calls.ts` (what may come next).
 */
export class Evaluator {
  private readonly runs: RunCache;
  private readonly judge: Judge;
  private readonly nextCalls: NextCalls;
  readonly severities: Severities;

  constructor(
    readonly policy: Policy,
    readonly options: EvaluatorOptions = {},
  ) {
    this.judge = new Judge(policy, options);
    this.nextCalls = new NextCalls(this.judge);
    this.severities = new Severities(policy);
    this.runs = new RunCache(policy, this.parts, options.runCache);
  }

  /** Message prefixes whose runs are kept now (see `EvaluatorOptions.runCache`). */
  get cachedMessages(): number {
    return this.runs.size;
  }

  private get parts() {
    return { judge: this.judge, nextCalls: this.nextCalls, severities: this.severities };
  }

  /**
   * The run after a conversation (an OpenAI `messages` array or a trace). The server is stateless:
   * every request carries the whole conversation. The run after each message prefix is kept
   * (`run-cache.ts`), so a request that continues an earlier one pays only for its new messages.
   */
  run(history: unknown): Run {
    return this.runs.get(history).run;
  }

  /**
   * The monitor after a conversation: its run, and what the severities remember (refusals,
   * approvals, a stop). A new monitor each time, made from the kept state: stepping it (say by
   * the calls of a message being judged, `recordPending`) changes nothing kept.
   */
  monitorOf(history: unknown): Monitor {
    return this.runs.get(history);
  }

  /** A new monitor for an agent loop that runs its own tools (`createMonitor`). */
  monitor(task: readonly TaskCall[] = [], records?: RunRecords): Monitor {
    return new Monitor(this.parts, task, records);
  }

  /** A monitor from its JSON (`Monitor.toJSON`): the log replayed once. */
  monitorFromJSON(json: MonitorJSON, records?: RunRecords): Monitor {
    return Monitor.fromJSON(this.parts, json, records);
  }

  /**
   * The decision on a call proposed after the conversation, as its rules' severities say; its
   * advice is searched within `budget` (default: a budget of its own, `options.search`).
   */
  decide(history: unknown, proposed: ProposedCall, budget?: SearchBudget): Decision {
    return this.monitorOf(history).decide(proposed, true, budget);
  }

  /**
   * `decide`, and for a call blocked only by argument constraints that the concrete search
   * could not repair, a repair from the solver (`Monitor.repairWithSolver`): only the tool's
   * repairable arguments change, preferring values from the enum, the task, the history and the
   * advice. A solver timeout or error leaves the call blocked and says so in `failClosed`.
   */
  async decideWithRepair(history: unknown, proposed: ProposedCall, solver: SolverClient): Promise<Decision> {
    const monitor = this.monitorOf(history);
    return monitor.repairWithSolver(monitor.decide(proposed), solver);
  }

  next(history: unknown): NextAnswer {
    return this.nextCalls.answer(this.run(history));
  }
}
