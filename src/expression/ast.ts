/**
 * The expression AST: a small discriminated union on `kind`. Every node carries `offset` and
 * `length`, its span in the parsed text (UTF-16 code units, as JavaScript string indexes), so a
 * caller can map a node back to its place in a policy file. Nodes are plain data, never mutated.
 *
 * Canonical forms the parser always produces (and `formatExpression` relies on):
 * - a chain of `.field` / `[index]` after `a`, `o`, `task` or a variable is one `reference`
 *   node with a path; `member` nodes only hang off other expressions (`last('t').x`);
 * - a minus sign written directly before a number is folded into a negative number literal;
 * - history functions take string literals for tool, proposition and argument names.
 */

/** A JSON value: what arguments, outcomes, variables and results are made of. */
export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };

/** A step along a path: a field name (`.name`, `['name']`) or a list index (`[0]`). */
export type PathSegment = string | number;

/** Where a reference starts: `a`, `o`, an entity variable, or `task`. */
export type ReferenceRoot = "arguments" | "outcome" | "variable" | "task";

export type UnaryOperator = "!" | "-";
export type LogicalOperator = "&&" | "||";
export type ComparisonOperator = "==" | "!=" | "<" | "<=" | ">" | ">=" | "in";
export type ArithmeticOperator = "+" | "-" | "*" | "/" | "%";
export type BinaryOperator = LogicalOperator | ComparisonOperator | ArithmeticOperator;

export type MethodName = "contains" | "startsWith" | "endsWith" | "lower" | "upper";
export type HistoryFunctionName = "last" | "outcomes" | "held" | "count" | "values";
/**
 * Functions on values: `len`, the list functions `subset`, `submultiset`, `same_group`,
 * `except`, `pluck`, `where` and `flat`, and what a text names: `named`, `named_changes`.
 */
export type ValueFunctionName =
  | "len"
  | "subset"
  | "submultiset"
  | "same_group"
  | "except"
  | "pluck"
  | "where"
  | "flat"
  | "named"
  | "named_changes";
export type FunctionName = ValueFunctionName | HistoryFunctionName;

export interface Span {
  /** Index of the node's first character in the parsed text. */
  offset: number;
  /** Number of characters the node spans. */
  length: number;
}

/** `1`, `-2.5`, `'text'`, `true`, `false`, `null`. Numbers are finite. */
export interface LiteralExpression extends Span {
  kind: "literal";
  value: null | boolean | number | string;
}

/** `[e1, e2, …]`. */
export interface ListExpression extends Span {
  kind: "list";
  elements: Expression[];
}

/**
 * A path from a root. For `arguments` and `outcome` the path starts below `a` / `o` (it may be
 * empty: `a` alone is the whole argument object). For `variable` the first segment is the
 * variable's name (`route.origin` → `["route", "origin"]`). For `task` the first segment is the
 * task call and the second its field (`task.request_travel.urgent`).
 */
export interface ReferenceExpression extends Span {
  kind: "reference";
  root: ReferenceRoot;
  path: PathSegment[];
}

/** `.field` or `[index]` applied to an expression that is not a reference (`last('t').amount`). */
export interface MemberExpression extends Span {
  kind: "member";
  object: Expression;
  key: PathSegment;
}

export interface UnaryExpression extends Span {
  kind: "unary";
  operator: UnaryOperator;
  operand: Expression;
}

export interface BinaryExpression extends Span {
  kind: "binary";
  operator: BinaryOperator;
  left: Expression;
  right: Expression;
}

/** `target.contains(s)`, `target.lower()`… */
export interface MethodExpression extends Span {
  kind: "method";
  name: MethodName;
  target: Expression;
  arguments: Expression[];
}

/**
 * A function on values (`len(x)`, `subset(xs, ys)`, `submultiset(xs, ys)`, `same_group(xs, ys,
 * groups)`, `except(xs, ys)`, `pluck(xs, 'field')`, `where(xs, 'field', ys)`, `flat(xs)`,
 * `named(text, names)`, `named_changes(text, items, candidates, 'key', 'field')`) or a history
 * function.
 * The parser only builds the names they take as string literals (`last('get_order')`,
 * `values('check_seat', 'seat')`, the field of `pluck`).
 */
export interface CallExpression extends Span {
  kind: "call";
  name: FunctionName;
  arguments: Expression[];
}

export type Expression =
  | LiteralExpression
  | ListExpression
  | ReferenceExpression
  | MemberExpression
  | UnaryExpression
  | BinaryExpression
  | MethodExpression
  | CallExpression;

export const methodArity: Readonly<Record<MethodName, number>> = {
  contains: 1,
  startsWith: 1,
  endsWith: 1,
  lower: 0,
  upper: 0,
};

/** What each parameter of a function is: any expression, or a string literal naming something. */
export type ParameterKind = "value" | "tool" | "proposition" | "argument" | "field";

export const functionParameters: Readonly<Record<FunctionName, readonly ParameterKind[]>> = {
  len: ["value"],
  subset: ["value", "value"],
  submultiset: ["value", "value"],
  same_group: ["value", "value", "value"],
  except: ["value", "value"],
  pluck: ["value", "field"],
  where: ["value", "field", "value"],
  flat: ["value"],
  named: ["value", "value"],
  named_changes: ["value", "value", "value", "field", "field"],
  last: ["tool"],
  outcomes: ["tool"],
  held: ["proposition"],
  count: ["tool"],
  values: ["tool", "argument"],
};

export function isMethodName(name: string): name is MethodName {
  return Object.hasOwn(methodArity, name);
}

/** The function names, as error messages list them. */
export const functionNames = Object.keys(functionParameters).join(", ");

export function isFunctionName(name: string): name is FunctionName {
  return Object.hasOwn(functionParameters, name);
}

const historyFunctions: ReadonlySet<string> = new Set<HistoryFunctionName>([
  "last",
  "outcomes",
  "held",
  "count",
  "values",
]);

export function isHistoryFunctionName(name: string): name is HistoryFunctionName {
  return historyFunctions.has(name);
}

/** A copy of the expression with every `offset` and `length` removed, for comparing structure. */
export function withoutSpans(expression: Expression): unknown {
  switch (expression.kind) {
    case "literal":
      return { kind: "literal", value: expression.value };
    case "list":
      return { kind: "list", elements: expression.elements.map(withoutSpans) };
    case "reference":
      return { kind: "reference", root: expression.root, path: [...expression.path] };
    case "member":
      return { kind: "member", object: withoutSpans(expression.object), key: expression.key };
    case "unary":
      return { kind: "unary", operator: expression.operator, operand: withoutSpans(expression.operand) };
    case "binary":
      return {
        kind: "binary",
        operator: expression.operator,
        left: withoutSpans(expression.left),
        right: withoutSpans(expression.right),
      };
    case "method":
      return {
        kind: "method",
        name: expression.name,
        target: withoutSpans(expression.target),
        arguments: expression.arguments.map(withoutSpans),
      };
    case "call":
      return { kind: "call", name: expression.name, arguments: expression.arguments.map(withoutSpans) };
  }
}

/** Whether two expressions have the same structure, ignoring where they were written. */
export function sameExpression(left: Expression, right: Expression): boolean {
  return sameStructure(withoutSpans(left), withoutSpans(right));
}

function sameStructure(left: unknown, right: unknown): boolean {
  if (Object.is(left, right)) return true;
  if (typeof left !== "object" || typeof right !== "object" || left === null || right === null) return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  const leftKeys = Object.keys(left);
  const rightKeys = Object.keys(right);
  if (leftKeys.length !== rightKeys.length) return false;
  const leftRecord = left as Record<string, unknown>;
  const rightRecord = right as Record<string, unknown>;
  return leftKeys.every(
    (key) => Object.hasOwn(right, key) && sameStructure(leftRecord[key], rightRecord[key]),
  );
}

/** The direct subexpressions of a node, left to right. */
export function childrenOf(expression: Expression): Expression[] {
  switch (expression.kind) {
    case "literal":
    case "reference":
      return [];
    case "list":
      return expression.elements;
    case "member":
      return [expression.object];
    case "unary":
      return [expression.operand];
    case "binary":
      return [expression.left, expression.right];
    case "method":
      return [expression.target, ...expression.arguments];
    case "call":
      return expression.arguments;
  }
}

/** Visits every node, parents before children, left to right. */
export function forEachNode(expression: Expression, visit: (node: Expression) => void): void {
  visit(expression);
  for (const child of childrenOf(expression)) forEachNode(child, visit);
}
