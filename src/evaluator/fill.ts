import { type Value, valuesEqual } from "../expression/index.js";
import type { Parameter } from "../policy/index.js";
import type { Binding, Run } from "../run/index.js";
import type { SearchBudget } from "./budget.js";
import type { Judge } from "./judge.js";
import type { ProposedCall } from "./types.js";

/** How `fillArguments` chooses. */
export interface FillOptions {
  /**
   * The way a request asked for, to make after the steps that unblock it: where no value allows an
   * argument, it takes the first known value (the request's): the user's name in a cancellation
   * still waiting for the login.
   */
  target?: boolean;
  /**
   * The blocked call the advised one is for: its argument of the same name, then the fields of
   * that name in the earlier output records that mention one of its strings, come first (the
   * reason a room change gives, for its check; the product of an item an exchange names, in the
   * order's lookup).
   */
  for?: ProposedCall;
  /** Values with which the call repeats a made call whose outcome is a fact are not taken. */
  fresh?: boolean;
}

/**
 * An advised call with its required arguments filled, or named as missing where nothing known
 * gives them: an advised call must be one the agent can make. A missing argument's candidate
 * values come, in order, from the bindings the call is aimed at (through any proposition's
 * binding pattern that names the argument), the task's fields of that name, the blocked call's
 * (`options.for`) argument of that name and the fields of that name in the records that mention
 * its strings, the fields of that
 * name in earlier JSON outputs (newest first: what lookups returned), and its enum members (true
 * and false for a boolean). The first value with which the call is allowed is taken (each try
 * spends one decision of `budget`); an argument no value allows is named missing.
 */
export function fillArguments(
  judge: Judge,
  run: Run,
  call: ProposedCall,
  bindings: readonly Binding[],
  budget: SearchBudget,
  options: FillOptions = {},
): { call: ProposedCall; missing: string[] } {
  const tool = judge.policy.tools.get(call.name);
  const args = { ...call.arguments };
  const missing: string[] = [];
  if (!tool) return { call, missing };
  const open = tool.required.filter((name) => !(name in args));
  const related = options.for && open.length > 0 ? relatedTo(run, options.for) : undefined;
  const candidates = new Map(
    open.map((name) => [
      name,
      knownValues(
        judge,
        run,
        name,
        bindings,
        tool.parameters.find((parameter) => parameter.name === name),
        related,
      ),
    ]),
  );
  for (const name of open) {
    const values = candidates.get(name) ?? [];
    // The arguments still open take their first known value while this one is tried.
    const rest = (): Record<string, Value> =>
      Object.fromEntries(
        open.flatMap((other) =>
          other in args || other === name || !candidates.get(other)?.length
            ? []
            : [[other, candidates.get(other)?.[0] as Value]],
        ),
      );
    const allowed = values.find((value) => {
      const tried = { ...rest(), ...args, [name]: value };
      return (
        !(options.fresh && run.observed(call.name, tried)) &&
        budget.spend() &&
        judge.decide(run, { name: call.name, arguments: tried }, false).verdict === "allow"
      );
    });
    const taken = allowed ?? (options.target ? values[0] : undefined);
    if (taken === undefined) missing.push(name);
    else args[name] = taken;
  }
  return { call: { name: call.name, arguments: args }, missing };
}

/**
 * `call` with each required argument it does not give set to its first known value (no decision
 * spent): the call the agent would make for a candidate of the game that names one entity only (an
 * order's lookup, whose user the task gives). `call` itself where nothing was added.
 */
export function withKnownArguments(
  judge: Judge,
  run: Run,
  call: ProposedCall,
  bindings: readonly Binding[],
): ProposedCall {
  const added = firstKnownValues(judge, run, call, bindings).flatMap(([name, value]) =>
    value === undefined ? [] : [[name, value] as const],
  );
  return added.length === 0
    ? call
    : { name: call.name, arguments: { ...call.arguments, ...Object.fromEntries(added) } };
}

/** The required arguments of `call` it does not give and nothing known could fill (no decision spent). */
export function unknownArguments(
  judge: Judge,
  run: Run,
  call: ProposedCall,
  bindings: readonly Binding[],
): string[] {
  return firstKnownValues(judge, run, call, bindings).flatMap(([name, value]) =>
    value === undefined ? [name] : [],
  );
}

/** Each required argument `call` does not give, with its first known value (undefined where none is). */
function firstKnownValues(
  judge: Judge,
  run: Run,
  call: ProposedCall,
  bindings: readonly Binding[],
): [string, Value | undefined][] {
  const tool = judge.policy.tools.get(call.name);
  return (tool?.required ?? [])
    .filter((name) => !(name in call.arguments))
    .map((name) => [
      name,
      knownValues(
        judge,
        run,
        name,
        bindings,
        tool?.parameters.find((parameter) => parameter.name === name),
      )[0],
    ]);
}

/**
 * What a blocked call gives an advised call's arguments: its own arguments, and the records of
 * earlier outputs (newest first) that mention one of its strings. Found once per filled call.
 */
interface Related {
  given: Record<string, Value>;
  records: { [key: string]: Value }[];
}

function relatedTo(run: Run, blocked: ProposedCall): Related {
  const mentioned = new Set(stringsIn(blocked.arguments));
  const records: Related["records"] = [];
  for (const output of outputsNewestFirst(run))
    forEachRecord(output, (record) => {
      if (Object.values(record).some((field) => typeof field === "string" && mentioned.has(field)))
        records.push(record);
    });
  return { given: blocked.arguments, records };
}

/** The run's outputs, newest first: a JSON result, a label's fields, or null. */
function outputsNewestFirst(run: Run): Value[] {
  return run.calls
    .map(({ outcome }) =>
      outcome.kind === "json" ? outcome.value : outcome.kind === "label" ? (outcome.fields ?? null) : null,
    )
    .reverse();
}

/** Candidate values of an argument `name`, in the order `fillArguments` tries them. */
function knownValues(
  judge: Judge,
  run: Run,
  name: string,
  bindings: readonly Binding[],
  parameter: Parameter | undefined,
  related?: Related,
): Value[] {
  const values: Value[] = [];
  const push = (value: Value | undefined): void => {
    if (value !== undefined && value !== null && !values.some((known) => valuesEqual(known, value)))
      values.push(value);
  };
  for (const proposition of judge.policy.propositions.values()) {
    for (const [variable, path] of Object.entries(proposition.bindingPattern)) {
      if (path.length !== 1 || path[0] !== name) continue;
      for (const binding of bindings)
        if (proposition.entities.includes(binding.entity)) push(binding.values[variable]);
    }
  }
  for (const task of run.task) push(task.arguments[name]);
  if (related) {
    push(related.given[name]);
    for (const record of related.records) push(record[name]);
  }
  for (const value of outputsNewestFirst(run))
    if (value !== null && typeof value === "object" && !Array.isArray(value)) push(value[name]);
  if (parameter && typeof parameter.type === "object") for (const member of parameter.type.enum) push(member);
  if (parameter?.type === "boolean") for (const member of [true, false]) push(member);
  return values;
}

/** The strings of a value: itself, or those of its elements and fields. */
function stringsIn(value: Value): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  return value !== null && typeof value === "object" ? Object.values(value).flatMap(stringsIn) : [];
}

/** Each object in a value, outermost first. */
function forEachRecord(value: Value, visit: (record: { [key: string]: Value }) => void): void {
  if (Array.isArray(value)) for (const element of value) forEachRecord(element, visit);
  else if (value !== null && typeof value === "object") {
    visit(value);
    for (const field of Object.values(value)) forEachRecord(field, visit);
  }
}
