import { LRUCache } from "lru-cache";
import type { ArgumentSets, Closing, Segment } from "./call-syntax.js";
import { JsonPrefix } from "./json-prefix.js";
import type { ShieldSlot, TokenMask } from "./mask.js";
import { canEndInRange, inRange, numberRange } from "./number-range.js";
import type { VocabularyIndex } from "./vocabulary-index.js";

/** The longest number a number slot takes (characters). */
export const maxNumberLength = 16;

/** A JSON slot (array, object) may take this many times a free string's tokens before it is closed. */
export const jsonTokensPerString = 4;

/**
 * What a sampled token did to a value slot: `more`, the value goes on; `veto`, the token would
 * close a string on an unsafe value, and `text` is written instead; `done`, the value is complete:
 * `keep` is what stays of the token (all of it, or the text to write in its place), its first
 * `emitted` characters after the value begin the slot's closing, and `forced` completes the value
 * (a JSON slot cut where it broke off).
 */
export type SlotStep =
  | { kind: "more" }
  | { kind: "veto"; text: string }
  | { kind: "done"; value: unknown; keep: "token" | { text: string }; emitted: number; forced?: string };

/**
 * One value slot of a call being written: a string, number, boolean or JSON value, then its
 * `closing` (the structure up to the next slot). `shieldSlot` (or `numberMask`) says which tokens
 * may come next; `read` takes the token sampled.
 */
export class ValueSlot {
  /** The value's text so far. */
  text = "";
  /** The slot's tokens so far (strings and JSON: their limit counts them). */
  readonly tokens: number[] = [];
  private readonly json: JsonPrefix | undefined;
  /** A list slot's rule over its string items, where its items are limited (fixed for the slot). */
  private readonly listRule: ListRule | undefined;

  constructor(
    readonly segment: Exclude<Segment, { kind: "fixed" }>,
    readonly closing: Closing,
    /** A free string is closed after this many tokens (a JSON value after four times as many). */
    private readonly maxStringTokens: number,
    /** The value of the list argument whose items this list's pair with (`itemsPaired`), if written. */
    partner?: unknown,
  ) {
    this.json = segment.kind === "json" ? new JsonPrefix(segment.opening) : undefined;
    this.listRule =
      segment.kind === "json" && segment.opening === "[" ? listRule(segment.sets, partner) : undefined;
  }

  /**
   * The slot as `computeTokenMask` reads it (strings and booleans); undefined for a number
   * (`numberMask`) and for JSON (kept valid by `read` instead, and `listMask` for a list that
   * may not close empty).
   */
  shieldSlot(): ShieldSlot | undefined {
    const { segment, closing } = this;
    if (segment.kind === "boolean")
      return { kind: "allow", values: booleanValues(segment.sets), terminator: closing.text };
    if (segment.kind !== "string") return undefined;
    const unsafe = segment.sets.unsafe ?? [];
    const allowed = allowedValues(segment.sets.allowed, segment.enumValues)?.filter(
      (value) => !unsafe.includes(value),
    );
    const progressing = segment.sets.progressing ?? [];
    return allowed !== undefined
      ? { kind: "allow", values: allowed, progressing, terminator: closing.text }
      : { kind: "deny", unsafe, progressing, terminator: '"', continuation: closing.text.slice(1) };
  }

  /**
   * In a number slot: the tokens that keep the number valid, or complete it and go on into the
   * closing; with bounds (a constraint's), only toward a number within them. Bounds that no
   * number of the slot (or no token) can meet are left to the evaluator.
   */
  numberMask(index: VocabularyIndex, strength: number): TokenMask | undefined {
    if (this.segment.kind !== "number") return undefined;
    const { text: partial, closing } = this;
    const integer = this.segment.integer;
    const range = numberRange(this.segment.sets);
    const tokensWithin = (withinRange: (value: string, complete: boolean) => boolean) => {
      const bias = new Map<number, number>();
      const consider = (token: number) => {
        if (numberTokenFits(partial, index.text(token), integer, closing.text, withinRange))
          bias.set(token, strength);
      };
      for (const token of index.numberTokens) consider(token);
      index.forEachPrefixOf(closing.text, consider);
      return bias;
    };
    let bias: Map<number, number> | undefined;
    if (range && canEndInRange("", range, integer, maxNumberLength))
      bias = tokensWithin((value, complete) =>
        complete ? inRange(Number(value), range) : canEndInRange(value, range, integer, maxNumberLength),
      );
    if (bias === undefined || bias.size === 0) bias = tokensWithin(() => true);
    return allowOnly(bias, `no token continues the number ${JSON.stringify(partial)}`);
  }

  /**
   * In a list slot whose string items are limited (`itemsAllowed`, `itemsAtMost`, `itemsPaired`):
   * the tokens that keep it a list of such items (of `minItems` at least; as many as its partner
   * list's where paired), or close it and go on into its closing. Else, in a list slot of
   * `minItems` 1 or more, while no item has begun: the tokens that keep it a list and do not
   * close it (an item may start in the same token, and the list close after it). Whitespace only while the slot has spent fewer than a free string's tokens,
   * so that its limit never closes it empty. Undefined elsewhere (the model writes the list
   * freely), and where the vocabulary has no such token.
   */
  listMask(index: VocabularyIndex, strength: number): TokenMask | undefined {
    const { segment, closing } = this;
    const json = this.json;
    if (segment.kind !== "json" || segment.opening !== "[" || json === undefined) return undefined;
    const rule = this.listRule;
    if (rule) {
      const allowed = stringListTokens(
        index,
        rule,
        json.text,
        closing.text,
        this.tokens.length < this.maxStringTokens,
      );
      return allowed.size > 0
        ? allowOnly(new Map([...allowed].map((token) => [token, strength])), "")
        : undefined;
    }
    if ((segment.sets.minItems ?? 0) < 1 || !/^(\[\s*)?$/.test(json.text)) return undefined;
    const allowed = nonEmptyListTokens(
      index,
      json.text,
      closing.text,
      this.tokens.length < this.maxStringTokens,
    );
    if (allowed.size === 0) return undefined;
    return allowOnly(new Map([...allowed].map((token) => [token, strength])), "");
  }

  /** Takes a token (`text`: its text; `special`: an end or control token, never part of a value). */
  read(token: number, text: string, special: boolean): SlotStep {
    const { segment, closing } = this;
    if (segment.kind === "number") {
      const digits = numberPart(text);
      const rest = text.slice(digits.length);
      const value = this.text + digits;
      if (rest === "") {
        this.text = value;
        if (value.length < maxNumberLength || !completeNumber(value, segment.integer))
          return { kind: "more" };
      }
      if (rest !== "" && !closing.text.startsWith(rest))
        return { kind: "done", value: Number(value), keep: { text: digits }, emitted: 0 };
      return { kind: "done", value: Number(value), keep: "token", emitted: rest.length };
    }
    if (segment.kind === "json") return this.readJson(token, text, special);
    if (segment.kind === "boolean") {
      // Complete once a token goes on past the value, as the model's own closing token does.
      const written = this.text + text;
      const value = booleanValues(segment.sets).find(
        (candidate) =>
          written.length > candidate.length &&
          written.startsWith(candidate) &&
          closing.text.startsWith(written.slice(candidate.length)),
      );
      if (value === undefined) {
        this.text = written;
        return { kind: "more" };
      }
      return { kind: "done", value: value === "true", keep: "token", emitted: written.length - value.length };
    }
    const quote = text.indexOf('"');
    const unsafe = segment.sets.unsafe ?? [];
    if (quote < 0) {
      this.text += text;
      this.tokens.push(token);
      if (this.tokens.length < this.maxStringTokens) return { kind: "more" };
      // Too long: close the string here, unless that spells an unsafe value.
      if (unsafe.includes(this.text) || (segment.sets.allowed ?? segment.enumValues) !== undefined)
        return { kind: "more" };
      return { kind: "done", value: this.text, keep: "token", emitted: 0 };
    }
    const before = text.slice(0, quote);
    const value = this.text + before;
    if (unsafe.includes(value)) {
      // The veto: never close on an unsafe value (the bias bans these tokens; this is the backstop).
      this.text = `${value} `;
      return { kind: "veto", text: `${before} ` };
    }
    // The token closes the string: kept when what follows its quote is the structure expected next.
    const rest = text.slice(quote);
    if (closing.text.startsWith(rest)) return { kind: "done", value, keep: "token", emitted: rest.length };
    return { kind: "done", value, keep: { text: before }, emitted: 0 };
  }

  /**
   * A token of a JSON slot: taken while it continues the value; a token that goes on past the
   * value's end into the expected structure closes the slot; one that breaks the value (or a
   * special token, or one past the slot's token limit) is cut where it breaks, and the shortest
   * text that completes the value is forced.
   */
  private readJson(token: number, text: string, special: boolean): SlotStep {
    const json = this.json as JsonPrefix;
    let taken = 0;
    while (taken < text.length && json.feed(text[taken] as string)) taken++;
    if (!special && taken === text.length && !json.done) {
      this.tokens.push(token);
      if (this.tokens.length < this.maxStringTokens * jsonTokensPerString) return { kind: "more" };
    }
    const rest = text.slice(taken);
    if (json.whole && rest !== "" && this.closing.text.startsWith(rest))
      return { kind: "done", value: JSON.parse(json.text), keep: "token", emitted: rest.length };
    const completion = json.whole ? "" : json.completion();
    return {
      kind: "done",
      value: JSON.parse(json.text + completion),
      keep: taken === text.length && !special ? "token" : { text: text.slice(0, taken) },
      emitted: 0,
      forced: completion,
    };
  }
}

/** A mask that lets through only the tokens of `bias`; `empty` says why where there are none. */
function allowOnly(bias: Map<number, number>, empty: string): TokenMask {
  const mask: TokenMask = { bias, banned: new Set(), allowed: new Set(bias.keys()) };
  if (bias.size === 0) mask.empty = empty;
  return mask;
}

/** A string slot's allow-list: the shield's `allowed` among the enum's values (the enum's where none is), or either alone. */
function allowedValues(
  allowed: readonly string[] | undefined,
  enumValues: readonly string[] | undefined,
): readonly string[] | undefined {
  if (allowed === undefined || enumValues === undefined) return allowed ?? enumValues;
  const both = allowed.filter((value) => enumValues.includes(value));
  return both.length > 0 ? both : enumValues;
}

/** Per vocabulary, per list text so far, closing and whether whitespace may come: the tokens `listMask` allows. */
const listTokens = new WeakMap<VocabularyIndex, Map<string, ReadonlySet<number>>>();

function nonEmptyListTokens(
  index: VocabularyIndex,
  written: string,
  closing: string,
  spaceAllowed: boolean,
): ReadonlySet<number> {
  let known = listTokens.get(index);
  if (!known) {
    known = new Map();
    listTokens.set(index, known);
  }
  const key = JSON.stringify([written, closing, spaceAllowed]);
  const cached = known.get(key);
  if (cached) return cached;
  const found = new Set<number>();
  index.texts.forEach((text, token) => {
    if (text === "" || !/^[\s"\-0-9[{tfn]/.test(text)) return;
    const json = new JsonPrefix("[");
    const full = written + text;
    let taken = 0;
    while (taken < full.length && json.feed(full[taken] as string)) taken++;
    const list = full.slice(0, taken);
    if (/^\[\s*\]/.test(list)) return;
    if (taken === full.length) {
      if (spaceAllowed || !/^\[?\s*$/.test(list)) found.add(token);
    } else if (json.whole && closing.startsWith(full.slice(taken))) found.add(token);
  });
  known.set(key, found);
  return found;
}

/**
 * What a list slot's string items may be: `next`, those that may follow the items written (each
 * as its JSON text); `canClose`, whether the list may close after them. `key` names the rule in
 * caches.
 */
interface ListRule {
  key: string;
  next(items: readonly string[]): readonly string[];
  canClose(items: readonly string[]): boolean;
}

/**
 * The rule of a list slot whose items are limited (`itemsAllowed`, `itemsAtMost`, `itemsPaired`
 * with the partner list written before it), or undefined. A position whose partner item shares
 * no group with an allowed item keeps the other limits (the evaluator judges the pair).
 */
function listRule(sets: ArgumentSets, partner: unknown): ListRule | undefined {
  const { itemsAllowed: pool, itemsAtMost: atMost, minItems = 0 } = sets;
  const partners = sets.itemsPaired && Array.isArray(partner) ? partner : undefined;
  const groups = partners && sets.itemsPaired ? sets.itemsPaired.groups : undefined;
  if (pool === undefined && atMost === undefined && groups === undefined) return undefined;
  const pooled = pool ?? (atMost ? Object.keys(atMost) : [...new Set(groups?.flat())]);
  // Asked once per vocabulary token where a mask is computed, each time with the same items:
  // remembered per list of items (for the slot's life: the rule is built with the slot).
  const known = new WeakMap<readonly string[], readonly string[]>();
  const next = (items: readonly string[]): readonly string[] => {
    let found = known.get(items);
    if (found === undefined) {
      found = nextItems(items);
      known.set(items, found);
    }
    return found;
  };
  const nextItems = (items: readonly string[]): string[] => {
    let candidates = atMost
      ? pooled.filter((item) => items.filter((written) => written === item).length < (atMost[item] ?? 0))
      : pooled;
    if (partners && groups) {
      if (items.length >= partners.length) return [];
      const partner = partners[items.length];
      const shared = candidates.filter((item) =>
        groups.some((group) => group.includes(item) && group.includes(partner as string)),
      );
      if (shared.length > 0) candidates = shared;
    }
    return candidates.map((item) => JSON.stringify(item));
  };
  return {
    key: JSON.stringify([pool, atMost, groups, partners, minItems]),
    next,
    canClose: (items) =>
      items.length >= minItems && (partners === undefined || items.length === partners.length),
  };
}

/**
 * Per vocabulary, per list rule, list state, closing and whether whitespace may come: the tokens
 * `listMask` allows. Bounded: the items differ from run to run (an order's item ids).
 */
const stringListTokenSets = new WeakMap<VocabularyIndex, LRUCache<string, ReadonlySet<number>>>();

function stringListTokens(
  index: VocabularyIndex,
  rule: ListRule,
  written: string,
  closing: string,
  spaceAllowed: boolean,
): ReadonlySet<number> {
  const standing = continueList({ items: [], place: "open", partial: "" }, written, rule);
  if (typeof standing !== "object") return new Set();
  let known = stringListTokenSets.get(index);
  if (!known) {
    known = new LRUCache({ max: 1024 });
    stringListTokenSets.set(index, known);
  }
  const key = JSON.stringify([rule.key, standing, closing, spaceAllowed]);
  const cached = known.get(key);
  if (cached) return cached;
  const found = new Set<number>();
  index.texts.forEach((text, token) => {
    if (text === "" || (!spaceAllowed && /^\s+$/.test(text))) return;
    const read = continueList(standing, text, rule);
    if (read !== undefined && (typeof read === "object" || closing.startsWith(text.slice(read))))
      found.add(token);
  });
  known.set(key, found);
  return found;
}

/** Where a list of strings stands: its items, the place in it, and an item begun (`"ab`). */
interface ListStanding {
  items: readonly string[];
  place: "open" | "first" | "after" | "next";
  partial: string;
}

/**
 * Reads `text` on from `standing` as more of a JSON list that keeps to `rule`: where all of it
 * may go on into one, where it then stands; the index in `text` after its `]` where it closes
 * there; undefined where it cannot be one.
 */
function continueList(
  standing: ListStanding,
  text: string,
  rule: ListRule,
): ListStanding | number | undefined {
  let items = standing.items;
  let place = standing.place;
  const rest = standing.partial + text;
  const offset = standing.partial.length;
  let at = 0;
  if (place === "open") {
    if (rest === "") return standing;
    if (rest[0] !== "[") return undefined;
    at = 1;
    place = "first";
  }
  for (;;) {
    while (at < rest.length && /\s/.test(rest[at] as string)) at++;
    // A comma with no item left to follow it breaks the list.
    if (at === rest.length)
      return place === "next" && rule.next(items).length === 0 ? undefined : { items, place, partial: "" };
    const char = rest[at];
    if (place !== "next" && char === "]") return rule.canClose(items) ? at + 1 - offset : undefined;
    if (place === "after") {
      if (char !== ",") return undefined;
      at++;
      place = "next";
      continue;
    }
    const tail = rest.slice(at);
    const candidates = rule.next(items);
    const item = candidates.find((candidate) => tail.startsWith(candidate));
    if (item !== undefined) {
      items = [...items, JSON.parse(item) as string];
      at += item.length;
      place = "after";
      continue;
    }
    return candidates.some((candidate) => candidate.startsWith(tail))
      ? { items, place, partial: tail }
      : undefined;
  }
}

function booleanValues(sets: ArgumentSets): string[] {
  return ["true", "false"].filter((value) => !(sets.unsafe ?? []).includes(value));
}

/** The leading characters of a token that can belong to a JSON number. */
function numberPart(text: string): string {
  return /^[-0-9.]*/.exec(text)?.[0] ?? "";
}

function completeNumber(text: string, integer: boolean): boolean {
  return (integer ? /^-?(0|[1-9][0-9]*)$/ : /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/).test(text);
}

/**
 * Whether a token may follow `partial` in a number slot: it keeps the number a valid prefix, or
 * completes it and goes on into `closing`.
 */
function numberTokenFits(
  partial: string,
  text: string,
  integer: boolean,
  closing: string,
  withinRange: (value: string, complete: boolean) => boolean,
): boolean {
  const digits = numberPart(text);
  const value = partial + digits;
  const rest = text.slice(digits.length);
  if (rest === "")
    return (
      // A dot needs a digit after it within the length.
      value.length <= (value.endsWith(".") ? maxNumberLength - 1 : maxNumberLength) &&
      (integer ? /^-?(0|[1-9][0-9]*)?$/ : /^-?((0|[1-9][0-9]*)(\.[0-9]*)?)?$/).test(value) &&
      withinRange(value, false)
    );
  return completeNumber(value, integer) && closing.startsWith(rest) && withinRange(value, true);
}
