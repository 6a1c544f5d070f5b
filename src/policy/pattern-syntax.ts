/**
 * The syntax tree of a JavaScript regular expression in `u` mode, as far as the pattern check
 * (pattern-check.ts) and the windowed matcher (text-pattern.ts) need it. It parses only sources
 * that `new RegExp(source, "u")` has accepted, so it reports no syntax errors of its own.
 */
export type PatternNode =
  /** One character: a literal, an escape, a class or `.`. */
  | CharNode
  | { kind: "sequence"; items: PatternNode[] }
  | { kind: "choice"; branches: PatternNode[] }
  | { kind: "group"; body: PatternNode }
  | { kind: "look"; body: PatternNode; start: number; end: number }
  /** `^`, `$`, `\b`, `\B`. */
  | { kind: "anchor"; text: string; start: number; end: number }
  | RepeatNode
  | { kind: "backreference"; start: number; end: number };

export interface CharNode {
  kind: "char";
  /** The node's text in the pattern: a regex on its own that matches the same characters. */
  source: string;
  /** The characters it matches (before case folding) when they are few; undefined when not listed. */
  members: readonly string[] | undefined;
  start: number;
  end: number;
}

export interface RepeatNode {
  kind: "repeat";
  body: PatternNode;
  min: number;
  /** Infinity for `*`, `+` and `{n,}`. */
  max: number;
  start: number;
  end: number;
}

/** A class or range larger than this is not listed (its members are then unknown). */
const maxListed = 512;
const digits = "0123456789";
const wordCharacters = `abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ${digits}_`;
const whiteSpace =
  "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff";
const controlEscapes: Record<string, string> = { t: "\t", n: "\n", v: "\v", f: "\f", r: "\r", "0": "\0" };
const classEscapes: Record<string, string> = { d: digits, w: wordCharacters, s: whiteSpace };

/** The syntax tree of a source that compiles with the `u` flag. */
export function parsePattern(source: string): PatternNode {
  return new Parser(source).parse();
}

/** The node's direct children (a lookaround's body included). */
export function childrenOf(node: PatternNode): readonly PatternNode[] {
  switch (node.kind) {
    case "sequence":
      return node.items;
    case "choice":
      return node.branches;
    case "group":
    case "look":
    case "repeat":
      return [node.body];
    default:
      return [];
  }
}

/** Every node of the tree, parents before children (lookaround bodies included). */
export function* patternNodes(node: PatternNode): Generator<PatternNode> {
  yield node;
  for (const child of childrenOf(node)) yield* patternNodes(child);
}

/** A set of characters as the parser reads it: listed members, or unknown (`undefined`). */
interface Members {
  members: string[] | undefined;
  /** The single character of a literal or escape (a possible end of a range). */
  single?: number;
}

class Parser {
  private index = 0;

  constructor(private readonly source: string) {}

  parse(): PatternNode {
    return this.disjunction();
  }

  private disjunction(): PatternNode {
    const branches = [this.alternative()];
    while (this.source[this.index] === "|") {
      this.index++;
      branches.push(this.alternative());
    }
    return branches.length === 1 ? (branches[0] as PatternNode) : { kind: "choice", branches };
  }

  private alternative(): PatternNode {
    const items: PatternNode[] = [];
    while (
      this.index < this.source.length &&
      this.source[this.index] !== "|" &&
      this.source[this.index] !== ")"
    )
      items.push(this.term());
    return { kind: "sequence", items };
  }

  private term(): PatternNode {
    const start = this.index;
    const source = this.source;
    const next = source[start];
    if (next === "^" || next === "$") {
      this.index++;
      return { kind: "anchor", text: next, start, end: this.index };
    }
    if (next === "\\" && (source[start + 1] === "b" || source[start + 1] === "B")) {
      this.index += 2;
      return { kind: "anchor", text: source.slice(start, this.index), start, end: this.index };
    }
    let atom: PatternNode;
    if (next === "(") {
      const look = /^\(\?<?[=!]/.exec(source.slice(start, start + 4));
      if (look) {
        this.index += look[0].length;
        const body = this.disjunction();
        this.index++; // )
        return { kind: "look", body, start, end: this.index };
      }
      const opening = /^\((?:\?:|\?<[^>]*>)?/.exec(source.slice(start)) as RegExpExecArray;
      this.index += opening[0].length;
      const body = this.disjunction();
      this.index++; // )
      atom = { kind: "group", body };
    } else if (next === "[") {
      atom = this.characterClass();
    } else if (next === "\\") {
      atom = this.escape();
    } else {
      const character = String.fromCodePoint(source.codePointAt(start) as number);
      this.index += character.length;
      atom = this.char(next === "." ? undefined : [character], start);
    }
    return this.quantified(atom, start);
  }

  private quantified(atom: PatternNode, start: number): PatternNode {
    const quantifier = /^(?:[*+?]|\{(\d+)(,(\d*))?\})\??/.exec(this.source.slice(this.index));
    if (!quantifier) return atom;
    this.index += quantifier[0].length;
    const symbol = quantifier[0][0];
    const [min, max] =
      symbol === "*"
        ? [0, Infinity]
        : symbol === "+"
          ? [1, Infinity]
          : symbol === "?"
            ? [0, 1]
            : [
                Number(quantifier[1]),
                quantifier[2] === undefined
                  ? Number(quantifier[1])
                  : quantifier[3] === ""
                    ? Infinity
                    : Number(quantifier[3]),
              ];
    return { kind: "repeat", body: atom, min, max, start, end: this.index };
  }

  private char(members: string[] | undefined, start: number): CharNode {
    return { kind: "char", source: this.source.slice(start, this.index), members, start, end: this.index };
  }

  /** An escape outside a class: a character, a class escape or a backreference. */
  private escape(): PatternNode {
    const start = this.index;
    const letter = this.source[start + 1] as string;
    if (/[1-9]/.test(letter) || letter === "k") {
      this.index += (/^\\(?:\d+|k<[^>]*>)/.exec(this.source.slice(start)) as RegExpExecArray)[0].length;
      return { kind: "backreference", start, end: this.index };
    }
    return this.char(this.escapedMembers(false).members, start);
  }

  /** Reads an escape at the index (inside a class when `inClass`: `\b` is a backspace there). */
  private escapedMembers(inClass: boolean): Members {
    const start = this.index;
    const letter = this.source[start + 1] as string;
    const listed = classEscapes[letter];
    if (listed !== undefined) {
      this.index += 2;
      return { members: [...listed] };
    }
    if ("DSW".includes(letter)) {
      this.index += 2;
      return { members: undefined };
    }
    if (letter === "p" || letter === "P") {
      this.index = this.source.indexOf("}", start) + 1;
      return { members: undefined };
    }
    const coded = /^\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]+)\}|c([a-zA-Z]))/.exec(
      this.source.slice(start),
    );
    let code: number;
    if (coded) {
      this.index += coded[0].length;
      const hex = coded[1] ?? coded[2] ?? coded[3];
      code = hex !== undefined ? Number.parseInt(hex, 16) : (coded[4]?.charCodeAt(0) as number) % 32;
    } else {
      const character = String.fromCodePoint(this.source.codePointAt(start + 1) as number);
      this.index += 1 + character.length;
      code =
        inClass && character === "b"
          ? 8
          : (controlEscapes[character]?.codePointAt(0) ?? (character.codePointAt(0) as number));
    }
    return { members: [String.fromCodePoint(code)], single: code };
  }

  private characterClass(): CharNode {
    const start = this.index;
    this.index++; // [
    const negated = this.source[this.index] === "^";
    if (negated) this.index++;
    let members: string[] | undefined = [];
    while (this.source[this.index] !== "]") {
      const low = this.classAtom();
      let part = low.members;
      if (
        this.source[this.index] === "-" &&
        this.source[this.index + 1] !== "]" &&
        low.single !== undefined
      ) {
        this.index++;
        const high = this.classAtom().single as number;
        part =
          high - low.single < maxListed
            ? Array.from({ length: high - low.single + 1 }, (_, offset) =>
                String.fromCodePoint((low.single as number) + offset),
              )
            : undefined;
      }
      members =
        members && part && members.length + part.length <= maxListed ? [...members, ...part] : undefined;
    }
    this.index++; // ]
    return this.char(negated ? undefined : members, start);
  }

  private classAtom(): Members {
    if (this.source[this.index] === "\\") return this.escapedMembers(true);
    const code = this.source.codePointAt(this.index) as number;
    this.index += code > 0xffff ? 2 : 1;
    return { members: [String.fromCodePoint(code)], single: code };
  }
}
