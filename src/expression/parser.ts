import { lineAndColumn, MentorError } from "../errors/index.js";
import {
  type BinaryOperator,
  type ComparisonOperator,
  childrenOf,
  type Expression,
  functionNames,
  functionParameters,
  isFunctionName,
  isMethodName,
  type LiteralExpression,
  methodArity,
  type PathSegment,
  type ReferenceRoot,
} from "./ast.js";

/**
 * Grammar, loosest binding first (binary operators associate to the left, comparisons do not
 * chain):
 *
 *   expression := and ('||' and)*
 *   and        := comparison ('&&' comparison)*
 *   comparison := additive (('==' | '!=' | '<' | '<=' | '>' | '>=' | 'in') additive)?
 *   additive   := term (('+' | '-') term)*
 *   term       := unary (('*' | '/' | '%') unary)*
 *   unary      := ('!' | '-') unary | postfix
 *   postfix    := primary ('.' name | '.' method '(' arguments ')' | '[' index ']')*
 *   primary    := number | string | 'true' | 'false' | 'null' | '[' list ']' | '(' expression ')'
 *               | function '(' arguments ')' | name
 *   index      := non-negative integer | string
 *
 * `!` and unary `-` bind tighter than every binary operator, as in JavaScript: `!a.x == 1`
 * reads `(!a.x) == 1`. Names `a`, `o` and `task` start references to the arguments, the
 * outcome and the task; other names are entity variables; `true false null in` are keywords.
 */

export interface ParseOptions {
  /** Named at the start of error messages (e.g. the policy file and rule id). */
  source?: string;
}

/**
 * Limits that keep every recursive walk of a tree (evaluation, formatting, checking) far from
 * the stack limit: parentheses, lists and prefix operators nest at most `maxDepth` levels, and
 * a tree is at most `maxHeight` nodes high (long chains like `1 + 1 + … + 1` count too).
 */
const maxDepth = 200;
const maxHeight = 1000;

type TokenType = "name" | "number" | "string" | "symbol" | "end";
interface Token {
  type: TokenType;
  /** The source text of the token. */
  text: string;
  /** For strings, the decoded value; for numbers, the numeric value. */
  value?: string | number;
  offset: number;
}

const symbols = [
  "==",
  "!=",
  "<=",
  ">=",
  "&&",
  "||",
  "<",
  ">",
  "!",
  "+",
  "-",
  "*",
  "/",
  "%",
  "(",
  ")",
  "[",
  "]",
  ",",
  ".",
];
const namePattern = /[A-Za-z_][A-Za-z0-9_]*/y;
const numberPattern = /[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const comparisonOperators = new Set<string>(["==", "!=", "<", "<=", ">", ">=", "in"]);
const keywords = new Set(["true", "false", "null", "in"]);
const roots = new Map<string, ReferenceRoot>([
  ["a", "arguments"],
  ["o", "outcome"],
  ["task", "task"],
]);
const simpleEscapes: Record<string, string> = { "'": "'", '"': '"', "\\": "\\", n: "\n", t: "\t", r: "\r" };

/**
 * Parses an expression. Throws `MentorError` with code `MNT_ERR_EXPRESSION_SYNTAX`, a 1-based
 * line and column relative to `text`, and a message "expected …, found …".
 */
export function parseExpression(text: string, options: ParseOptions = {}): Expression {
  return new Parser(text, options).parseAll();
}

/** The 1-based line and column of a character offset in `text` (lines end at '\n'). */
export { lineAndColumn };

class Parser {
  private readonly tokens: Token[];
  private position = 0;
  private depth = 0;
  private readonly heights = new WeakMap<Expression, number>();

  constructor(
    private readonly text: string,
    private readonly options: ParseOptions,
  ) {
    this.tokens = this.tokenize();
  }

  parseAll(): Expression {
    const expression = this.parseOr();
    if (this.peek().type !== "end") this.fail("an operator or the end of the expression");
    return expression;
  }

  private parseOr(): Expression {
    this.enter();
    let left = this.parseAnd();
    while (this.accept("||")) left = this.binary("||", left, this.parseAnd());
    this.depth--;
    return left;
  }

  private parseAnd(): Expression {
    let left = this.parseComparison();
    while (this.accept("&&")) left = this.binary("&&", left, this.parseComparison());
    return left;
  }

  private parseComparison(): Expression {
    const left = this.parseAdditive();
    const operator = this.comparisonOperator();
    if (!operator) return left;
    this.position++;
    const comparison = this.binary(operator, left, this.parseAdditive());
    if (this.comparisonOperator()) {
      this.fail("'&&', '||', ')' or the end of the expression (comparisons do not chain; add parentheses)");
    }
    return comparison;
  }

  private comparisonOperator(): ComparisonOperator | undefined {
    const token = this.peek();
    const isOperator =
      (token.type === "symbol" || (token.type === "name" && token.text === "in")) &&
      comparisonOperators.has(token.text);
    return isOperator ? (token.text as ComparisonOperator) : undefined;
  }

  private parseAdditive(): Expression {
    let left = this.parseTerm();
    for (;;) {
      if (this.accept("+")) left = this.binary("+", left, this.parseTerm());
      else if (this.accept("-")) left = this.binary("-", left, this.parseTerm());
      else return left;
    }
  }

  private parseTerm(): Expression {
    let left = this.parseUnary();
    for (;;) {
      if (this.accept("*")) left = this.binary("*", left, this.parseUnary());
      else if (this.accept("/")) left = this.binary("/", left, this.parseUnary());
      else if (this.accept("%")) left = this.binary("%", left, this.parseUnary());
      else return left;
    }
  }

  private parseUnary(): Expression {
    const token = this.peek();
    if (token.type !== "symbol" || (token.text !== "!" && token.text !== "-")) return this.parsePostfix();
    this.position++;
    this.enter();
    const operandIsNumber = this.peek().type === "number";
    const operand = this.parseUnary();
    this.depth--;
    const span = { offset: token.offset, length: operand.offset + operand.length - token.offset };
    if (
      token.text === "-" &&
      operandIsNumber &&
      operand.kind === "literal" &&
      typeof operand.value === "number"
    ) {
      return { kind: "literal", value: -operand.value, ...span };
    }
    return this.node({ kind: "unary", operator: token.text, operand, ...span });
  }

  private parsePostfix(): Expression {
    let expression = this.parsePrimary();
    for (;;) {
      if (this.accept(".")) {
        const name = this.peek();
        if (name.type !== "name") this.fail("a field or method name after '.'");
        this.position++;
        if (this.peek().type === "symbol" && this.peek().text === "(") {
          if (!isMethodName(name.text)) {
            this.fail(`a method (contains, startsWith, endsWith, lower, upper)`, name);
          }
          const open = this.peek();
          this.position++;
          const args: Expression[] = [];
          const arity = methodArity[name.text];
          for (let index = 0; index < arity; index++) {
            if (index > 0) this.expect(",", `',' (${name.text} takes ${arity} arguments)`);
            args.push(this.parseOr());
          }
          const close = this.expect(")", this.closeExpectation(name.text, arity, open));
          expression = this.node({
            kind: "method",
            name: name.text,
            target: expression,
            arguments: args,
            offset: expression.offset,
            length: close.offset + 1 - expression.offset,
          });
        } else {
          expression = this.extend(expression, name.text, name.offset + name.text.length);
        }
      } else if (this.peek().type === "symbol" && this.peek().text === "[") {
        this.position++;
        const index = this.peek();
        const key =
          index.type === "string"
            ? (index.value as string)
            : index.type === "number" && Number.isSafeInteger(index.value) && /^[0-9]+$/.test(index.text)
              ? (index.value as number)
              : undefined;
        if (key === undefined) this.fail("an index (a non-negative integer or a quoted string)");
        this.position++;
        const close = this.expect("]", "']' after the index");
        expression = this.extend(expression, key, close.offset + 1);
      } else {
        return expression;
      }
    }
  }

  /** Appends a path segment: to the reference's path, or as a member of another expression. */
  private extend(expression: Expression, key: PathSegment, end: number): Expression {
    const length = end - expression.offset;
    if (expression.kind === "reference") return { ...expression, path: [...expression.path, key], length };
    return this.node({ kind: "member", object: expression, key, offset: expression.offset, length });
  }

  private parsePrimary(): Expression {
    const token = this.peek();
    if (token.type === "number" || token.type === "string") {
      this.position++;
      return this.literal(token.value as number | string, token);
    }
    if (token.type === "symbol" && token.text === "(") {
      this.position++;
      const inner = this.parseOr();
      const close = this.expect(")", `')' to close the '(' at ${this.describe(token.offset)}`);
      // The parentheses belong to the node's span, so every span covers balanced text.
      return this.node({ ...inner, offset: token.offset, length: close.offset + 1 - token.offset });
    }
    if (token.type === "symbol" && token.text === "[") return this.parseList(token);
    if (token.type === "name") {
      if (token.text === "true" || token.text === "false" || token.text === "null") {
        this.position++;
        return this.literal(token.text === "null" ? null : token.text === "true", token);
      }
      if (!keywords.has(token.text)) {
        this.position++;
        const next = this.peek();
        if (next.type === "symbol" && next.text === "(") return this.parseCall(token);
        const root = roots.get(token.text);
        const span = { offset: token.offset, length: token.text.length };
        if (root) return { kind: "reference", root, path: [], ...span };
        return { kind: "reference", root: "variable", path: [token.text], ...span };
      }
    }
    return this.fail(
      "a value (a number, a string, true, false, null, a list, a name, a function call or '(')",
    );
  }

  private parseList(open: Token): Expression {
    this.position++;
    this.enter();
    const elements: Expression[] = [];
    const expectation = `',' or ']' to close the '[' at ${this.describe(open.offset)}`;
    let close = this.peek();
    if (!this.accept("]")) {
      do elements.push(this.parseOr());
      while (this.accept(","));
      close = this.expect("]", expectation);
    }
    this.depth--;
    return this.node({ kind: "list", elements, offset: open.offset, length: close.offset + 1 - open.offset });
  }

  private parseCall(name: Token): Expression {
    if (!isFunctionName(name.text)) {
      this.fail(`a function (${functionNames}) or a name without '('`, name);
    }
    const open = this.peek();
    this.position++;
    const parameters = functionParameters[name.text];
    const args: Expression[] = [];
    parameters.forEach((parameter, index) => {
      if (index > 0) this.expect(",", `',' (${name.text} takes ${parameters.length} arguments)`);
      if (parameter === "value") {
        args.push(this.parseOr());
        return;
      }
      const token = this.peek();
      if (token.type !== "string") this.fail(`the ${parameter} name as a quoted string`);
      this.position++;
      args.push(this.literal(token.value as string, token));
    });
    const close = this.expect(")", this.closeExpectation(name.text, parameters.length, open));
    return this.node({
      kind: "call",
      name: name.text,
      arguments: args,
      offset: name.offset,
      length: close.offset + 1 - name.offset,
    });
  }

  private closeExpectation(name: string, arity: number, open: Token): string {
    const count = arity === 1 ? "1 argument" : `${arity} arguments`;
    return `')' to close the '(' at ${this.describe(open.offset)} (${name} takes ${count})`;
  }

  private literal(value: LiteralExpression["value"], token: Token): LiteralExpression {
    return { kind: "literal", value, offset: token.offset, length: token.text.length };
  }

  private binary(operator: BinaryOperator, left: Expression, right: Expression): Expression {
    const length = right.offset + right.length - left.offset;
    return this.node({ kind: "binary", operator, left, right, offset: left.offset, length });
  }

  /** Records the height of a new node; a tree higher than `maxHeight` is a syntax error. */
  private node<T extends Expression>(node: T): T {
    let height = 1;
    for (const child of childrenOf(node)) height = Math.max(height, (this.heights.get(child) ?? 1) + 1);
    if (height > maxHeight) this.fail(`an expression at most ${maxHeight} operations deep`);
    this.heights.set(node, height);
    return node;
  }

  private enter(): void {
    if (++this.depth > maxDepth) this.fail(`at most ${maxDepth} levels of nesting`);
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

  private expect(symbol: string, expected: string): Token {
    const token = this.peek();
    if (!this.accept(symbol)) this.fail(expected);
    return token;
  }

  private fail(expected: string, token: Token = this.peek()): never {
    const found =
      token.type === "end"
        ? "the end of the expression"
        : token.type === "string"
          ? `the string ${token.text}`
          : `'${token.text}'`;
    throw this.error(`expected ${expected}, found ${found}`, token.offset);
  }

  private error(message: string, offset: number): MentorError {
    const source = this.options.source ? `${this.options.source}: ` : "";
    return new MentorError("MNT_ERR_EXPRESSION_SYNTAX", `${source}${message}`, this.locate(offset));
  }

  private describe(offset: number): string {
    const { line, column } = this.locate(offset);
    return this.text.includes("\n") ? `line ${line}, column ${column}` : `column ${column}`;
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
      namePattern.lastIndex = offset;
      const name = namePattern.exec(text);
      if (name) {
        tokens.push({ type: "name", text: name[0], offset });
        offset += name[0].length;
        continue;
      }
      numberPattern.lastIndex = offset;
      const number = numberPattern.exec(text);
      if (number) {
        const value = Number(number[0]);
        if (!Number.isFinite(value)) {
          throw this.error(`expected a finite number, found '${number[0]}'`, offset);
        }
        tokens.push({ type: "number", text: number[0], value, offset });
        offset += number[0].length;
        continue;
      }
      if (char === '"' || char === "'") {
        const token = this.readString(offset);
        tokens.push(token);
        offset += token.text.length;
        continue;
      }
      const symbol = symbols.find((candidate) => text.startsWith(candidate, offset));
      if (!symbol) {
        const hint = char === "=" ? "'=='" : char === "&" ? "'&&'" : char === "|" ? "'||'" : "an expression";
        throw this.error(`expected ${hint}, found '${char}'`, offset);
      }
      tokens.push({ type: "symbol", text: symbol, offset });
      offset += symbol.length;
    }
    tokens.push({ type: "end", text: "", offset: text.length });
    return tokens;
  }

  private readString(start: number): Token {
    const text = this.text;
    const quote = text[start] as string;
    let value = "";
    let offset = start + 1;
    for (;;) {
      const char = text[offset];
      if (char === undefined || char === "\n" || char === "\r") {
        const found = char === undefined ? "the end of the expression" : "the end of the line";
        throw this.error(`expected ${quote} to close the string that starts here, found ${found}`, start);
      }
      if (char === quote) break;
      if (char === "\\") {
        const next = text[offset + 1] ?? "";
        const simple = simpleEscapes[next];
        if (simple !== undefined) {
          value += simple;
          offset += 2;
          continue;
        }
        const hex = /^u[0-9A-Fa-f]{4}/.exec(text.slice(offset + 1, offset + 6));
        if (hex) {
          value += String.fromCharCode(Number.parseInt(hex[0].slice(1), 16));
          offset += 6;
          continue;
        }
        const found = next === "" ? "the end of the expression" : `'\\${text.slice(offset + 1, offset + 2)}'`;
        throw this.error(`expected an escape (\\' \\" \\\\ \\n \\t \\r \\uXXXX), found ${found}`, offset);
      }
      value += char;
      offset++;
    }
    return { type: "string", text: text.slice(start, offset + 1), value, offset: start };
  }
}
