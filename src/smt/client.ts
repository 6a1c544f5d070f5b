/**
 * `SolverClient`: the main-process side of the solver. It starts the solver process on first
 * use, sends it one request at a time, bounds every request with a timeout, and replaces the
 * process when it overruns or dies. A timeout or crash rejects with a `MentorError`
 * (`MNT_ERR_SMT_TIMEOUT`, `MNT_ERR_SMT_CRASHED`); the evaluator fails closed on it.
 */
import { type ChildProcess, fork } from "node:child_process";
import { MentorError } from "../errors/index.js";
import { type Expression, evaluateExpression, forEachNode, type Value } from "../expression/index.js";
import { repairWithCandidates } from "./candidates.js";
import { repairDirectly, satisfiableDirectly } from "./direct.js";
import type {
  ConstantScope,
  HistoryEntry,
  RepairRequest,
  RepairResult,
  SatisfiableRequest,
  SatisfiableResult,
  SolverStats,
  WireMessage,
  WireReady,
  WireRepair,
  WireReply,
  WireRequest,
  WireScope,
} from "./protocol.js";

export interface SolverClientOptions {
  /**
   * How long one request may take, in ms (default 2000). Z3 gets it as its own time limit
   * (which it overshoots); the process is killed if no answer comes within twice the limit
   * plus 1000 ms.
   */
  timeoutMs?: number;
  /** How long the process may take to start and load Z3, in ms (default 30000). */
  startTimeoutMs?: number;
  /**
   * For stress tests: start the solver process with `--expose-gc` and force a garbage collection
   * every this many ms, also while checks run (default: never).
   */
  forcedGcIntervalMs?: number;
}

interface Running {
  child: ChildProcess;
  ready: Promise<void>;
  /** The request waiting for an answer, if any. */
  pending: { id: number; resolve: (value: unknown) => void; reject: (error: Error) => void } | undefined;
}

const workerPath = new URL("./worker.js", import.meta.url);

export class SolverClient {
  readonly #timeoutMs: number;
  readonly #startTimeoutMs: number;
  readonly #forcedGcIntervalMs: number | undefined;
  #running: Running | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  #closed = false;
  #starts = 0;

  constructor(options: SolverClientOptions = {}) {
    this.#timeoutMs = positive(options.timeoutMs ?? 2000, "timeoutMs");
    this.#startTimeoutMs = positive(options.startTimeoutMs ?? 30000, "startTimeoutMs");
    this.#forcedGcIntervalMs =
      options.forcedGcIntervalMs === undefined
        ? undefined
        : positive(options.forcedGcIntervalMs, "forcedGcIntervalMs");
  }

  /** The arguments satisfying all constraints with the fewest repairable arguments changed. */
  repair(request: RepairRequest): Promise<RepairResult> {
    if (request.candidatesFirst !== false) {
      try {
        const quick = repairWithCandidates(request) ?? repairDirectly(request);
        if (quick !== undefined) return Promise.resolve(quick);
      } catch {
        // A history function that throws: let the solver path report it the same way.
      }
    }
    const timeoutMs = request.timeoutMs ?? this.#timeoutMs;
    return this.#request(wireRepair(request, timeoutMs), timeoutMs) as Promise<RepairResult>;
  }

  /** Whether some arguments (with `fixed` ones as given) satisfy all constraints together. */
  satisfiable(request: SatisfiableRequest): Promise<SatisfiableResult> {
    if (request.directFirst !== false) {
      try {
        const direct = satisfiableDirectly(request);
        if (direct !== undefined) return Promise.resolve(direct);
      } catch {
        // A history function that throws: let the solver path report it the same way.
      }
    }
    const timeoutMs = request.timeoutMs ?? this.#timeoutMs;
    return this.#request(
      {
        kind: "satisfiable",
        tool: request.tool,
        constraints: request.constraints,
        scope: wireScope(request.constraints, request.scope),
        fixed: request.fixed ?? {},
        timeoutMs,
      },
      timeoutMs,
    ) as Promise<SatisfiableResult>;
  }

  /** Memory and counters of the solver process (starting it if needed). */
  stats(): Promise<SolverStats> {
    return this.#request({ kind: "stats" }, this.#timeoutMs) as Promise<SolverStats>;
  }

  /** The process id of the current solver process, if one is running. */
  get pid(): number | undefined {
    return this.#running?.child.pid;
  }

  /** How many solver processes this client has started (restarts included). */
  get starts(): number {
    return this.#starts;
  }

  /** @internal For tests: keeps the solver process busy for `ms` without answering. */
  block(ms: number, timeoutMs: number): Promise<unknown> {
    return this.#request({ kind: "block", ms }, timeoutMs);
  }

  /** Stops the solver process; pending and later requests reject with `MNT_ERR_SMT_CLOSED`. */
  async close(): Promise<void> {
    this.#closed = true;
    const running = this.#running;
    if (running === undefined) return;
    this.#running = undefined;
    const { child } = running;
    running.pending?.reject(new MentorError("MNT_ERR_SMT_CLOSED", "the solver client was closed"));
    running.pending = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
    await exited;
    clearTimeout(timer);
  }

  #request(request: WireRequest, timeoutMs: number): Promise<unknown> {
    const result = this.#tail.then(() => this.#send(request, timeoutMs));
    this.#tail = result.catch(() => undefined);
    return result;
  }

  async #send(request: WireRequest, timeoutMs: number): Promise<unknown> {
    if (this.#closed) throw new MentorError("MNT_ERR_SMT_CLOSED", "the solver client was closed");
    const running = this.#running ?? this.#start();
    await running.ready;
    const id = this.#nextId++;
    const hardLimitMs = 2 * timeoutMs + 1000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        running.pending = undefined;
        this.#stop(running);
        reject(
          new MentorError(
            "MNT_ERR_SMT_TIMEOUT",
            `the solver did not answer within ${hardLimitMs} ms (limit ${timeoutMs} ms); its process was restarted`,
          ),
        );
      }, hardLimitMs);
      running.pending = {
        id,
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const message: WireMessage = { id, request };
      running.child.send(message);
    });
  }

  #start(): Running {
    this.#starts++;
    const gc = this.#forcedGcIntervalMs;
    const child = fork(workerPath, [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      serialization: "json",
      execArgv: gc === undefined ? [] : ["--expose-gc"],
      env: gc === undefined ? process.env : { ...process.env, MENTOR_SMT_FORCED_GC_MS: String(gc) },
    });
    const running: Running = { child, ready: Promise.resolve(), pending: undefined };
    this.#running = running;
    running.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#stop(running);
        reject(
          new MentorError(
            "MNT_ERR_SMT_TIMEOUT",
            `the solver process did not start within ${this.#startTimeoutMs} ms`,
          ),
        );
      }, this.#startTimeoutMs);
      child.on("message", (message: WireReady | WireReply) => {
        if ("ready" in message) {
          clearTimeout(timer);
          resolve();
          return;
        }
        const pending = running.pending;
        if (pending === undefined || pending.id !== message.id) return;
        running.pending = undefined;
        if (message.ok) pending.resolve(message.result);
        else if (message.error === "timeout") {
          pending.reject(new MentorError("MNT_ERR_SMT_TIMEOUT", `the solver gave up: ${message.message}`));
        } else {
          pending.reject(new MentorError("MNT_ERR_SMT_CRASHED", `the solver failed: ${message.message}`));
        }
      });
      // A send to a process that just died: its exit handler rejects the request.
      child.on("error", () => undefined);
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        if (this.#running === running) this.#running = undefined;
        const error = this.#closed
          ? new MentorError("MNT_ERR_SMT_CLOSED", "the solver client was closed")
          : new MentorError(
              "MNT_ERR_SMT_CRASHED",
              `the solver process exited (code ${code}, signal ${signal})`,
            );
        reject(error);
        running.pending?.reject(error);
        running.pending = undefined;
      });
    });
    running.ready.catch(() => undefined);
    // The process must not keep the caller alive: only a pending request's timer does.
    child.unref();
    child.channel?.unref();
    return running;
  }

  #stop(running: Running): void {
    if (this.#running === running) this.#running = undefined;
    running.child.kill("SIGKILL");
  }
}

function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new MentorError("MNT_ERR_BAD_INPUT", `${name} must be a positive number of milliseconds`);
  }
  return value;
}

const historyFunctionNames = new Set(["last", "held", "count", "values"]);

/** A repair request as the solver process receives it (history calls evaluated here). */
export function wireRepair(request: RepairRequest, timeoutMs: number): WireRepair {
  return {
    kind: "repair",
    tool: request.tool,
    arguments: request.arguments,
    constraints: request.constraints,
    scope: wireScope(request.constraints, request.scope),
    repairable: request.repairable,
    candidates: request.candidates ?? {},
    timeoutMs,
  };
}

/** The constant scope as JSON: every history call the constraints make, evaluated here. */
function wireScope(constraints: readonly Expression[], scope: ConstantScope = {}): WireScope {
  const history: HistoryEntry[] = [];
  for (const constraint of constraints) {
    forEachNode(constraint, (node) => {
      if (node.kind !== "call" || !historyFunctionNames.has(node.name)) return;
      const args: Value[] = node.arguments.map((argument) => evaluateExpression(argument, {}));
      const value = evaluateExpression(node, { history: scope.history });
      history.push({ name: node.name as HistoryEntry["name"], arguments: args, value });
    });
  }
  const wire: WireScope = { history };
  if (scope.outcome !== undefined) wire.outcome = scope.outcome;
  if (scope.variables !== undefined) wire.variables = scope.variables;
  if (scope.task !== undefined) wire.task = scope.task;
  return wire;
}
