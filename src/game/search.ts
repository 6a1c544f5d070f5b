import type { Automaton } from "../logic/index.js";
import type { CandidateCall } from "./candidates.js";
import type { Component } from "./components.js";

/** What a component search needs from its template. */
export interface SearchContext {
  /** The automaton of the instance at an index. */
  automaton: (index: number) => Automaton;
  /** The full state after a candidate call with one of its outcome cases. */
  successor: (state: Int32Array, candidate: CandidateCall, caseIndex: number) => Int32Array;
  /** Projected states the search may see before it gives up. */
  maxStates: number;
}

/**
 * Breadth-first search of a component's own small game from `state` (whose projection on the
 * component is `key`): the fewest calls to a state where every instance of the component accepts,
 * Infinity if no such state is reachable without a permanent violation, undefined if the search
 * saw more than `maxStates` projected states first. `explored` counts the states it saw.
 */
export function searchComponent(
  component: Component,
  state: Int32Array,
  key: string,
  context: SearchContext,
): { distance: number | undefined; explored: number } {
  const { automaton, successor: step, maxStates } = context;
  const project = (full: Int32Array): string => component.instances.map((index) => full[index]).join(",");
  const doomed = (full: Int32Array): boolean =>
    component.instances.some((index) => automaton(index).colour(full[index] as number) === "PERM_VIOL");
  const accepting = (full: Int32Array): boolean =>
    component.instances.every((index) => automaton(index).isAccepting(full[index] as number));
  if (doomed(state)) return { distance: Number.POSITIVE_INFINITY, explored: 0 };
  let distance: number | undefined = Number.POSITIVE_INFINITY;
  const seen = new Set([key]);
  let layer = [state];
  let depth = 0;
  search: while (layer.length > 0) {
    const next: Int32Array[] = [];
    for (const current of layer) {
      if (accepting(current)) {
        distance = depth;
        break search;
      }
      for (const candidate of component.candidates) {
        for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
          const successor = step(current, candidate, caseIndex);
          const successorKey = project(successor);
          if (seen.has(successorKey) || doomed(successor)) continue;
          seen.add(successorKey);
          next.push(successor);
        }
      }
      if (seen.size > maxStates) {
        distance = undefined;
        break search;
      }
    }
    layer = next;
    depth++;
  }
  return { distance, explored: seen.size };
}
