import type { Policy, RuleSpec } from "../policy/index.js";
import { type Binding, describeBinding } from "./bindings.js";

/**
 * A rule monitored for one binding of each of its entities. Its trace has one position per call of
 * the run; a call that is not an event of the instance (another tool, another binding) is a
 * position where none of its atoms holds. Rules whose automaton ignores such positions
 * (`Automaton.ignoresEmptyLetter`: `G(a -> O b)`, `F a`, …) are stepped on their events only,
 * which gives the same verdicts; the others (`G(a -> X b)`, `init`) on every call.
 */
export interface Instance {
  rule: RuleSpec;
  bindings: Binding[];
}

interface InstanceIndex {
  byBinding: Map<number, number[]>;
  global: number[];
  /** Instances whose rule reads every call: the empty letter changes its verdicts (`G(a -> X b)`). */
  everyCall: number[];
}

/**
 * A run's instances and their index (by binding, global, reading every call), built on first
 * use. Runs share one table until an instance is added (then the new run gets a new table).
 */
export class InstanceTable {
  private index: InstanceIndex | undefined;

  constructor(readonly instances: readonly Instance[]) {}

  /** Indices of the instances monitoring a binding. */
  of(binding: Binding): number[] {
    return this.built().byBinding.get(binding.id) ?? [];
  }

  /** Indices of the instances of rules without entities. */
  global(): number[] {
    return this.built().global;
  }

  /** Indices of the instances whose rule reads every call of the run (see `Instance`). */
  everyCall(): number[] {
    return this.built().everyCall;
  }

  private built(): InstanceIndex {
    if (!this.index) {
      const index: InstanceIndex = { byBinding: new Map(), global: [], everyCall: [] };
      for (const [position, instance] of this.instances.entries()) {
        if (instance.bindings.length === 0) index.global.push(position);
        if (readsEveryCall(instance.rule)) index.everyCall.push(position);
        for (const binding of instance.bindings) {
          index.byBinding.set(binding.id, [...(index.byBinding.get(binding.id) ?? []), position]);
        }
      }
      this.index = index;
    }
    return this.index;
  }
}

export function describeInstance(instance: Instance): string {
  return instance.bindings.length === 0
    ? instance.rule.id
    : `${instance.rule.id} for ${instance.bindings.map(describeBinding).join(", ")}`;
}

/** Whether a rule's instances read every call (the empty letter changes its verdicts), memoized by its automaton. */
export function readsEveryCall(rule: RuleSpec): boolean {
  return !rule.automaton.ignoresEmptyLetter();
}

/**
 * The state of an instance that starts after `calls` calls: none of them concerned its binding,
 * so it has read that many empty letters (a no-op for rules that ignore them).
 */
export function startState(rule: RuleSpec, calls: number): number {
  const automaton = rule.automaton;
  let state = automaton.initial;
  if (!readsEveryCall(rule)) return state;
  for (let index = 0; index < calls; index++) {
    const next = automaton.step(state, 0);
    if (next === state) break;
    state = next;
  }
  return state;
}

/**
 * Whether a rule's `applies_to` admits an instance over these bindings (one per entity of the
 * rule). It is read per entity: the instance is requested when a task call introduced one of its
 * bindings and every binding of an entity that task call names is its own; entities the task
 * call does not name are not restricted (a requested allergy with any prescription dispensed).
 * `unrequested` admits the other instances; a rule without entities has one instance, admitted.
 */
export function appliesTo(rule: RuleSpec, bindings: readonly Binding[], policy: Policy): boolean {
  if (rule.appliesTo === "all" || bindings.length === 0) return true;
  return requestedInstance(bindings, policy) === (rule.appliesTo === "requested");
}

function requestedInstance(bindings: readonly Binding[], policy: Policy): boolean {
  return bindings.some(({ taskCall }) => {
    if (taskCall === undefined) return false;
    const names = (entity: string): boolean =>
      policy.entities.get(entity)?.sources.some((source) => source.taskCall === taskCall.name) ?? false;
    return bindings.every((binding) => binding.taskCall === taskCall || !names(binding.entity));
  });
}

/** The items by key, each group in the items' order. */
export function groupBy<T, K>(items: Iterable<T>, key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

export function cartesian<T>(choices: readonly (readonly T[])[]): T[][] {
  return choices.reduce<T[][]>(
    (product, options) => product.flatMap((prefix) => options.map((option) => [...prefix, option])),
    [[]],
  );
}
