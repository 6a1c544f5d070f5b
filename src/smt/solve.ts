/**
 * Repair and satisfiability on a Z3 context; runs inside the solver process. Every repair the
 * solver finds is checked with the TypeScript evaluator before it is returned, so a difference
 * between Z3's arithmetic and JavaScript's can only turn a repair into "unsupported".
 * The caller (the solver process) must hold back garbage-collection finalizers while these run.
 */
import type { Bool, Context, Expr, IntNum, Model, Optimize, Seq, Solver } from "z3-solver";
import { type HistoryFunctions, holdsIn, type Scope, type Value, valuesEqual } from "../expression/index.js";
import {
  type ArgumentVariable,
  argumentsRead,
  decodeZ3String,
  Encoder,
  fitsSort,
  sortOf,
  Unsupported,
} from "./encode.js";
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

type Z3 = Context<"main">;

/** Z3 gave up within its time limit. */
export class SolverTimeout extends Error {}

export function historyFromTable(entries: readonly HistoryEntry[]): HistoryFunctions {
  const find = (name: string, args: Value[]): Value | undefined =>
    entries.find((entry) => entry.name === name && valuesEqual(entry.arguments, args))?.value;
  return {
    last: (tool) => find("last", [tool]) ?? null,
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

let variableCounter = 0;

function makeVariables(z3: Z3, tool: SolverTool, names: Iterable<string>): Map<string, ArgumentVariable> {
  const variables = new Map<string, ArgumentVariable>();
  for (const name of names) {
    const parameter = tool.parameters.find((candidate) => candidate.name === name);
    if (parameter === undefined) continue;
    const { sort, members } = sortOf(name, parameter.type);
    const id = variableCounter++;
    const value =
      sort === "bool"
        ? z3.Bool.const(`v${id}`)
        : sort === "int"
          ? z3.Int.const(`v${id}`)
          : sort === "real"
            ? z3.Real.const(`v${id}`)
            : z3.String.const(`v${id}`);
    variables.set(name, { name, sort, members, present: z3.Bool.const(`p${id}`), value });
  }
  return variables;
}

async function check(optimize: Optimize<"main">, timeoutMs: number): Promise<"sat" | "unsat"> {
  optimize.set("timeout", Math.max(1, Math.round(timeoutMs)));
  const result = await optimize.check();
  if (result === "unknown") throw new SolverTimeout(`Z3 gave up (unknown) within ${timeoutMs} ms`);
  return result;
}

function readModel(
  z3: Z3,
  model: Model<"main">,
  variables: ReadonlyMap<string, ArgumentVariable>,
  into: Record<string, Value>,
): void {
  for (const variable of variables.values()) {
    if (!z3.isTrue(model.eval(variable.present, true))) {
      delete into[variable.name];
      continue;
    }
    const value = model.eval(variable.value, true);
    switch (variable.sort) {
      case "bool":
        into[variable.name] = z3.isTrue(value);
        break;
      case "int":
        into[variable.name] = Number(numeral(value));
        break;
      case "real": {
        const [numerator, denominator = "1"] = numeral(value).split("/");
        into[variable.name] = Number(numerator) / Number(denominator);
        break;
      }
      case "string":
        into[variable.name] = readString(model, variable.value as Seq<"main">, value as Seq<"main">);
        break;
    }
  }
}

/** The text of a numeral in a model: "12", "-3", "7/2". */
function numeral(value: Expr<"main">): string {
  return (value as unknown as IntNum<"main">).asString();
}

function readString(model: Model<"main">, variable: Seq<"main">, value: Seq<"main">): string {
  const length = Number(numeral(model.eval(variable.length(), true)));
  const decoded = decodeZ3String(value.asString());
  if (decoded !== undefined && [...decoded].length === length) return decoded;
  let text = "";
  for (let index = 0; index < length; index++) {
    text += String.fromCodePoint(Number(numeral(model.eval(variable.at(index).toCode(), true))));
  }
  return text;
}

/**
 * Fewest changes by search: a call that complies (checked with the evaluator) is kept; with
 * more than two repairable arguments, one check rules out "no repair" at once. Then, for
 * k = 1, 2, …, each set of k arguments in turn is freed while the others keep their
 * proposed values, first with the freed arguments restricted to their preferred values (enum
 * members and the caller's candidates), then without. Plain `Solver` checks with push/pop are
 * much faster than `Optimize` on strings, and the arguments of one call are few.
 */
export async function repair(z3: Z3, request: WireRepair): Promise<RepairResult> {
  const required = new Set(request.tool.required ?? []);
  const read = argumentsRead(request.constraints);
  const chosen = [...read].filter((name) => request.repairable.includes(name));
  const constants: Record<string, Value> = { ...request.arguments };
  for (const name of chosen) delete constants[name];
  const solver = new z3.Solver();
  const deadline = performance.now() + request.timeoutMs;
  try {
    const variables = makeVariables(z3, request.tool, chosen);
    if (variables.size > maxRepairableArguments) {
      throw new Unsupported(`more than ${maxRepairableArguments} repairable arguments in one repair`);
    }
    for (const name of chosen) if (!variables.has(name)) constants[name] = request.arguments[name] ?? null;
    const encoder = new Encoder(z3, variables, scopeWith(request.scope, constants));
    for (const constraint of request.constraints) solver.add(encoder.holds(constraint));
    const list = [...variables.values()];
    const keep = new Map<string, Bool<"main"> | undefined>();
    const prefer = new Map<string, Bool<"main"> | undefined>();
    for (const variable of list) {
      solver.add(encoder.domain(variable, required.has(variable.name)));
      const proposed = request.arguments[variable.name] ?? null;
      keep.set(
        variable.name,
        proposed === null
          ? z3.Not(variable.present)
          : fitsSort(proposed, variable.sort, variable.members)
            ? z3.And(variable.present, encoder.equalsValue(variable, proposed))
            : undefined,
      );
      const preferred = [...(variable.members ?? []), ...(request.candidates[variable.name] ?? [])].filter(
        (value) => fitsSort(value, variable.sort, variable.members) && !valuesEqual(value, proposed),
      );
      prefer.set(
        variable.name,
        preferred.length === 0
          ? undefined
          : z3.And(
              variable.present,
              z3.Or(...preferred.map((value) => encoder.equalsValue(variable, value))),
            ),
      );
    }
    /** A model with the assumptions added, or undefined if there is none. */
    const attempt = async (assumptions: Bool<"main">[]): Promise<Model<"main"> | undefined> => {
      solver.push();
      try {
        if (assumptions.length > 0) solver.add(...assumptions);
        return (await checkSolver(solver, deadline)) === "sat" ? solver.model() : undefined;
      } finally {
        solver.pop();
      }
    };
    const proposedScope = scopeWith(request.scope, request.arguments);
    if (request.constraints.every((constraint) => holdsIn(constraint, proposedScope))) {
      return { status: "repaired", arguments: { ...request.arguments }, changed: [] };
    }
    // With few arguments the search below is short; with more, rule out "no repair" at once.
    if (list.length > 2 && (await attempt([])) === undefined) return { status: "unsat" };
    let model: Model<"main"> | undefined;
    search: for (let size = 1; size <= list.length; size++) {
      for (const freed of subsets(list.length, size)) {
        const kept: Bool<"main">[] = [];
        let possible = true;
        for (const [index, variable] of list.entries()) {
          if (freed.includes(index)) continue;
          const expression = keep.get(variable.name);
          if (expression === undefined) possible = false;
          else kept.push(expression);
        }
        if (!possible) continue;
        const preferred = freed.flatMap((index) => {
          const expression = prefer.get((list[index] as ArgumentVariable).name);
          return expression === undefined ? [] : [expression];
        });
        for (const assumptions of preferred.length > 0 ? [[...kept, ...preferred], kept] : [kept]) {
          model = await attempt(assumptions);
          if (model !== undefined) break search;
        }
      }
    }
    if (model === undefined) return { status: "unsat" };
    const repaired: Record<string, Value> = { ...request.arguments };
    readModel(z3, model, variables, repaired);
    const scope = scopeWith(request.scope, repaired);
    const failing = request.constraints.findIndex((constraint) => !holdsIn(constraint, scope));
    if (failing >= 0) {
      return {
        status: "unsupported",
        reason: `the solver's repair does not satisfy constraint ${failing} under the evaluator (number rounding?)`,
      };
    }
    const changed = [...variables.keys()].filter(
      (name) => !valuesEqual(repaired[name] ?? null, request.arguments[name] ?? null),
    );
    return { status: "repaired", arguments: repaired, changed };
  } catch (error) {
    if (error instanceof Unsupported) return { status: "unsupported", reason: error.message };
    throw error;
  } finally {
    solver.release();
  }
}

async function checkSolver(solver: Solver<"main">, deadline: number): Promise<"sat" | "unsat"> {
  const remaining = Math.round(deadline - performance.now());
  if (remaining <= 0) throw new SolverTimeout("the repair search ran out of time");
  solver.set("timeout", remaining);
  const result = await solver.check();
  if (result === "unknown") throw new SolverTimeout(`Z3 gave up (unknown) within the time limit`);
  return result;
}

export async function satisfiable(z3: Z3, request: WireSatisfiable): Promise<SatisfiableResult> {
  const required = new Set(request.tool.required ?? []);
  const names = new Set([...argumentsRead(request.constraints), ...Object.keys(request.fixed)]);
  const optimize = new z3.Optimize();
  try {
    const variables = makeVariables(z3, request.tool, names);
    const constants: Record<string, Value> = {};
    for (const name of names) if (!variables.has(name)) constants[name] = request.fixed[name] ?? null;
    const encoder = new Encoder(z3, variables, scopeWith(request.scope, constants));
    for (const constraint of request.constraints) optimize.add(encoder.holds(constraint));
    for (const variable of variables.values()) {
      const isFixed = Object.hasOwn(request.fixed, variable.name);
      optimize.add(encoder.domain(variable, required.has(variable.name) && !isFixed));
      if (!isFixed) continue;
      const value = request.fixed[variable.name] ?? null;
      if (value === null) optimize.add(z3.Not(variable.present));
      else if (fitsSort(value, variable.sort, undefined)) {
        optimize.add(z3.And(variable.present, encoder.equalsValue(variable, value)));
      } else {
        throw new Unsupported(`fixed value of '${variable.name}' does not fit its declared type`);
      }
    }
    if ((await check(optimize, request.timeoutMs)) === "unsat") return { status: "unsat" };
    const example: Record<string, Value> = { ...constants };
    for (const name of Object.keys(example)) if (example[name] === null) delete example[name];
    readModel(z3, optimize.model(), variables, example);
    return { status: "sat", example };
  } catch (error) {
    if (error instanceof Unsupported) return { status: "unsupported", reason: error.message };
    throw error;
  } finally {
    optimize.release();
  }
}
