import { parsePattern, patternNodes } from "./pattern-syntax.js";

/**
 * The most characters a policy pattern reads at once. A longer text is read in windows: each owns a
 * stretch of at most `patternWindow - 2 * patternContext` characters (matches starting there are
 * its own) and reads `patternContext` characters on either side of it, so a match of up to
 * `patternContext` characters is found wherever it starts, and its lookarounds see at least that
 * much around it. The matching time is then bounded per window (about `patternWindow`² steps for
 * a pattern that passes the check of pattern-check.ts), linear in the text, where a search over
 * the whole text is at least quadratic.
 */
export const patternWindow = 2048;
export const patternContext = 256;
const stretch = patternWindow - 2 * patternContext;

/**
 * A policy regex run on untrusted text (task text, tool outputs): `firstMatch`, `allMatches` and
 * `test` read it in windows (`patternWindow`) and give the same matches as the regex on the whole
 * text when it is at most `patternWindow` long. On a longer one, a match up to `patternContext`
 * long is found wherever it is, `^` and `$` still mean the start and end of the text, and
 * lookarounds see only the window. Indexes are positions in the whole text.
 */
export class TextPattern {
  /** The regex for a window at the start, in the middle, at the end, and over the whole text. */
  private readonly windows: { head: RegExp; middle: RegExp; tail: RegExp; whole: RegExp };

  /** Throws the RegExp constructor's SyntaxError on an invalid source. `flags`: `u` or `iu`. */
  constructor(
    readonly source: string,
    readonly flags: "u" | "iu",
  ) {
    const whole = new RegExp(source, `${flags}g`);
    const anchors = [...patternNodes(parsePattern(source))].filter(
      (node) => node.kind === "anchor" && (node.text === "^" || node.text === "$"),
    ) as { text: string; start: number }[];
    // A window that does not reach the text's start (end) holds no place where ^ ($) matches.
    const without = (removed: string): RegExp => {
      if (!anchors.some((anchor) => removed.includes(anchor.text))) return whole;
      let text = source;
      for (const anchor of [...anchors].reverse())
        if (removed.includes(anchor.text))
          text = `${text.slice(0, anchor.start)}(?!)${text.slice(anchor.start + 1)}`;
      return new RegExp(text, `${flags}g`);
    };
    this.windows = { head: without("$"), middle: without("^$"), tail: without("^"), whole };
  }

  test(text: string): boolean {
    return this.search(text, false).length > 0;
  }

  /** The first match, as `RegExp.prototype.exec` gives it (index in the whole text). */
  firstMatch(text: string): RegExpExecArray | undefined {
    return this.search(text, false)[0];
  }

  /** Every match, not overlapping, in order, as `String.prototype.matchAll` gives them. */
  allMatches(text: string): RegExpExecArray[] {
    return this.search(text, true);
  }

  private search(text: string, all: boolean): RegExpExecArray[] {
    const found: RegExpExecArray[] = [];
    // Where the next match may start (after the previous one), in the whole text.
    let from = 0;
    for (let start = 0; start < text.length || start === 0; ) {
      const readStart = start === 0 ? 0 : boundary(text, start - patternContext);
      const end = text.length - readStart <= patternWindow ? text.length : cut(text, start);
      const readEnd = end === text.length ? end : boundary(text, end + patternContext);
      const regex =
        readStart === 0
          ? readEnd === text.length
            ? this.windows.whole
            : this.windows.head
          : readEnd === text.length
            ? this.windows.tail
            : this.windows.middle;
      const window = text.slice(readStart, readEnd);
      regex.lastIndex = Math.max(from, start) - readStart;
      while (regex.lastIndex <= window.length) {
        const match = regex.exec(window);
        // A match starting after the stretch belongs to the next window (the last one takes all).
        if (!match || (end < text.length && match.index + readStart >= end)) break;
        match.index += readStart;
        found.push(match);
        if (!all) return found;
        from = match.index + match[0].length;
        // After an empty match the next may start one character on (as matchAll does).
        if (match[0].length === 0) from += (text.codePointAt(from) ?? 0) > 0xffff ? 2 : 1;
        regex.lastIndex = from - readStart;
      }
      if (end === text.length) break;
      start = end;
    }
    return found;
  }
}

/**
 * Where the stretch starting at `start` ends: after the last line break in its second half, else
 * after the last sentence end there, else at its full length.
 */
function cut(text: string, start: number): number {
  const half = start + stretch / 2;
  const secondHalf = text.slice(half, start + stretch);
  const lineBreak = secondHalf.lastIndexOf("\n");
  if (lineBreak >= 0) return half + lineBreak + 1;
  const sentenceEnds = [...secondHalf.matchAll(/[.!?]\s/g)];
  const last = sentenceEnds[sentenceEnds.length - 1];
  return last ? half + last.index + 2 : boundary(text, start + stretch);
}

/** `position`, clamped to the text and moved back off the middle of a surrogate pair. */
function boundary(text: string, position: number): number {
  const clamped = Math.max(0, Math.min(text.length, position));
  const splitsPair =
    clamped > 0 &&
    clamped < text.length &&
    /[\uD800-\uDBFF]/.test(text[clamped - 1] as string) &&
    /[\uDC00-\uDFFF]/.test(text[clamped] as string);
  return splitsPair ? clamped - 1 : clamped;
}
