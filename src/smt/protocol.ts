/**
 * The public request and result types of the solver, and the plain-JSON messages exchanged
 * with the solver process. Expressions are plain data and travel as they are; history
 * functions cannot, so the client evaluates every history call the constraints make and
 * sends the results as a table.
 */
import type {
  Expression,
  FieldType,
  HistoryFunctionName,
  HistoryFunctions,
  Value,
} from "../expression/index.js";

/** The part of a tool declaration the solver needs (a `ToolSpec` fits). */
export interface SolverTool {
  name: string;
  parameters: readonly { name: string; type: FieldType }[];
  /** Arguments a call must carry: a repair never removes them. Default: none. */
  required?: readonly string[];
}

/**
 * What the constraints' names other than `a` refer to: constants evaluated before encoding,
 * exactly as the evaluator's `Scope` (without `arguments`).
 */
export interface ConstantScope {
  /** `o`: the outcome, if the constraint reads one. */
  outcome?: Value;
  /** Entity variables by name. */
  variables?: Record<string, Value>;
  /** `task.<call>.<field>`: grounded task fields by call name. */
  task?: Record<string, Value>;
  /** History functions; if absent they give null / false / 0 / []. */
  history?: HistoryFunctions;
}

export interface RepairRequest {
  tool: SolverTool;
  /** The proposed call's arguments. */
  arguments: Record<string, Value>;
  /** The constraints that apply to the call; all must hold after the repair. */
  constraints: readonly Expression[];
  /** Constants for everything but `a`. Default: empty. */
  scope?: ConstantScope;
  /** The arguments a repair may change (`ToolSpec.repairable`); every other argument stays as proposed. */
  repairable: readonly string[];
  /** Preferred values per argument (task fields, history values, advice), besides enum members. */
  candidates?: Record<string, readonly Value[]>;
  /**
   * Answer without Z3 where that is exact (default true): the proposal and single-argument
   * changes to candidate values checked with the evaluator, then the direct search of
   * `direct.ts`; false sends every request to the solver (for measurements and comparisons).
   */
  candidatesFirst?: boolean;
  /** Overrides the client's `timeoutMs` for this request. */
  timeoutMs?: number;
}

export type RepairResult =
  /** All constraints hold for `arguments`; `changed` lists the arguments that differ from the proposal (empty if it already complied). */
  | { status: "repaired"; arguments: Record<string, Value>; changed: string[] }
  /** No values of the repairable arguments satisfy the constraints. */
  | { status: "unsat" }
  /** The constraints use something the encoding does not model faithfully: fall back. */
  | { status: "unsupported"; reason: string };

export interface SatisfiableRequest {
  tool: SolverTool;
  constraints: readonly Expression[];
  scope?: ConstantScope;
  /** Arguments fixed to these values (null: absent); the others are free. Default: none. */
  fixed?: Record<string, Value>;
  /** Decide without Z3 where that is exact (`direct.ts`; default true); false asks Z3 (for measurements). */
  directFirst?: boolean;
  timeoutMs?: number;
}

export type SatisfiableResult =
  /** Some arguments satisfy every constraint; `example` is one such call (absent arguments left out). */
  | { status: "sat"; example: Record<string, Value> }
  | { status: "unsat" }
  | { status: "unsupported"; reason: string };

/** Figures about the solver process, for monitoring and the memory tests. */
export interface SolverStats {
  pid: number;
  /** Resident set size of the solver process, in bytes. */
  rss: number;
  heapUsed: number;
  /** Requests answered by this process. */
  requests: number;
  /** How long `init()` of z3-solver took in this process, in ms. */
  initMs: number;
}

/** One history call the constraints make, with its value. */
export interface HistoryEntry {
  name: HistoryFunctionName;
  arguments: Value[];
  value: Value;
}

export interface WireScope {
  outcome?: Value;
  variables?: Record<string, Value>;
  task?: Record<string, Value>;
  history: HistoryEntry[];
}

export interface WireRepair {
  kind: "repair";
  tool: SolverTool;
  arguments: Record<string, Value>;
  constraints: readonly Expression[];
  scope: WireScope;
  repairable: readonly string[];
  candidates: Record<string, readonly Value[]>;
  timeoutMs: number;
}

export interface WireSatisfiable {
  kind: "satisfiable";
  tool: SolverTool;
  constraints: readonly Expression[];
  scope: WireScope;
  fixed: Record<string, Value>;
  timeoutMs: number;
}

export type WireRequest =
  | WireRepair
  | WireSatisfiable
  | { kind: "stats" }
  /** For tests: keep the process busy for `ms` without answering (a stand-in for a runaway check). */
  | { kind: "block"; ms: number };

export type WireMessage = { id: number; request: WireRequest };

export type WireReply =
  | { id: number; ok: true; result: RepairResult | SatisfiableResult | SolverStats | null }
  /** `timeout`: Z3 answered unknown within its own time limit. */
  | { id: number; ok: false; error: "timeout" | "internal"; message: string };

export type WireReady = { ready: true; initMs: number };
