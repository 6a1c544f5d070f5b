/**
 * Repair and satisfiability on a solver session of either backend: the WASM build inside the
 * solver process (`worker.ts`, `wasm-session.ts`), or the native `z3` binary driven from the
 * calling process (`native.ts`). Every repair the solver finds is checked with the TypeScript
 * evaluator before it is returned, so a difference between Z3's arithmetic and JavaScript's
 * can only turn a repair into "unsupported". On the WASM build the caller must hold back
 * garbage-collection finalizers while these run.
 */
import { type HistoryFunctions, holdsIn, type Scope, type Value, valuesEqual } from "../expression/index.js";
import { type ArgumentVariable, argumentsRead, Encoder, fitsSort, sortOf, Unsupported } from "./encode.js";
import type {
  HistoryEntry,
  RepairResult,
  SatisfiableResult,
  SolverTool,
  WireRepair,
  WireSatisfiable,
  WireScope,
} from "./protocol.js";
import { maxRepairableArguments, subsets } from "./search.js";
import type { Terms } from "./terms.js";

/** Z3 gave up within its time limit. */
export class SolverTimeout extends Error {}

export function historyFromTable(entries: readonly HistoryEntry[]): HistoryFunctions {
  const find = (name: string, args: Value[]): Value | undefined =>
    entries.find((entry) => entry.name === name && valuesEqual(entry.arguments, args))?.value;
  return {
    last: (tool) => find("last", [tool]) ?? null,
    outcomes: (tool) => {
      const value = find("outcomes", [tool]);
      return Array.isArray(value) ? value : [];
    },
    held: (proposition) => find("held", [proposition]) === true,
    count: (tool) => {
      const value = find("count", [tool]);
      return typeof value === "number" ? value : 0;
    },
    values: (tool, argument) => {
      const value = find("values", [tool, argument]);
      return Array.isArray(value) ? value : [];
    },
  };
}

function scopeWith(scope: WireScope, args: Record<string, Value>): Scope {
  return {
    arguments: args,
    outcome: scope.outcome ?? null,
    variables: scope.variables ?? {},
    task: scope.task ?? {},
    history: historyFromTable(scope.history),
  };
}

/**
 * One solver session of a backend (a Z3 solver object in the WASM build, a push/pop scope of
 * the native binary): the terms to build with, assertions, scopes and checks.
 */
export interface Session<T> {
  readonly terms: Terms<T>;
  add(formula: T): void;
  push(): void;
  pop(): void;
  /** Decides the assertions within `timeoutMs`; throws `SolverTimeout` when Z3 answers unknown. */
  check(timeoutMs: number): Promise<"sat" | "unsat">;
  /**
   * After a `sat` check (before any pop): the model's values of the variables, written into
   * `into` (an absent variable's name is deleted from it).
   */
  readModel(variables: readonly ArgumentVariable<T>[], into: Record<string, Value>): Promise<void>;
}

let variableCounter = 0;

function makeVariables<T>(
  terms: Terms<T>,
  tool: SolverTool,
  names: Iterable<string>,
): Map<string, ArgumentVariable<T>> {
  const variables = new Map<string, ArgumentVariable<T>>();
  for (const name of names) {
    const parameter = tool.parameters.find((candidate) => candidate.name === name);
    if (parameter === undefined) continue;
    const { sort, members } = sortOf(name, parameter.type);
    const id = variableCounter++;
    const value = terms.constant(sort, `v${id}`);
    variables.set(name, { name, sort, members, present: terms.constant("bool", `p${id}`), value });
  }
  return variables;
}

/**
 * Fewest changes by search: a call that complies (checked with the evaluator) is kept; with
 * more than two repairable arguments, one check rules out "no repair" at once. Then, for
 * k = 1, 2, …, each set of k arguments in turn is freed while the others keep their
 * proposed values, first with the freed arguments restricted to their preferred values (enum
 * members and the caller's candidates), then without. Plain solver checks with push/pop are
 * much faster than `Optimize` on strings, and the arguments of one call are few.
 */
export async function repair<T>(session: Session<T>, request: WireRepair): Promise<RepairResult> {
  const t = session.terms;
  const required = new Set(request.tool.required ?? []);
  const read = argumentsRead(request.constraints);
  const chosen = [...read].filter((name) => request.repairable.includes(name));
  const constants: Record<string, Value> = { ...request.arguments };
  for (const name of chosen) delete constants[name];
  const deadline = performance.now() + request.timeoutMs;
  try {
    const variables = makeVariables(t, request.tool, chosen);
    if (variables.size > maxRepairableArguments) {
      throw new Unsupported(`more than ${maxRepairableArguments} repairable arguments in one repair`);
    }
    for (const name of chosen) if (!variables.has(name)) constants[name] = request.arguments[name] ?? null;
    const encoder = new Encoder(t, variables, scopeWith(request.scope, constants));
    for (const constraint of request.constraints) session.add(encoder.holds(constraint));
    const list = [...variables.values()];
    const keep = new Map<string, T | undefined>();
    const prefer = new Map<string, T | undefined>();
    for (const variable of list) {
      session.add(encoder.domain(variable, required.has(variable.name)));
      const proposed = request.arguments[variable.name] ?? null;
      keep.set(
        variable.name,
        proposed === null
          ? t.not(variable.present)
          : fitsSort(proposed, variable.sort, variable.members)
            ? t.and(variable.present, encoder.equalsValue(variable, proposed))
            : undefined,
      );
      const preferred = [...(variable.members ?? []), ...(request.candidates[variable.name] ?? [])].filter(
        (value) => fitsSort(value, variable.sort, variable.members) && !valuesEqual(value, proposed),
      );
      prefer.set(
        variable.name,
        preferred.length === 0
          ? undefined
          : t.and(variable.present, t.or(...preferred.map((value) => encoder.equalsValue(variable, value)))),
      );
    }
    /** The repaired arguments under the assumptions, or undefined if there are none. */
    const attempt = async (assumptions: T[]): Promise<Record<string, Value> | undefined> => {
      session.push();
      try {
        for (const assumption of assumptions) session.add(assumption);
        if ((await checkBefore(session, deadline)) === "unsat") return undefined;
        const repaired: Record<string, Value> = { ...request.arguments };
        await session.readModel(list, repaired);
        return repaired;
      } finally {
        session.pop();
      }
    };
    const proposedScope = scopeWith(request.scope, request.arguments);
    if (request.constraints.every((constraint) => holdsIn(constraint, proposedScope))) {
      return { status: "repaired", arguments: { ...request.arguments }, changed: [] };
    }
    // With few arguments the search below is short; with more, rule out "no repair" at once.
    if (list.length > 2) {
      session.push();
      try {
        if ((await checkBefore(session, deadline)) === "unsat") return { status: "unsat" };
      } finally {
        session.pop();
      }
    }
    let repaired: Record<string, Value> | undefined;
    search: for (let size = 1; size <= list.length; size++) {
      for (const freed of subsets(list.length, size)) {
        const kept: T[] = [];
        let possible = true;
        for (const [index, variable] of list.entries()) {
          if (freed.includes(index)) continue;
          const expression = keep.get(variable.name);
          if (expression === undefined) possible = false;
          else kept.push(expression);
        }
        if (!possible) continue;
        const preferred = freed.flatMap((index) => {
          const expression = prefer.get((list[index] as ArgumentVariable<T>).name);
          return expression === undefined ? [] : [expression];
        });
        for (const assumptions of preferred.length > 0 ? [[...kept, ...preferred], kept] : [kept]) {
          repaired = await attempt(assumptions);
          if (repaired !== undefined) break search;
        }
      }
    }
    if (repaired === undefined) return { status: "unsat" };
    const scope = scopeWith(request.scope, repaired);
    const failing = request.constraints.findIndex((constraint) => !holdsIn(constraint, scope));
    if (failing >= 0) {
      return {
        status: "unsupported",
        reason: `the solver's repair does not satisfy constraint ${failing} under the evaluator (number rounding?)`,
      };
    }
    const changed = [...variables.keys()].filter(
      (name) => !valuesEqual(repaired?.[name] ?? null, request.arguments[name] ?? null),
    );
    return { status: "repaired", arguments: repaired, changed };
  } catch (error) {
    if (error instanceof Unsupported) return { status: "unsupported", reason: error.message };
    throw error;
  }
}

async function checkBefore<T>(session: Session<T>, deadline: number): Promise<"sat" | "unsat"> {
  const remaining = Math.round(deadline - performance.now());
  if (remaining <= 0) throw new SolverTimeout("the repair search ran out of time");
  return session.check(remaining);
}

export async function satisfiable<T>(
  session: Session<T>,
  request: WireSatisfiable,
): Promise<SatisfiableResult> {
  const t = session.terms;
  const required = new Set(request.tool.required ?? []);
  const names = new Set([...argumentsRead(request.constraints), ...Object.keys(request.fixed)]);
  try {
    const variables = makeVariables(t, request.tool, names);
    const constants: Record<string, Value> = {};
    for (const name of names) if (!variables.has(name)) constants[name] = request.fixed[name] ?? null;
    const encoder = new Encoder(t, variables, scopeWith(request.scope, constants));
    for (const constraint of request.constraints) session.add(encoder.holds(constraint));
    for (const variable of variables.values()) {
      const isFixed = Object.hasOwn(request.fixed, variable.name);
      session.add(encoder.domain(variable, required.has(variable.name) && !isFixed));
      if (!isFixed) continue;
      const value = request.fixed[variable.name] ?? null;
      if (value === null) session.add(t.not(variable.present));
      else if (fitsSort(value, variable.sort, undefined)) {
        session.add(t.and(variable.present, encoder.equalsValue(variable, value)));
      } else {
        throw new Unsupported(`fixed value of '${variable.name}' does not fit its declared type`);
      }
    }
    if ((await session.check(Math.max(1, Math.round(request.timeoutMs)))) === "unsat")
      return { status: "unsat" };
    const example: Record<string, Value> = { ...constants };
    for (const name of Object.keys(example)) if (example[name] === null) delete example[name];
    await session.readModel([...variables.values()], example);
    return { status: "sat", example };
  } catch (error) {
    if (error instanceof Unsupported) return { status: "unsupported", reason: error.message };
    throw error;
  }
}
