/**
 * A tiny GBNF reader and matcher (llama.cpp's dialect, the parts mentor's grammars use): rules
 * `name ::= …`, literals with escapes, character classes (negation, ranges, escapes), groups,
 * alternatives, `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`, comments. For tests: whether a text is in a
 * grammar's language, or can still be completed into one of its strings. No left recursion.
 */

type Node =
  | { kind: "alt"; options: Node[] }
  | { kind: "seq"; items: Node[] }
  | { kind: "lit"; chars: string[] }
  | { kind: "class"; negated: boolean; ranges: [number, number][] }
  | { kind: "ref"; name: string }
  | { kind: "rep"; item: Node; min: number; max: number };

export class Gbnf {
  private readonly rules = new Map<string, Node>();
  private text = "";
  private at = 0;

  constructor(source: string) {
    this.text = source;
    this.skip();
    while (this.at < this.text.length) {
      const name = this.identifier();
      this.skip();
      if (!this.text.startsWith("::=", this.at)) throw new Error(`expected ::= after ${name} at ${this.at}`);
      this.at += 3;
      this.rules.set(name, this.alternatives());
    }
    if (!this.rules.has("root")) throw new Error("no root rule");
    for (const [name, node] of this.rules) this.checkRefs(name, node);
  }

  /** Whether the whole text is a string of the grammar. */
  matches(text: string): boolean {
    const chars = [...text];
    return new Matcher(this.rules, chars, false).run().has(chars.length);
  }

  /** Whether some string of the grammar starts with the text. */
  viablePrefix(text: string): boolean {
    const chars = [...text];
    return new Matcher(this.rules, chars, true).run().has(chars.length);
  }

  private checkRefs(rule: string, node: Node): void {
    if (node.kind === "ref" && !this.rules.has(node.name))
      throw new Error(`rule ${rule} refers to undefined ${node.name}`);
    if (node.kind === "alt") for (const option of node.options) this.checkRefs(rule, option);
    if (node.kind === "seq") for (const item of node.items) this.checkRefs(rule, item);
    if (node.kind === "rep") this.checkRefs(rule, node.item);
  }

  /** Skips spaces, newlines and comments (within a rule too: a rule ends where the next `name ::=` starts). */
  private skip(): void {
    for (;;) {
      while (this.at < this.text.length && /\s/.test(this.text[this.at] as string)) this.at++;
      if (this.text[this.at] !== "#") return;
      while (this.at < this.text.length && this.text[this.at] !== "\n") this.at++;
    }
  }

  private identifier(): string {
    const match = /^[a-zA-Z0-9-]+/.exec(this.text.slice(this.at));
    if (!match)
      throw new Error(`expected a rule name at ${this.at}: ${this.text.slice(this.at, this.at + 20)}`);
    this.at += match[0].length;
    return match[0];
  }

  private ruleStartsHere(): boolean {
    return /^[a-zA-Z0-9-]+\s*::=/.test(this.text.slice(this.at));
  }

  private alternatives(): Node {
    const options = [this.sequence()];
    while (this.text[this.at] === "|") {
      this.at++;
      options.push(this.sequence());
    }
    return options.length === 1 ? (options[0] as Node) : { kind: "alt", options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    for (;;) {
      this.skip();
      const char = this.text[this.at];
      if (char === undefined || char === "|" || char === ")" || this.ruleStartsHere()) break;
      let item: Node;
      if (char === '"') item = this.literal();
      else if (char === "[") item = this.characterClass();
      else if (char === "(") {
        this.at++;
        item = this.alternatives();
        this.skip();
        if (this.text[this.at] !== ")") throw new Error(`expected ) at ${this.at}`);
        this.at++;
      } else item = { kind: "ref", name: this.identifier() };
      items.push(this.repetition(item));
    }
    return items.length === 1 ? (items[0] as Node) : { kind: "seq", items };
  }

  private repetition(item: Node): Node {
    const char = this.text[this.at];
    if (char === "*") return this.advance({ kind: "rep", item, min: 0, max: Number.POSITIVE_INFINITY }, 1);
    if (char === "+") return this.advance({ kind: "rep", item, min: 1, max: Number.POSITIVE_INFINITY }, 1);
    if (char === "?") return this.advance({ kind: "rep", item, min: 0, max: 1 }, 1);
    const bounds = /^\{(\d+)(,(\d*))?\}/.exec(this.text.slice(this.at));
    if (!bounds) return item;
    const min = Number(bounds[1]);
    const max =
      bounds[2] === undefined ? min : bounds[3] === "" ? Number.POSITIVE_INFINITY : Number(bounds[3]);
    return this.advance({ kind: "rep", item, min, max }, bounds[0].length);
  }

  private advance(node: Node, length: number): Node {
    this.at += length;
    return node;
  }

  private literal(): Node {
    this.at++;
    const chars: string[] = [];
    while (this.text[this.at] !== '"') {
      if (this.at >= this.text.length) throw new Error("unterminated literal");
      chars.push(String.fromCodePoint(this.character()));
    }
    this.at++;
    return { kind: "lit", chars };
  }

  private characterClass(): Node {
    this.at++;
    const negated = this.text[this.at] === "^";
    if (negated) this.at++;
    const ranges: [number, number][] = [];
    while (this.text[this.at] !== "]") {
      if (this.at >= this.text.length) throw new Error("unterminated class");
      const start = this.character();
      if (this.text[this.at] === "-" && this.text[this.at + 1] !== "]") {
        this.at++;
        ranges.push([start, this.character()]);
      } else ranges.push([start, start]);
    }
    this.at++;
    return { kind: "class", negated, ranges };
  }

  /** One character of a literal or class, escapes decoded, as a code point. */
  private character(): number {
    const char = this.text.codePointAt(this.at) as number;
    if (char !== 0x5c) {
      this.at += char > 0xffff ? 2 : 1;
      return char;
    }
    const kind = this.text[this.at + 1];
    const hex = (length: number) => {
      const digits = this.text.slice(this.at + 2, this.at + 2 + length);
      if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== length)
        throw new Error(`bad escape at ${this.at}`);
      this.at += 2 + length;
      return Number.parseInt(digits, 16);
    };
    if (kind === "x") return hex(2);
    if (kind === "u") return hex(4);
    if (kind === "U") return hex(8);
    this.at += 2;
    const simple: Record<string, number> = { n: 10, t: 9, r: 13, "\\": 92, '"': 34, "[": 91, "]": 93 };
    const code = simple[kind as string];
    if (code === undefined) throw new Error(`unknown escape \\${kind} at ${this.at}`);
    return code;
  }
}

class Matcher {
  private readonly memo = new Map<string, Set<number>>();

  constructor(
    private readonly rules: Map<string, Node>,
    private readonly input: string[],
    private readonly prefix: boolean,
  ) {}

  run(): Set<number> {
    return this.match(this.rules.get("root") as Node, 0);
  }

  /** The positions where a match of `node` starting at `at` can end. */
  private match(node: Node, at: number): Set<number> {
    const end = this.input.length;
    // In prefix mode, input that ran out part-way is a viable match (every rule here is productive).
    if (this.prefix && at === end) return new Set([end]);
    switch (node.kind) {
      case "lit": {
        let position = at;
        for (const char of node.chars) {
          if (position === end) return this.prefix ? new Set([end]) : new Set();
          if (this.input[position] !== char) return new Set();
          position++;
        }
        return new Set([position]);
      }
      case "class": {
        const char = this.input[at];
        if (char === undefined) return new Set();
        const code = char.codePointAt(0) as number;
        const inside = node.ranges.some(([low, high]) => code >= low && code <= high);
        return inside !== node.negated ? new Set([at + 1]) : new Set();
      }
      case "ref": {
        const key = `${node.name}@${at}`;
        const known = this.memo.get(key);
        if (known) return known;
        const result = this.match(this.rules.get(node.name) as Node, at);
        this.memo.set(key, result);
        return result;
      }
      case "alt": {
        const result = new Set<number>();
        for (const option of node.options)
          for (const position of this.match(option, at)) result.add(position);
        return result;
      }
      case "seq": {
        let positions = new Set([at]);
        for (const item of node.items) {
          const next = new Set<number>();
          for (const position of positions) for (const found of this.match(item, position)) next.add(found);
          positions = next;
          if (positions.size === 0) break;
        }
        return positions;
      }
      case "rep": {
        const result = new Set<number>();
        let frontier = new Set([at]);
        const seen = new Set<number>();
        for (let count = 0; frontier.size > 0; count++) {
          if (count >= node.min) for (const position of frontier) result.add(position);
          if (count >= node.max) break;
          const next = new Set<number>();
          for (const position of frontier) {
            for (const found of this.match(node.item, position)) {
              // An empty repetition adds nothing; a position seen at this count or more is done.
              if (found === position && count >= node.min) continue;
              if (!seen.has(found) || count < node.min) next.add(found);
            }
          }
          if (count >= node.min) for (const position of next) seen.add(position);
          frontier = next;
        }
        return result;
      }
    }
  }
}
