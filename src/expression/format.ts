import type { BinaryOperator, Expression, PathSegment } from "./ast.js";

/**
 * Prints an expression in the syntax `parseExpression` reads, with the fewest parentheses
 * that keep its structure: `parseExpression(formatExpression(e))` is structurally equal to `e`
 * for every expression the parser can produce.
 */
export function formatExpression(expression: Expression): string {
  switch (expression.kind) {
    case "literal":
      return formatLiteral(expression.value);
    case "list":
      return `[${expression.elements.map(formatExpression).join(", ")}]`;
    case "reference": {
      const [head, ...rest] = expression.path;
      switch (expression.root) {
        case "arguments":
          return `a${formatPath(expression.path)}`;
        case "outcome":
          return `o${formatPath(expression.path)}`;
        case "task":
          return `task${formatPath(expression.path)}`;
        case "variable":
          return `${String(head)}${formatPath(rest)}`;
      }
      break;
    }
    case "member":
      return `${formatTarget(expression.object)}${formatSegment(expression.key)}`;
    case "method":
      return `${formatTarget(expression.target)}.${expression.name}(${expression.arguments.map(formatExpression).join(", ")})`;
    case "call":
      return `${expression.name}(${expression.arguments.map(formatExpression).join(", ")})`;
    case "unary": {
      const operand = expression.operand;
      // `-5` would read back as the literal -5, so the minus of a literal number keeps its parentheses.
      const literalNumber = operand.kind === "literal" && typeof operand.value === "number";
      const wrap =
        precedenceOf(operand) < unaryPrecedence ||
        (expression.operator === "-" && literalNumber && !isNegative(operand.value as number));
      return `${expression.operator}${wrap ? `(${formatExpression(operand)})` : formatExpression(operand)}`;
    }
    case "binary": {
      const level = binaryPrecedence[expression.operator];
      const comparison = level === comparisonPrecedence;
      const left = precedenceOf(expression.left);
      const right = precedenceOf(expression.right);
      const leftText = parenthesize(expression.left, left < level || (comparison && left === level));
      const rightText = parenthesize(expression.right, right <= level);
      return `${leftText} ${expression.operator} ${rightText}`;
    }
  }
}

const comparisonPrecedence = 3;
const unaryPrecedence = 6;
const postfixPrecedence = 7;

const binaryPrecedence: Record<BinaryOperator, number> = {
  "||": 1,
  "&&": 2,
  "==": comparisonPrecedence,
  "!=": comparisonPrecedence,
  "<": comparisonPrecedence,
  "<=": comparisonPrecedence,
  ">": comparisonPrecedence,
  ">=": comparisonPrecedence,
  in: comparisonPrecedence,
  "+": 4,
  "-": 4,
  "*": 5,
  "/": 5,
  "%": 5,
};

function precedenceOf(expression: Expression): number {
  switch (expression.kind) {
    case "binary":
      return binaryPrecedence[expression.operator];
    case "unary":
      return unaryPrecedence;
    case "literal":
      // A negative number prints with a leading minus, like a unary operator.
      return typeof expression.value === "number" && isNegative(expression.value)
        ? unaryPrecedence
        : postfixPrecedence;
    default:
      return postfixPrecedence;
  }
}

function isNegative(value: number): boolean {
  return value < 0 || Object.is(value, -0);
}

function parenthesize(expression: Expression, wrap: boolean): string {
  const text = formatExpression(expression);
  return wrap ? `(${text})` : text;
}

/** The expression before `.field`, `[index]` or `.method(…)`. */
function formatTarget(expression: Expression): string {
  return parenthesize(expression, precedenceOf(expression) < postfixPrecedence);
}

function formatLiteral(value: null | boolean | number | string): string {
  if (typeof value === "string") return formatString(value);
  if (typeof value === "number" && Object.is(value, -0)) return "-0";
  return String(value);
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

function formatPath(path: readonly PathSegment[]): string {
  return path.map(formatSegment).join("");
}

function formatSegment(segment: PathSegment): string {
  if (typeof segment === "number") return `[${segment}]`;
  return identifier.test(segment) ? `.${segment}` : `[${formatString(segment)}]`;
}

const escapes: Record<string, string> = { "\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r" };

/** A single-quoted string; control characters are escaped. */
export function formatString(value: string): string {
  let text = "'";
  for (const char of value) {
    const escaped = escapes[char];
    if (escaped !== undefined) text += escaped;
    else if (char < " " || char === "\u007f")
      text += `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
    else text += char;
  }
  return `${text}'`;
}
