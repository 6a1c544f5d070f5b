import type { CallClass, CandidateCall } from "./candidates.js";
import type { Component } from "./components.js";

/** What a template knows about one state (states are never mutated once built). */
export interface StateCache {
  total?: number | undefined;
  parts: Map<Component, number | undefined>;
  /** Projections of the state on components (see `projection`). */
  keys: Map<Component, string>;
  classes: Map<CandidateCall, CallClass>;
  /** `firstProgressing` per list of candidates. */
  firstProgressing: Map<readonly CandidateCall[], CandidateCall | undefined>;
  /** The state this one was stepped from, and the components the step touched: the others read through. */
  parent?: { state: Int32Array; cache: StateCache; touched: Component[] };
}

/** The table of a state's cache that knows `component`, looking through to the states it was stepped from. */
export function knownIn<T>(
  start: StateCache,
  component: Component,
  table: (cache: StateCache) => Map<Component, T>,
): Map<Component, T> | undefined {
  let cache: StateCache | undefined = start;
  while (cache) {
    const entries = table(cache);
    if (entries.has(component)) return entries;
    if (!cache.parent || cache.parent.touched.includes(component)) return undefined;
    cache = cache.parent.cache;
  }
  return undefined;
}

export function emptyCache(): StateCache {
  return { parts: new Map(), keys: new Map(), classes: new Map(), firstProgressing: new Map() };
}
