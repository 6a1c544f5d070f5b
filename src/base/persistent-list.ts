/**
 * A persistent list, newest first: adding an item makes one node and shares the rest, so a kept
 * list never changes when a later one grows, and a step costs the same after 10 items as after
 * 1,000 (an array copied per step does not). A run's calls, a monitor's log and a run cache's
 * settled entries are kept this way.
 */
export interface PersistentList<T> {
  readonly item: T;
  readonly before: PersistentList<T> | undefined;
  readonly length: number;
}

export function withItem<T>(list: PersistentList<T> | undefined, item: T): PersistentList<T> {
  return { item, before: list, length: (list?.length ?? 0) + 1 };
}

/** A list's items, oldest first. */
export function listItems<T>(list: PersistentList<T> | undefined): T[] {
  const items: T[] = new Array(list?.length ?? 0);
  for (let node = list; node; node = node.before) items[node.length - 1] = node.item;
  return items;
}
