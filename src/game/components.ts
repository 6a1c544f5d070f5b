import type { Run } from "../run/index.js";
import type { CandidateCall } from "./candidates.js";

/** Enforced instances linked by calls that affect them together, and the calls that affect them. */
export interface Component {
  instances: number[];
  /** Position of each instance in `instances`. */
  slot: Map<number, number>;
  candidates: CandidateCall[];
  /** Distance by projected state, shared by the policy's components of the same shape (exact answers only). */
  distances: Map<string, number>;
}

/**
 * The enforced instances split into components (instances that some candidate affects together),
 * each with the candidates that affect it. A component's distance table is the one in
 * `distances` for its shape (its rules and the effects of its calls), added there if new.
 */
export function componentsOf(
  run: Run,
  enforced: readonly number[],
  candidates: readonly CandidateCall[],
  distances: Map<string, Map<string, number>>,
): Component[] {
  const parent = new Map(enforced.map((index) => [index, index]));
  const find = (index: number): number => {
    let root = index;
    while (parent.get(root) !== root) root = parent.get(root) as number;
    parent.set(index, root);
    return root;
  };
  const isEnforced = new Set(enforced);
  const affected = candidates.map((candidate) => candidate.affected.filter((index) => isEnforced.has(index)));
  for (const indices of affected) {
    for (const index of indices.slice(1)) parent.set(find(index), find(indices[0] as number));
  }
  const components = new Map<number, Component>();
  for (const index of enforced) {
    const root = find(index);
    const component: Component = components.get(root) ?? {
      instances: [],
      slot: new Map(),
      candidates: [],
      distances: new Map(),
    };
    component.instances.push(index);
    components.set(root, component);
  }
  candidates.forEach((candidate, position) => {
    const first = affected[position]?.[0];
    if (first !== undefined) components.get(find(first))?.candidates.push(candidate);
  });
  for (const component of components.values()) {
    const slot = component.slot;
    component.instances.forEach((index, position) => {
      slot.set(index, position);
    });
    const rules = component.instances.map((index) => run.instances[index]?.rule.id).join(",");
    const calls = component.candidates.map((candidate) => {
      const effects = candidate.effects.map((masks) =>
        candidate.affected.map((index, position) => `${slot.get(index) ?? "-"}:${masks[position]}`).join(" "),
      );
      return `${candidate.tool}[${effects.join("/")}]`;
    });
    // The rules of its instances and the effects of its calls, in instance order.
    const shape = `${rules}|${calls.sort().join(";")}`;
    const shared = distances.get(shape) ?? component.distances;
    distances.set(shape, shared);
    component.distances = shared;
  }
  return [...components.values()];
}
