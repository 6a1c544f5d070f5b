import { defaultEta } from "../../base/defaults.js";
import type { VocabularyIndex } from "./vocabulary-index.js";

/** A slot whose value must be one of a list (tool names, enum-like argument values). */
export interface AllowListSlot {
  kind: "allow";
  /** The complete values allowed. */
  values: readonly string[];
  /** Values (a subset of `values`) that make progress: their tokens get `+eta` more. */
  progressing?: readonly string[];
  /**
   * The text that must follow a complete value (`"` closing a JSON string, `", "arguments": `…),
   * as far as it is known: a token may close the value and go on into it (`"}}\n` on Qwen 2.5).
   */
  terminator: string;
  /** A terminator per value, where values are followed by different text (each tool's skeleton). */
  terminatorOf?: (value: string) => string;
}

/** A free string slot (a JSON string) whose value must not be one of a list. */
export interface DenyListSlot {
  kind: "deny";
  /** Values the string must not take. */
  unsafe: readonly string[];
  /** Values that make progress: tokens toward them get `+eta`. */
  progressing?: readonly string[];
  /** The text that closes the string: `"`. */
  terminator: string;
  /** What follows the closing quote, as far as it is known: tokens toward progressing values may carry it. */
  continuation?: string;
}

export type ShieldSlot = AllowListSlot | DenyListSlot;

export interface TokenMaskOptions {
  /**
   * Logit added to every allowed token of an allow-list slot. Default 100: above ln V plus the
   * spread of a model's logits, so the model picks among the allowed tokens by its own preference.
   */
  strength?: number;
  /**
   * Added to the logit of tokens toward progressing names/values. With temperature T the boost
   * is eta/T in log-probability. Default 0.5.
   */
  eta?: number;
}

/**
 * What one decoding step may emit. `bias` is sparse (token → logit added); `banned` tokens must
 * never be emitted; when `allowed` is set, any token outside it is vetoed (replaced).
 */
export interface TokenMask {
  bias: Map<number, number>;
  /** Tokens banned at this step (sparse). */
  banned: Set<number>;
  /** Tokens banned in every step of the slot (shared, precomputed per vocabulary). */
  bannedAlways?: readonly ReadonlySet<number>[];
  allowed: Set<number> | undefined;
  /** Set when nothing is allowed (no value can continue the partial text). */
  empty?: string;
}

export const defaultStrength = 100;

/**
 * The mask for the next token of a slot, given the slot's partial text (decoded; shielded
 * strings ban escapes, so raw text and decoded value agree).
 */
export function computeTokenMask(
  index: VocabularyIndex,
  slot: ShieldSlot,
  partial: string,
  options: TokenMaskOptions = {},
): TokenMask {
  return slot.kind === "allow"
    ? allowListMask(index, slot, partial, options)
    : denyListMask(index, slot, partial, options);
}

function allowListMask(
  index: VocabularyIndex,
  slot: AllowListSlot,
  partial: string,
  options: TokenMaskOptions,
): TokenMask {
  const strength = options.strength ?? defaultStrength;
  const eta = options.eta ?? defaultEta;
  const progressing = new Set(slot.progressing ?? []);
  const bias = new Map<number, number>();
  for (const value of new Set(slot.values)) {
    if (!value.startsWith(partial)) continue;
    const target = value.slice(partial.length) + (slot.terminatorOf?.(value) ?? slot.terminator);
    const amount = progressing.has(value) ? strength + eta : strength;
    index.forEachPrefixOf(target, (token) => {
      if ((bias.get(token) ?? Number.NEGATIVE_INFINITY) < amount) bias.set(token, amount);
    });
  }
  const mask: TokenMask = { bias, banned: new Set(), allowed: new Set(bias.keys()) };
  if (bias.size === 0)
    mask.empty =
      slot.values.length === 0
        ? "no value is allowed"
        : `no allowed value continues ${JSON.stringify(partial)}`;
  return mask;
}

function denyListMask(
  index: VocabularyIndex,
  slot: DenyListSlot,
  partial: string,
  options: TokenMaskOptions,
): TokenMask {
  const eta = options.eta ?? defaultEta;
  const banned = new Set<number>();
  const bannedAlways = [index.escapeTokens];
  // ASCII characters are single UTF-8 bytes: pieces of multi-byte characters can only spell
  // non-ASCII text, so they matter only when an unsafe value has some.
  if (slot.unsafe.some((value) => [...value].some((char) => char.charCodeAt(0) > 0x7f)))
    bannedAlways.push(index.partialCharacterTokens);
  for (const value of new Set(slot.unsafe)) {
    if (!value.startsWith(partial)) continue;
    for (const token of index.tokensStartingWith(value.slice(partial.length) + slot.terminator))
      banned.add(token);
  }
  const bias = new Map<number, number>();
  if (eta !== 0)
    for (const value of new Set(slot.progressing ?? [])) {
      if (!value.startsWith(partial)) continue;
      index.forEachPrefixOf(
        value.slice(partial.length) + slot.terminator + (slot.continuation ?? ""),
        (token) => {
          if (!banned.has(token) && !bannedAlways.some((set) => set.has(token))) bias.set(token, eta);
        },
      );
    }
  return { bias, banned, bannedAlways, allowed: undefined };
}

/** Whether the mask lets `token` through (the veto's test). */
export function isTokenAllowed(mask: TokenMask, token: number): boolean {
  if (mask.banned.has(token)) return false;
  if (mask.bannedAlways?.some((set) => set.has(token))) return false;
  return mask.allowed === undefined || mask.allowed.has(token);
}

/**
 * The token the veto puts in place of a vetoed one in an allow-list slot: the allowed token with
 * the highest bias (progressing first), then the longest text, then the lowest id — deterministic;
 * only tokens `eligible` allows (not the special tokens a call cannot hold).
 */
export function fallbackToken(
  index: VocabularyIndex,
  mask: TokenMask,
  eligible: (token: number) => boolean = () => true,
): number | undefined {
  let best: number | undefined;
  let bestBias = Number.NEGATIVE_INFINITY;
  for (const token of mask.allowed ?? []) {
    if (!eligible(token)) continue;
    const bias = mask.bias.get(token) ?? 0;
    const better =
      best === undefined ||
      bias > bestBias ||
      (bias === bestBias && index.text(token).length > index.text(best).length) ||
      (bias === bestBias && index.text(token).length === index.text(best).length && token < best);
    if (better) {
      best = token;
      bestBias = bias;
    }
  }
  return best;
}
