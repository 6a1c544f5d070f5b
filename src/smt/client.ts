/**
 * `SolverClient`: the main-process side of the solver. It starts the solver process on first
 * use — the native `z3` binary where one is installed, else z3-solver's WASM build in a Node
 * child process — sends it one request at a time, bounds every request with a timeout, and
 * replaces the process when it overruns or dies. A timeout or crash rejects with a `MentorError`
 * (`MNT_ERR_SMT_TIMEOUT`, `MNT_ERR_SMT_CRASHED`); the evaluator fails closed on it.
 */
import { MentorError } from "../errors/index.js";
import {
  type Expression,
  evaluateExpression,
  forEachNode,
  isHistoryFunctionName,
  type Value,
} from "../expression/index.js";
import { repairWithCandidates } from "./candidates.js";
import { repairDirectly, satisfiableDirectly } from "./direct.js";
import { answerNative, findZ3Binary, NativeFailure, NativeProcess } from "./native.js";
import type {
  ConstantScope,
  HistoryEntry,
  RepairRequest,
  RepairResult,
  SatisfiableRequest,
  SatisfiableResult,
  SolverStats,
  WireRepair,
  WireRequest,
  WireScope,
} from "./protocol.js";
import { SolverTimeout } from "./solve.js";
import { WasmProcess } from "./wasm-process.js";

/** Which Z3 build answers: the native binary, or the WASM build (z3-solver) in a child process. */
export type SolverBackend = "native" | "wasm";

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
   * The Z3 build (default: the `MENTOR_SMT_BACKEND` environment variable, else `"auto"`):
   * `"native"` drives the `z3` binary over SMT-LIB (fails to construct if there is none),
   * `"wasm"` runs z3-solver in a child process, `"auto"` takes native where `z3` is found.
   */
  backend?: SolverBackend | "auto";
  /** The `z3` binary for the native backend (default: `MENTOR_Z3_PATH`, else `z3` on `PATH`). */
  z3Path?: string;
  /**
   * For stress tests: start the solver process with `--expose-gc` and force a garbage collection
   * every this many ms, also while checks run (default: never; WASM backend only).
   */
  forcedGcIntervalMs?: number;
}

/** A running solver process of either backend, as the client drives it. */
interface Running {
  readonly pid: number | undefined;
  readonly ready: Promise<void>;
  /** Answers one request; rejects with a `MentorError` (timeout, crash, closed). */
  answer(request: WireRequest): Promise<unknown>;
  kill(): void;
  close(): Promise<void>;
}

export class SolverClient {
  readonly #timeoutMs: number;
  readonly #startTimeoutMs: number;
  readonly #forcedGcIntervalMs: number | undefined;
  readonly #backend: SolverBackend;
  readonly #z3Path: string | undefined;
  #running: Running | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;
  #starts = 0;

  constructor(options: SolverClientOptions = {}) {
    this.#timeoutMs = positive(options.timeoutMs ?? 2000, "timeoutMs");
    this.#startTimeoutMs = positive(options.startTimeoutMs ?? 30000, "startTimeoutMs");
    this.#forcedGcIntervalMs =
      options.forcedGcIntervalMs === undefined
        ? undefined
        : positive(options.forcedGcIntervalMs, "forcedGcIntervalMs");
    const backend = options.backend ?? process.env.MENTOR_SMT_BACKEND ?? "auto";
    if (backend !== "auto" && backend !== "native" && backend !== "wasm") {
      throw new MentorError(
        "MNT_ERR_BAD_INPUT",
        `unknown solver backend '${backend}' (MENTOR_SMT_BACKEND or the backend option): use auto, native or wasm`,
      );
    }
    const z3Path =
      backend === "wasm" ? undefined : findZ3Binary(options.z3Path ?? process.env.MENTOR_Z3_PATH);
    if (backend === "native" && z3Path === undefined) {
      throw new MentorError(
        "MNT_ERR_BAD_INPUT",
        `the native solver backend needs the z3 binary (${options.z3Path ?? process.env.MENTOR_Z3_PATH ?? "z3 on PATH"}); install it (apt-get install z3) or use the wasm backend`,
      );
    }
    this.#z3Path = z3Path;
    this.#backend = z3Path === undefined ? "wasm" : "native";
  }

  /** The Z3 build this client uses. */
  get backend(): SolverBackend {
    return this.#backend;
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
    return this.#running?.pid;
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
    await running.close();
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
    const hardLimitMs = 2 * timeoutMs + 1000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#stop(running);
        reject(
          new MentorError(
            "MNT_ERR_SMT_TIMEOUT",
            `the solver did not answer within ${hardLimitMs} ms (limit ${timeoutMs} ms); its process was restarted`,
          ),
        );
      }, hardLimitMs);
      running.answer(request).then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  #start(): Running {
    this.#starts++;
    const running = this.#z3Path === undefined ? this.#startWasm() : this.#startNative(this.#z3Path);
    this.#running = running;
    return running;
  }

  #startWasm(): Running {
    const running: WasmProcess = new WasmProcess({
      startTimeoutMs: this.#startTimeoutMs,
      forcedGcIntervalMs: this.#forcedGcIntervalMs,
      onExit: () => {
        if (this.#running === running) this.#running = undefined;
      },
      isClosed: () => this.#closed,
    });
    return running;
  }

  #startNative(binary: string): Running {
    const native = new NativeProcess(binary, () => {
      if (this.#running === running) this.#running = undefined;
    });
    const failure = (error: unknown): MentorError => {
      if (error instanceof MentorError) return error;
      if (this.#closed) return new MentorError("MNT_ERR_SMT_CLOSED", "the solver client was closed");
      const text = error instanceof Error ? error.message : String(error);
      if (error instanceof SolverTimeout)
        return new MentorError("MNT_ERR_SMT_TIMEOUT", `the solver gave up: ${text}`);
      return new MentorError("MNT_ERR_SMT_CRASHED", `the solver failed: ${text}`);
    };
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        native.kill();
        reject(
          new MentorError(
            "MNT_ERR_SMT_TIMEOUT",
            `the z3 process did not start within ${this.#startTimeoutMs} ms`,
          ),
        );
      }, this.#startTimeoutMs);
      native.ready.then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(failure(error));
        },
      );
    });
    ready.catch(() => undefined);
    const running: Running = {
      get pid() {
        return native.pid;
      },
      ready,
      answer: (request) =>
        answerNative(native, request).catch((error: unknown) => {
          // A failed exchange leaves the process in an unknown state: start a fresh one.
          if (error instanceof NativeFailure && !native.exited) this.#stop(running);
          throw failure(error);
        }),
      kill: () => native.kill(),
      close: () => native.close(),
    };
    return running;
  }

  #stop(running: Running): void {
    if (this.#running === running) this.#running = undefined;
    running.kill();
  }
}

function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new MentorError("MNT_ERR_BAD_INPUT", `${name} must be a positive number of milliseconds`);
  }
  return value;
}

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
      if (node.kind !== "call" || !isHistoryFunctionName(node.name)) return;
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
