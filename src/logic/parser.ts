import { type ErrorCode, lineAndColumn, MentorError } from "../errors/index.js";
import { agentltlTemplates, type CountComparison, countComparisons } from "./agentltl.js";
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
 *
 * AgentLTL's functions, written as AgentLTL writes them (a quoted tool name or a list first:
 * `now("x")`, `called("x")`, `before("a", "b")`, `called_n("x", <= 2)`, …), have AgentLTL's
 * meaning over atoms named by the tools (`agentltl.ts`); those it cannot express are errors
 * naming the function, never atoms.
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
// `[ ] == >= <= < > =` only occur in the arguments of AgentLTL's functions.
const symbols = [
  "<->",
  "<=>",
  "->",
  "=>",
  "&&",
  "||",
  "==",
  ">=",
  "<=",
  "!",
  "~",
  "&",
  "|",
  "(",
  ")",
  ",",
  "[",
  "]",
  "<",
  ">",
  "=",
];
const symbolAliases: Record<string, string> = { "<=>": "<->", "=>": "->", "&&": "&", "||": "|", "~": "!" };

/**
 * How deep a formula may nest: unary operators, parentheses and right-nested binary operators
 * (`a U (b U …)`, `a -> (b -> …)`), and `<->` chains. The parser and the passes over a formula
 * (normal forms, progression) recurse; far below where the stack would overflow, and far above
 * what a rule needs.
 */
export const maxFormulaDepth = 256;

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
  private depth = 0;
  /** AgentLTL's functions read so far that are facts about the whole trace (`before`, …). */
  private readonly wholeTraceCalls: Token[] = [];

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
    const depth = this.depth;
    let left = this.parseImplies();
    // A chain nests to the left: each `<->` is one level more.
    for (let token = this.peek(); this.accept("<->"); token = this.peek()) {
      this.enter(token);
      left = iff(left, this.parseImplies());
    }
    this.depth = depth;
    return left;
  }

  private parseImplies(): Formula {
    const left = this.parseOr();
    const token = this.peek();
    return this.accept("->")
      ? implies(
          left,
          this.nested(token, () => this.parseImplies()),
        )
      : left;
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
    const mark = this.wholeTraceCalls.length;
    const left = this.parseUnary();
    const token = this.peek();
    if (token.type !== "name" || !binaryKeywords.has(token.text)) return left;
    this.position++;
    const right = this.nested(token, () => this.parseTemporal());
    this.refuseWholeTraceCalls(mark, token.text);
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
    const token = this.peek();
    if (this.accept("!")) return not(this.nested(token, () => this.parseUnary()));
    const kind = token.type === "name" ? unaryKeywords[token.text] : undefined;
    if (kind) {
      this.position++;
      const mark = this.wholeTraceCalls.length;
      const operand = this.nested(token, () => this.parseUnary());
      this.refuseWholeTraceCalls(mark, token.text);
      return unary(kind, operand);
    }
    return this.parsePrimary();
  }

  private parsePrimary(): Formula {
    const token = this.peek();
    if (this.accept("(")) {
      const inner = this.nested(token, () => this.parseIff());
      this.expect(")", `')' to close the '(' at column ${this.locate(token.offset).column}`);
      return inner;
    }
    if (token.type === "name") {
      if (token.text === "true" || token.text === "false") {
        this.position++;
        return token.text === "true" ? TRUE : FALSE;
      }
      if (this.isAgentltlCall()) return this.parseAgentltlCall();
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

  private isAgentltlCall(): boolean {
    const [name, open, first] = this.tokens.slice(this.position, this.position + 3);
    return (
      name?.type === "name" &&
      Object.hasOwn(agentltlFunctions, name.text.toLowerCase()) &&
      open?.text === "(" &&
      (first?.type === "string" ||
        first?.text === "[" ||
        typeof agentltlFunctions[name.text.toLowerCase() as keyof typeof agentltlFunctions] === "string")
    );
  }

  /** One of AgentLTL's functions, with its meaning (see `agentltlFunctions`). */
  private parseAgentltlCall(): Formula {
    const token = this.peek();
    const name = token.text.toLowerCase() as keyof typeof agentltlFunctions;
    const unsupported = agentltlFunctions[name];
    if (typeof unsupported === "string")
      throw this.error(`AgentLTL's ${name}(...) ${unsupported}`, token.offset, "MNT_ERR_FORMULA_UNSUPPORTED");
    this.position += 2;
    const tool = (): Formula => {
      const string = this.peek();
      if (string.type !== "string") this.fail(`a quoted tool name in ${name}(...)`);
      this.position++;
      return atom(string.text.slice(1, -1));
    };
    const count = (): number => {
      const number = this.peek();
      if (number.type !== "number" || !/^[0-9]+$/.test(number.text))
        this.fail(`a whole number in ${name}(...)`);
      this.position++;
      return Number(number.text);
    };
    const comma = (): void => this.expect(",", `',' in ${name}(...)`);
    const tools = (): Formula[] => {
      this.expect("[", `'[' to open the list of tools of ${name}(...)`);
      const list = [tool()];
      while (this.accept(",")) list.push(tool());
      this.expect("]", `',' or ']' in the list of tools of ${name}(...)`);
      return list;
    };
    const indexed = (): [Formula, number] => {
      const named = tool();
      this.expect("[", `'[' and the occurrence in ${name}(...)`);
      const index = count();
      this.expect("]", `']' after the occurrence in ${name}(...)`);
      return [named, index];
    };
    const formula = ((): Formula => {
      switch (name) {
        case "now":
          return tool();
        case "called":
          return calledAnywhere(tool());
        case "eventually":
          return unary("eventually", calledAnywhere(tool()));
        case "always":
          return unary("always", calledAnywhere(tool()));
        case "before":
        case "after": {
          const a = tool();
          comma();
          return agentltlTemplates[name === "before" ? "Before" : "After"](a, tool());
        }
        case "branch_called": {
          const correct = tool();
          return agentltlTemplates.BranchCalled(correct, this.accept(",") ? tool() : undefined);
        }
        case "in_order":
          return agentltlTemplates.CalledInOrder(tools());
        case "all_before": {
          const list = tools();
          comma();
          return agentltlTemplates.AllBefore(list, tool());
        }
        case "within_steps": {
          const a = tool();
          comma();
          const b = tool();
          comma();
          return agentltlTemplates.WithinSteps(a, b, count());
        }
        case "called_n": {
          const a = tool();
          comma();
          const op = this.peek().text as CountComparison;
          if (!countComparisons.includes(op))
            this.fail(`a comparison (${countComparisons.join(" ")}) in called_n(...)`);
          this.position++;
          return agentltlTemplates.CalledNTimes(a, count(), op);
        }
        default: {
          const [a, n] = indexed();
          comma();
          const [b, m] = indexed();
          return agentltlTemplates.InstanceBefore(a, n, b, m);
        }
      }
    })();
    this.expect(")", `')' to close ${name}(...)`);
    if (!["now", "called", "eventually", "always"].includes(name)) this.wholeTraceCalls.push(token);
    return formula;
  }

  /** A whole-trace function of AgentLTL inside a temporal operator has no LTLf meaning here. */
  private refuseWholeTraceCalls(mark: number, operator: string): void {
    const call = this.wholeTraceCalls[mark];
    if (call === undefined) return;
    throw this.error(
      `AgentLTL's ${call.text.toLowerCase()}(...) is a fact about the whole trace; mentor reads it only outside temporal operators (here inside ${operator}): move it out, or write it with now(...)`,
      call.offset,
      "MNT_ERR_FORMULA_UNSUPPORTED",
    );
  }

  /** Parses one level deeper, inside the operator or parenthesis `at`. */
  private nested(at: Token, parse: () => Formula): Formula {
    this.enter(at);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private enter(at: Token): void {
    this.depth++;
    if (this.depth > maxFormulaDepth)
      throw this.error(
        `the formula nests deeper than ${maxFormulaDepth} levels (operators and parentheses); split it into smaller rules`,
        at.offset,
        "MNT_ERR_FORMULA_TOO_LARGE",
      );
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

  private error(message: string, offset: number, code: ErrorCode = "MNT_ERR_FORMULA_SYNTAX"): MentorError {
    const source = this.options.source ? `${this.options.source}: ` : "";
    return new MentorError(code, `${source}${message}`, this.locate(offset));
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

/**
 * AgentLTL's function names (its parser reads them in any case); a string is why one has no
 * formula here.
 */
const agentltlFunctions = {
  now: true,
  called: true,
  eventually: true,
  always: true,
  before: true,
  after: true,
  branch_called: true,
  in_order: true,
  all_before: true,
  within_steps: true,
  called_n: true,
  instance_before: true,
  called_with:
    'matches arguments, which formulas cannot: declare a proposition with `when` and write called("proposition")',
  count_before: "is not supported: write the count with past operators (O, Y)",
} as const;

/** AgentLTL's `called(x)`: x occurs anywhere in the trace, whatever the position it is read at. */
function calledAnywhere(tool: Formula): Formula {
  return or([unary("once", tool), unary("eventually", tool)]);
}
