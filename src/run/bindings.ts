import type { Value } from "../expression/index.js";
import type { Policy, PropositionSpec } from "../policy/index.js";
import type { TaskCall, ToolCallEvent } from "./trace.js";

/** One value assignment of an entity's variables: a route, an order, a patient. */
export interface Binding {
  id: number;
  entity: string;
  values: Record<string, Value>;
  /** Introduced by the task (true) or first named by a tool call (false). */
  requested: boolean;
  /** The task call that introduced it, read by `task.<call>.<field>` for this binding. */
  taskCall: TaskCall | undefined;
}

/** A binding a call would introduce. */
export interface NewBinding {
  entity: string;
  values: Record<string, Value>;
}

/**
 * A run's bindings and their index by values, built on first use. Runs share one table until a
 * binding is added (then the new run gets a new table), so the index is built once per array.
 */
export class BindingTable {
  private byValues: Map<string, Binding[]> | undefined;

  constructor(readonly bindings: readonly Binding[]) {}

  /** The table with one more binding. */
  with(binding: Binding): BindingTable {
    return new BindingTable([...this.bindings, binding]);
  }

  /** The bindings of `entity` with exactly these values. */
  withValues(entity: string, values: Record<string, Value>): Binding[] {
    if (!this.byValues) {
      const index = new Map<string, Binding[]>();
      for (const binding of this.bindings) {
        const key = `${binding.entity}\u0000${canonicalJson(binding.values)}`;
        index.set(key, [...(index.get(key) ?? []), binding]);
      }
      this.byValues = index;
    }
    return this.byValues.get(`${entity}\u0000${canonicalJson(values)}`) ?? [];
  }
}

export function describeBinding(binding: Binding): string {
  const values = Object.entries(binding.values).map(
    ([variable, value]) => `${variable}=${JSON.stringify(value)}`,
  );
  return `${binding.entity}(${values.join(", ")})`;
}

/** The values a call's arguments give an entity's variables through a proposition's binding pattern. */
export function patternValues(
  proposition: PropositionSpec,
  variables: readonly string[],
  args: Record<string, Value>,
): Record<string, Value> {
  return Object.fromEntries(
    variables.map((variable) => [variable, readPath(args, proposition.bindingPattern[variable] ?? [])]),
  );
}

/**
 * The bindings a made call's JSON output introduces (`entities.<e>.from: {tool: {t: o.field}}`):
 * one per entity bound from the tool whose every path is in the output (the transfer id a send
 * returned). A call whose output is not known introduces none.
 */
export function outputBindings(policy: Policy, call: ToolCallEvent): NewBinding[] {
  if (call.outcome.kind !== "json") return [];
  const output = call.outcome.value;
  const found: NewBinding[] = [];
  for (const entity of policy.entities.values())
    for (const source of entity.outputs) {
      if (source.tool !== call.name) continue;
      const values = Object.fromEntries(
        Object.entries(source.bind).map(([variable, path]) => [variable, readPath(output, path)]),
      );
      if (Object.values(values).every((value) => value !== null)) found.push({ entity: entity.name, values });
    }
  return found;
}

/** JSON with sorted keys, so equal values give equal text. */
function canonicalJson(value: Value): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as Value)}`).join(",")}}`;
}

function readPath(value: Value, path: readonly (string | number)[]): Value {
  let current: Value = value;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return null;
    current = (current as Record<string, Value>)[segment as string] ?? null;
  }
  return current;
}
