import { lineAndColumn, MentorError } from "../errors/index.js";
import {
  and,
  atom,
  binary,
  FALSE,
  type Formula,
  iff,
  implies,
  not,
  or,
  TRUE,
  type UnaryKind,
  unary,
  weakUntil,
} from "./formula.js";

/**
 * Grammar, loosest binding first (binary temporal operators and `->` associate to the right):
 *
 *   formula  := implies ('<->' implies)*
 *   implies  := or ('->' implies)?
 *   or       := and ('|' and)*
 *   and      := temporal ('&' temporal)*
 *   temporal := unary (('U' | 'R' | 'W' | 'S') temporal)?
 *   unary    := ('!' | 'X' | 'WX' | 'F' | 'G' | 'Y' | 'WY' | 'O' | 'H') unary | primary
 *   primary  := 'true' | 'false' | atom | '(' formula ')'
 *   atom     := name ('(' argument (',' argument)* ')')?
 *
 * Aliases: `~` for `!`, `&&` for `&`, `||` for `|`, `=>` for `->`, `<=>` for `<->`.
 * Arguments are names, numbers or quoted strings.
 */

type TokenType = "name" | "number" | "string" | "symbol" | "end";
interface Token {
  type: TokenType;
  text: string;
  offset: number;
}

const unaryKeywords: Record<string, UnaryKind> = {
  X: "next",
  WX: "weakNext",
  F: "eventually",
  G: "always",
  Y: "yesterday",
  WY: "weakYesterday",
  O: "once",
  H: "historically",
};
const binaryKeywords = new Set(["U", "R", "W", "S"]);
const reserved = new Set([...Object.keys(unaryKeywords), ...binaryKeywords, "true", "false"]);
const symbols = ["<->", "<=>", "->", "=>", "&&", "||", "!", "~", "&", "|", "(", ")", ","];
const symbolAliases: Record<string, string> = { "<=>": "<->", "=>": "->", "&&": "&", "||": "|", "~": "!" };

export interface ParseOptions {
  /** Named in error messages (e.g. the rule id and policy file). */
  source?: string;
}

/** Parses an LTLf formula with past operators; errors carry line, column and what was expected. */
export function parseFormula(text: string, options: ParseOptions = {}): Formula {
  return new Parser(text, options).parseAll();
}

class Parser {
  private readonly tokens: Token[];
  private position = 0;

  constructor(
    private readonly text: string,
    private readonly options: ParseOptions,
  ) {
    this.tokens = this.tokenize();
  }

  parseAll(): Formula {
    const formula = this.parseIff();
    if (this.peek().type !== "end") this.fail("an operator or the end of the formula");
    return formula;
  }

  private parseIff(): Formula {
    let left = this.parseImplies();
    while (this.accept("<->")) left = iff(left, this.parseImplies());
    return left;
  }

  private parseImplies(): Formula {
    const left = this.parseOr();
    return this.accept("->") ? implies(left, this.parseImplies()) : left;
  }

  private parseOr(): Formula {
    const operands = [this.parseAnd()];
    while (this.accept("|")) operands.push(this.parseAnd());
    return or(operands);
  }

  private parseAnd(): Formula {
    const operands = [this.parseTemporal()];
    while (this.accept("&")) operands.push(this.parseTemporal());
    return and(operands);
  }

  private parseTemporal(): Formula {
    const left = this.parseUnary();
    const token = this.peek();
    if (token.type !== "name" || !binaryKeywords.has(token.text)) return left;
    this.position++;
    const right = this.parseTemporal();
    switch (token.text) {
      case "U":
        return binary("until", left, right);
      case "R":
        return binary("release", left, right);
      case "S":
        return binary("since", left, right);
      default:
        return weakUntil(left, right);
    }
  }

  private parseUnary(): Formula {
    if (this.accept("!")) return not(this.parseUnary());
    const token = this.peek();
    const kind = token.type === "name" ? unaryKeywords[token.text] : undefined;
    if (kind) {
      this.position++;
      return unary(kind, this.parseUnary());
    }
    return this.parsePrimary();
  }

  private parsePrimary(): Formula {
    const token = this.peek();
    if (this.accept("(")) {
      const inner = this.parseIff();
      this.expect(")", `')' to close the '(' at column ${this.locate(token.offset).column}`);
      return inner;
    }
    if (token.type === "name") {
      if (token.text === "true" || token.text === "false") {
        this.position++;
        return token.text === "true" ? TRUE : FALSE;
      }
      if (!reserved.has(token.text)) {
        this.position++;
        return atom(token.text, this.parseArguments());
      }
      if (binaryKeywords.has(token.text)) this.fail(`a formula before the binary operator '${token.text}'`);
    }
    return this.fail("an atom, 'true', 'false', '(' or a unary operator (! X WX F G Y WY O H)");
  }

  private parseArguments(): string[] {
    if (!this.accept("(")) return [];
    const args: string[] = [];
    do {
      const token = this.peek();
      if (token.type !== "name" && token.type !== "number" && token.type !== "string") {
        this.fail("an argument (a name, a number or a quoted string)");
      }
      this.position++;
      args.push(token.text);
    } while (this.accept(","));
    this.expect(")", "',' or ')' in the argument list");
    return args;
  }

  private peek(): Token {
    return this.tokens[this.position] as Token;
  }

  private accept(symbol: string): boolean {
    const token = this.peek();
    if (token.type === "symbol" && token.text === symbol) {
      this.position++;
      return true;
    }
    return false;
  }

  private expect(symbol: string, expected: string): void {
    if (!this.accept(symbol)) this.fail(expected);
  }

  private fail(expected: string): never {
    const token = this.peek();
    const found = token.type === "end" ? "the end of the formula" : `'${token.text}'`;
    throw this.error(`expected ${expected}, found ${found}`, token.offset);
  }

  private error(message: string, offset: number): MentorError {
    const source = this.options.source ? `${this.options.source}: ` : "";
    return new MentorError("MNT_ERR_FORMULA_SYNTAX", `${source}${message}`, this.locate(offset));
  }

  private locate(offset: number): { line: number; column: number } {
    return lineAndColumn(this.text, offset);
  }

  private tokenize(): Token[] {
    const tokens: Token[] = [];
    const text = this.text;
    let offset = 0;
    while (offset < text.length) {
      const char = text[offset] as string;
      if (/\s/.test(char)) {
        offset++;
        continue;
      }
      const name = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(text.slice(offset));
      if (name) {
        tokens.push({ type: "name", text: name[0], offset });
        offset += name[0].length;
        continue;
      }
      const number = /^-?[0-9]+(\.[0-9]+)?/.exec(text.slice(offset));
      if (number) {
        tokens.push({ type: "number", text: number[0], offset });
        offset += number[0].length;
        continue;
      }
      if (char === '"' || char === "'") {
        const close = text.indexOf(char, offset + 1);
        if (close < 0) throw this.error(`unterminated string starting here`, offset);
        tokens.push({ type: "string", text: text.slice(offset, close + 1), offset });
        offset = close + 1;
        continue;
      }
      const symbol = symbols.find((candidate) => text.startsWith(candidate, offset));
      if (!symbol) throw this.error(`unexpected character '${char}'`, offset);
      tokens.push({ type: "symbol", text: symbolAliases[symbol] ?? symbol, offset });
      offset += symbol.length;
    }
    tokens.push({ type: "end", text: "", offset: text.length });
    return tokens;
  }
}
