import type { ArgumentSets, Closing, Segment } from "./call-syntax.js";
import { JsonPrefix } from "./json-prefix.js";
import type { ShieldSlot, TokenMask } from "./mask.js";
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

  constructor(
    readonly segment: Exclude<Segment, { kind: "fixed" }>,
    readonly closing: Closing,
    /** A free string is closed after this many tokens (a JSON value after four times as many). */
    private readonly maxStringTokens: number,
  ) {
    this.json = segment.kind === "json" ? new JsonPrefix(segment.opening) : undefined;
  }

  /**
   * The slot as `computeTokenMask` reads it (strings and booleans); undefined for a number
   * (`numberMask`) and for JSON (kept valid by `read` instead).
   */
  shieldSlot(): ShieldSlot | undefined {
    const { segment, closing } = this;
    if (segment.kind === "boolean")
      return { kind: "allow", values: booleanValues(segment.sets), terminator: closing.text };
    if (segment.kind !== "string") return undefined;
    const unsafe = segment.sets.unsafe ?? [];
    const allowed = (segment.sets.allowed ?? segment.enumValues)?.filter((value) => !unsafe.includes(value));
    const progressing = segment.sets.progressing ?? [];
    return allowed !== undefined
      ? { kind: "allow", values: allowed, progressing, terminator: closing.text }
      : { kind: "deny", unsafe, progressing, terminator: '"', continuation: closing.text.slice(1) };
  }

  /** In a number slot: the tokens that keep the number valid, or complete it and go on into the closing. */
  numberMask(index: VocabularyIndex, strength: number): TokenMask | undefined {
    if (this.segment.kind !== "number") return undefined;
    const { text: partial, closing } = this;
    const integer = this.segment.integer;
    const bias = new Map<number, number>();
    const consider = (token: number) => {
      if (numberTokenFits(partial, index.text(token), integer, closing.text)) bias.set(token, strength);
    };
    for (const token of index.numberTokens) consider(token);
    index.forEachPrefixOf(closing.text, consider);
    const mask: TokenMask = { bias, banned: new Set(), allowed: new Set(bias.keys()) };
    if (bias.size === 0) mask.empty = `no token continues the number ${JSON.stringify(partial)}`;
    return mask;
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
function numberTokenFits(partial: string, text: string, integer: boolean, closing: string): boolean {
  const digits = numberPart(text);
  const value = partial + digits;
  const rest = text.slice(digits.length);
  if (rest === "")
    return (
      value.length <= maxNumberLength &&
      (integer ? /^-?(0|[1-9][0-9]*)?$/ : /^-?((0|[1-9][0-9]*)(\.[0-9]*)?)?$/).test(value)
    );
  return completeNumber(value, integer) && closing.startsWith(rest);
}
