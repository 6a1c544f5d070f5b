import { groupMembers, type Value, valuesEqual } from "../expression/index.js";
import type { ArgumentLimits } from "./types.js";

/**
 * A proposed call's list arguments kept to their limits (`ArgumentLimits`, the case of the call's
 * own binding where `given` has one): an item outside `itemsOneOf`, or beyond the times
 * `itemsAtMost` allows, is dropped, and with it the item at its position in a list paired with it;
 * an item of a paired list that shares no group with its partner's item becomes the first member
 * of a group with it that the list may hold (not the partner's item itself). Only the `arguments`
 * named are changed; undefined where nothing changes, or a list would be left empty or unpaired.
 */
export function fittedLists(
  args: Readonly<Record<string, Value>>,
  limitsByArgument: ReadonlyMap<string, ArgumentLimits>,
  repairable: readonly string[],
): Record<string, Value> | undefined {
  const own = (argument: string): ArgumentLimits | undefined => {
    const limits = limitsByArgument.get(argument);
    const given = limits?.given;
    const written = given && args[given.argument];
    return given?.cases.find(({ value }) => valuesEqual(value, written ?? null))?.limits ?? limits;
  };
  const fitted: Record<string, Value> = {};
  for (const argument of repairable) {
    const limits = own(argument);
    const list = args[argument];
    if (!limits || !Array.isArray(list) || limits.itemsPaired) continue;
    const kept = keptPositions(list, limits);
    if (kept.length === list.length) continue;
    fitted[argument] = kept.map((at) => list[at] ?? null);
    // The lists paired with it lose the same positions.
    for (const other of repairable) {
      const paired = args[other];
      if (
        own(other)?.itemsPaired?.argument === argument &&
        Array.isArray(paired) &&
        paired.length === list.length
      )
        fitted[other] = kept.map((at) => paired[at] ?? null);
    }
  }
  for (const argument of repairable) {
    const limits = own(argument);
    const pairing = limits?.itemsPaired;
    const list = fitted[argument] ?? args[argument];
    const partner = pairing && (fitted[pairing.argument] ?? args[pairing.argument]);
    if (!limits || !pairing || !Array.isArray(list) || !Array.isArray(partner)) continue;
    if (list.length !== partner.length) return undefined;
    let changed = false;
    const paired = list.map((item, at) => {
      const theirs = partner[at] ?? null;
      const groups = pairing.groups.filter((group) =>
        groupMembers(group).some((member) => valuesEqual(member, theirs)),
      );
      if (groups.some((group) => groupMembers(group).some((member) => valuesEqual(member, item))))
        return item;
      const replacement = groups
        .flatMap(groupMembers)
        .find(
          (member) =>
            !valuesEqual(member, theirs) &&
            (limits.itemsOneOf === undefined ||
              limits.itemsOneOf.some((allowed) => valuesEqual(allowed, member))),
        );
      if (replacement === undefined) return item;
      changed = true;
      return replacement;
    });
    if (changed) fitted[argument] = paired;
  }
  if (Object.values(fitted).some((list) => Array.isArray(list) && list.length === 0)) return undefined;
  return Object.keys(fitted).length > 0 ? fitted : undefined;
}

/** The positions of a list's items that its limits allow, each item no more often than allowed. */
function keptPositions(list: readonly Value[], limits: ArgumentLimits): number[] {
  const used: Value[] = [];
  const kept: number[] = [];
  list.forEach((item, at) => {
    const among =
      limits.itemsOneOf === undefined || limits.itemsOneOf.some((allowed) => valuesEqual(allowed, item));
    const most = limits.itemsAtMost?.find(({ value }) => valuesEqual(value, item))?.most;
    const times = used.filter((value) => valuesEqual(value, item)).length;
    if (!among || (limits.itemsAtMost !== undefined && times >= (most ?? 0))) return;
    used.push(item);
    kept.push(at);
  });
  return kept;
}
