import type { TokenVocabulary } from "./vocabulary.js";

/**
 * Built once per vocabulary: exact-text lookup (for "which tokens are a prefix of this
 * string": one lookup per prefix length) and tokens sorted by text (for "which tokens start with
 * this string": a binary-searched range).
 */
export class VocabularyIndex {
  readonly size: number;
  /** Token texts by id. */
  readonly texts: readonly string[];
  /** Length of the longest token text. */
  readonly maxTextLength: number;
  private readonly byText = new Map<string, number[]>();
  private readonly sortedIds: number[];
  private readonly openers = new Map<string, ReadonlySet<number>>();
  /**
   * Tokens with a backslash or a control character inside a JSON string: before their first `"`,
   * or anywhere when they have none. Banned inside shielded strings. A token that closes the string
   * first (`"}}\n`) is not one: what follows its quote is structure, not string text.
   */
  readonly escapeTokens: ReadonlySet<number>;
  /** Tokens with U+FFFD (part of a multi-byte character). */
  readonly partialCharacterTokens: ReadonlySet<number>;
  /**
   * Tokens of number characters (`-`, digits, `.`), alone or followed by what closes a JSON number
   * in a call (`,` or `}` and on): the candidates of a number slot besides the closing's own tokens.
   */
  readonly numberTokens: readonly number[];

  constructor(vocabulary: TokenVocabulary) {
    this.size = vocabulary.size;
    const texts: string[] = [];
    let maxTextLength = 0;
    const escapes: number[] = [];
    const partial: number[] = [];
    const numbers: number[] = [];
    for (let id = 0; id < vocabulary.size; id++) {
      const text = vocabulary.text(id);
      texts.push(text);
      if (text === "") continue;
      maxTextLength = Math.max(maxTextLength, text.length);
      const list = this.byText.get(text);
      if (list) list.push(id);
      else this.byText.set(text, [id]);
      if (hasEscapeOrControl(stringPart(text))) escapes.push(id);
      if (text.includes("\uFFFD")) partial.push(id);
      if (/^[-0-9.]+(?:[,}]|$)/.test(text)) numbers.push(id);
    }
    this.texts = texts;
    this.maxTextLength = maxTextLength;
    this.escapeTokens = new Set(escapes);
    this.partialCharacterTokens = new Set(partial);
    this.numberTokens = numbers;
    this.sortedIds = texts
      .map((_, id) => id)
      .filter((id) => texts[id] !== "")
      .sort((a, b) => compare(texts[a] as string, texts[b] as string));
  }

  text(token: number): string {
    return this.texts[token] ?? "";
  }

  /** Calls `visit` for every token whose text is a non-empty prefix of `target`. */
  forEachPrefixOf(target: string, visit: (token: number, length: number) => void): void {
    const limit = Math.min(target.length, this.maxTextLength);
    for (let length = 1; length <= limit; length++) {
      const ids = this.byText.get(target.slice(0, length));
      if (ids) for (const id of ids) visit(id, length);
    }
  }

  /**
   * Tokens whose text ends with the first two or more characters of `target` (the tokens that open
   * a call from free text, for `target` the call prefix). Computed once per target.
   */
  tokensEndingWithStartOf(target: string): ReadonlySet<number> {
    const cached = this.openers.get(target);
    if (cached) return cached;
    const found = new Set<number>();
    this.texts.forEach((text, id) => {
      for (let start = 0; start < text.length - 1; start++)
        if (target.startsWith(text.slice(start))) {
          found.add(id);
          return;
        }
    });
    this.openers.set(target, found);
    return found;
  }

  /** Every token whose text starts with `prefix` (non-empty). */
  tokensStartingWith(prefix: string): number[] {
    const ids = this.sortedIds;
    let low = 0;
    let high = ids.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(this.texts[ids[middle] as number] as string, prefix) < 0) low = middle + 1;
      else high = middle;
    }
    const result: number[] = [];
    for (let index = low; index < ids.length; index++) {
      const id = ids[index] as number;
      if (!(this.texts[id] as string).startsWith(prefix)) break;
      result.push(id);
    }
    return result;
  }
}

/** Code-unit order (what `startsWith` agrees with), not locale order. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The part of a token that lies inside a JSON string being written: up to its first quote. */
function stringPart(text: string): string {
  const quote = text.indexOf('"');
  return quote < 0 ? text : text.slice(0, quote);
}

/** A backslash or a character below U+0020 (both need escaping inside a JSON string). */
function hasEscapeOrControl(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x5c) return true;
  }
  return false;
}
