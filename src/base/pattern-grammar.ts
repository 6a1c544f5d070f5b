/**
 * The GBNF of a JSON string whose value matches a regular expression (a JSON Schema `pattern`), or
 * undefined when the pattern is outside the subset read here: anchored as a whole (`^…$`, no
 * top-level `|`), with literals, escaped punctuation, `.`, `\d \w \s`, classes (ranges, negation),
 * groups (`(…)`, `(?:…)`), `|` inside groups, and the quantifiers `* + ? {m} {m,} {m,n}` (lazy or
 * not). Lookarounds, anchors inside, `\b`, back references and the like are not read.
 *
 * The grammar writes the JSON text of the string, so `"` and `\` are written as their escapes;
 * characters that JSON must escape otherwise (control characters) are never written, and `\s` is
 * a space: every string the grammar admits matches the pattern, a few that match are not admitted.
 */
export function patternGrammar(pattern: string, rule: (body: string) => string): string | undefined {
  if (!pattern.startsWith("^") || !pattern.endsWith("$") || pattern.endsWith("\\$")) return undefined;
  const reader = new PatternReader(pattern.slice(1, -1), rule);
  try {
    const body = reader.alternatives(true);
    if (!reader.done()) return undefined;
    return rule(`"\\"" ${body} "\\""`);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

class Unsupported extends Error {}

type Ranges = [number, number][];

/** Code points a JSON string cannot hold unescaped (control characters), or that need an escape (`"`, `\`). */
const unwritable: Ranges = [
  [0x00, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];

const classes: Record<string, Ranges> = {
  d: [[0x30, 0x39]],
  w: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
  s: [[0x20, 0x20]],
};

class PatternReader {
  private at = 0;

  constructor(
    private readonly text: string,
    private readonly rule: (body: string) => string,
  ) {}

  done(): boolean {
    return this.at >= this.text.length;
  }

  /** `a|b|…` up to a `)` or the end; at the top level (`whole`) only one branch is read. */
  alternatives(whole: boolean): string {
    const branches = [this.sequence()];
    while (this.text[this.at] === "|") {
      if (whole) throw new Unsupported();
      this.at++;
      branches.push(this.sequence());
    }
    return branches.length === 1 ? (branches[0] as string) : `(${branches.join(" | ")})`;
  }

  private sequence(): string {
    const items: string[] = [];
    while (!this.done() && this.text[this.at] !== "|" && this.text[this.at] !== ")")
      items.push(this.quantified(this.atom()));
    return items.length === 0 ? '""' : items.join(" ");
  }

  private quantified(item: string): string {
    const char = this.text[this.at];
    let suffix = "";
    if (char === "*" || char === "+" || char === "?") {
      this.at++;
      suffix = char;
    } else if (char === "{") {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.text.slice(this.at));
      if (!match) throw new Unsupported();
      this.at += match[0].length;
      suffix = match[2] === undefined ? `{${match[1]}}` : `{${match[1]},${match[3] ?? ""}}`;
    } else return item;
    if (this.text[this.at] === "?") this.at++; // lazy: the same language
    return `${item}${suffix}`;
  }

  private atom(): string {
    const char = this.text[this.at] as string;
    if (char === "(") {
      this.at++;
      if (this.text[this.at] === "?") {
        if (this.text[this.at + 1] !== ":") throw new Unsupported();
        this.at += 2;
      }
      const body = this.alternatives(false);
      if (this.text[this.at] !== ")") throw new Unsupported();
      this.at++;
      return this.rule(body);
    }
    if (char === "[") return this.characterClass();
    if (char === ".") {
      this.at++;
      return classText(subtract([[0x20, 0x10ffff]], unwritable));
    }
    if ("*+?{})]^$".includes(char)) throw new Unsupported();
    if (char === "\\") {
      const kind = this.text[this.at + 1] ?? "";
      this.at += 2;
      const named = classes[kind];
      if (named) return classText(named);
      if (/^[A-Za-z0-9]$/.test(kind) || kind === "") throw new Unsupported();
      return literalOf(kind);
    }
    const code = this.text.codePointAt(this.at) as number;
    this.at += code > 0xffff ? 2 : 1;
    return literalOf(String.fromCodePoint(code));
  }

  private characterClass(): string {
    this.at++;
    const negated = this.text[this.at] === "^";
    if (negated) this.at++;
    const ranges: Ranges = [];
    let first = true;
    while (this.text[this.at] !== "]" || first) {
      if (this.done()) throw new Unsupported();
      first = false;
      const member = this.classMember();
      if (typeof member !== "number") {
        ranges.push(...member);
        continue;
      }
      if (this.text[this.at] === "-" && this.text[this.at + 1] !== "]" && this.at + 1 < this.text.length) {
        this.at++;
        const end = this.classMember();
        if (typeof end !== "number" || end < member) throw new Unsupported();
        ranges.push([member, end]);
      } else ranges.push([member, member]);
    }
    this.at++;
    const admitted = negated ? subtract([[0, 0x10ffff]], ranges) : ranges;
    const written = subtract(admitted, unwritable);
    if (written.length === 0) throw new Unsupported();
    return classText(written);
  }

  /** One member of a class: a code point, or the ranges of `\d \w \s`. */
  private classMember(): number | Ranges {
    const char = this.text.codePointAt(this.at) as number;
    if (char !== 0x5c) {
      this.at += char > 0xffff ? 2 : 1;
      return char;
    }
    const kind = this.text[this.at + 1] ?? "";
    this.at += 2;
    const named = classes[kind];
    if (named) return named;
    if (kind === "n") return 0x0a;
    if (kind === "t") return 0x09;
    if (/^[A-Za-z0-9]$/.test(kind) || kind === "") throw new Unsupported();
    return kind.codePointAt(0) as number;
  }
}

/** The ranges of `from` less those of `less`. */
function subtract(from: Ranges, less: Ranges): Ranges {
  let result = from;
  for (const [low, high] of less)
    result = result.flatMap(([start, end]): Ranges => {
      if (high < start || low > end) return [[start, end]];
      const kept: Ranges = [];
      if (start < low) kept.push([start, low - 1]);
      if (end > high) kept.push([high + 1, end]);
      return kept;
    });
  return result;
}

/** A GBNF class of the ranges, every character as an escape (no class syntax to get wrong). */
function classText(ranges: Ranges): string {
  const hex = (code: number) =>
    code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : code <= 0xffff
        ? `\\u${code.toString(16).padStart(4, "0")}`
        : `\\U${code.toString(16).padStart(8, "0")}`;
  return `[${ranges.map(([low, high]) => (low === high ? hex(low) : `${hex(low)}-${hex(high)}`)).join("")}]`;
}

/** The GBNF literal of one character as the JSON text writes it (`"` and `\` escaped). */
function literalOf(char: string): string {
  const json = JSON.stringify(char).slice(1, -1);
  if (json.length > 1 && char !== '"' && char !== "\\") throw new Unsupported(); // a control character
  return `"${json.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
