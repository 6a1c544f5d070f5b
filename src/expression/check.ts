// Over 500 lines on purpose: the static checker is one type inference over the expression AST,
// a case per node kind (operators, methods, history functions, references and their fields); the
// cases must agree on what each type admits, and reading them side by side is how they are kept so.

import { MentorError, type SourceLocation } from "../errors/index.js";
import {
  type Expression,
  functionNames,
  functionParameters,
  isFunctionName,
  isMethodName,
  methodArity,
  type PathSegment,
  type ReferenceExpression,
  type Value,
} from "./ast.js";
import { valuesEqual } from "./evaluate.js";
import { formatExpression } from "./format.js";
import { lineAndColumn } from "./parser.js";

/** A declared type: a JSON type, `any`, or a list of allowed values. `integer` is a number. */
export type FieldType =
  | "string"
  | "number"
  | "integer"
  | "boolean"
  | "object"
  | "array"
  | "any"
  | { enum: Value[] };

/** What the policy declares at the place where an expression is used. */
export interface CheckEnvironment {
  /** The proposed call's arguments; undefined: `a` is not available here (e.g. a task predicate). */
  arguments?: Record<string, FieldType>;
  /** The outcome's fields; undefined: `o` is not available (an action proposition); "any": unknown JSON. */
  outcome?: Record<string, FieldType> | "any";
  /** Entity variables in scope. */
  variables: Record<string, FieldType>;
  /** Task calls and their fields. */
  task: Record<string, Record<string, FieldType>>;
  /**
   * Tools: their arguments, for `count` and `values`, and what they return, for the fields after
   * `last(…)`: declared fields (a text tool's `{label}`), or "any" (free JSON, not checked; also
   * when undefined).
   */
  tools: Record<
    string,
    { arguments: Record<string, FieldType>; outcome?: Record<string, FieldType> | "any" }
  >;
  /** Proposition names, for `held`. */
  propositions: string[];
}

/**
 * What kind of problem `checkExpression` found:
 * - `unknown-variable`, `unknown-field` (argument, outcome or task field), `unknown-task-call`,
 *   `unknown-tool`, `unknown-tool-argument`, `unknown-proposition`: a name the policy does not declare;
 * - `unavailable`: `a` or `o` where the environment does not provide it;
 * - `no-field`: a path continues into a value that has no fields (a string, number or boolean);
 * - `unknown-function`, `arity`, `non-literal-name`: a malformed call (only in trees built by code);
 * - `type-mismatch`: an operation on operands whose known types make it always false or null;
 * - `not-a-member`: an enum compared with a literal that is not one of its values.
 */
export type ProblemKind =
  | "unknown-variable"
  | "unknown-field"
  | "unknown-task-call"
  | "unknown-tool"
  | "unknown-tool-argument"
  | "unknown-proposition"
  | "unavailable"
  | "no-field"
  | "unknown-function"
  | "arity"
  | "non-literal-name"
  | "type-mismatch"
  | "not-a-member";

/** One problem found by `checkExpression`; `offset`/`length` is the offending text. */
export interface ExpressionProblem {
  kind: ProblemKind;
  message: string;
  offset: number;
  length: number;
}

/**
 * Checks an expression against the declarations and returns every problem, in text order:
 * unknown names (variables, argument/outcome/task fields, task calls, tools, tool arguments,
 * propositions), `a`/`o` where they are not available, paths into values that have no fields,
 * malformed function and method calls, and operations whose operand types are known and wrong
 * (comparing a string with a number, ordering booleans, a literal that is not one of an enum's
 * values, arithmetic on strings).
 *
 * Only the first segment below `a.`, `o.`, a variable or `task.<call>.` is checked against the
 * declaration; deeper segments are allowed into `object`, `array` and `any` fields.
 */
export function checkExpression(expression: Expression, environment: CheckEnvironment): ExpressionProblem[] {
  const checker = new Checker(environment);
  checker.infer(expression);
  return checker.problems.sort((left, right) => left.offset - right.offset || right.length - left.length);
}

export interface CheckOptions {
  /** The expression's text, to give the first problem's line and column. */
  text?: string;
  /** Named at the start of the error message (the policy file and rule id). */
  source?: string;
}

/**
 * Throws `MentorError` with code `MNT_ERR_EXPRESSION_TYPE` listing every problem (the location is
 * the first problem's) if `checkExpression` finds any.
 */
export function assertExpressionChecks(
  expression: Expression,
  environment: CheckEnvironment,
  options: CheckOptions = {},
): void {
  const problems = checkExpression(expression, environment);
  const first = problems[0];
  if (!first) return;
  let location: SourceLocation | undefined;
  if (options.text !== undefined) location = lineAndColumn(options.text, first.offset);
  const source = options.source ? `${options.source}: ` : "";
  const message = problems.map((problem) => problem.message).join("; ");
  throw new MentorError("MNT_ERR_EXPRESSION_TYPE", `${source}${message}`, location);
}

/** What the checker knows statically about a value: its JSON type, unless it is null. */
interface StaticType {
  base: "string" | "number" | "boolean" | "null" | "list" | "object" | "unknown";
  /** For enum fields: the allowed values, and the text naming the field. */
  members?: Value[];
  name?: string;
  /** Whether the value is surely not null (a literal, a comparison, `count()`…); fields may be absent. */
  neverNull?: boolean;
  /** For an object whose fields are declared (`last` of a text tool): the fields, and what it is. */
  fields?: { declared: Record<string, FieldType>; what: string };
}

const unknownType: StaticType = { base: "unknown" };
/** The list functions that give false, not null, for what is not a list. */
const booleanFunctions: ReadonlySet<string> = new Set(["subset", "submultiset", "same_group"]);

/** The types a function's value argument may have, and the start of the error when it has another. */
function valueParameter(name: string, index: number): { takes: string[]; mismatch: string } {
  if (name === "len") return { takes: ["string", "list"], mismatch: "len() measures strings and lists," };
  if (name === "flat") return { takes: ["list", "object"], mismatch: "flat() takes lists and objects," };
  if ((name === "named" || name === "named_changes") && index === 0)
    return { takes: ["string"], mismatch: `${name}() reads a text first,` };
  return { takes: ["list"], mismatch: `${name}() takes lists,` };
}

const article: Record<StaticType["base"], string> = {
  string: "a string",
  number: "a number",
  boolean: "a boolean",
  null: "null",
  list: "a list",
  object: "an object",
  unknown: "a value",
};

function fromFieldType(type: FieldType): StaticType {
  switch (type) {
    case "string":
    case "boolean":
    case "object":
      return { base: type };
    case "number":
    case "integer":
      return { base: "number" };
    case "array":
      return { base: "list" };
    case "any":
      return unknownType;
  }
  const members = type.enum;
  const bases = new Set(members.map((member) => baseOf(member)));
  const [only] = bases;
  return { base: bases.size === 1 && only !== undefined ? only : "unknown", members };
}

function baseOf(value: Value): StaticType["base"] {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return "object";
  return typeof value as "string" | "number" | "boolean";
}

function names(record: object): string {
  const keys = Object.keys(record);
  return keys.length === 0 ? "none" : keys.join(", ");
}

function formatValue(value: Value): string {
  return typeof value === "string" ? `'${value}'` : JSON.stringify(value);
}

class Checker {
  readonly problems: ExpressionProblem[] = [];

  constructor(private readonly environment: CheckEnvironment) {}

  infer(expression: Expression): StaticType {
    switch (expression.kind) {
      case "literal":
        return { base: baseOf(expression.value), neverNull: expression.value !== null };
      case "list":
        for (const element of expression.elements) this.infer(element);
        return { base: "list", neverNull: true };
      case "reference":
        return this.reference(expression);
      case "member": {
        const object = this.infer(expression.object);
        if (object.fields !== undefined) return this.declaredField(object.fields, expression);
        if (["string", "number", "boolean"].includes(object.base)) {
          this.report(
            "no-field",
            `${article[object.base]} has no field ${formatKey(expression.key)}`,
            expression,
          );
        }
        return unknownType;
      }
      case "unary": {
        const operand = this.infer(expression.operand);
        if (expression.operator === "!") return { base: "boolean", neverNull: true };
        this.expectNumber(operand, expression, "unary '-'");
        return { base: "number" };
      }
      case "binary":
        return this.binary(expression);
      case "method":
        return this.method(expression);
      case "call":
        return this.call(expression);
    }
  }

  private binary(expression: Expression & { kind: "binary" }): StaticType {
    const left = this.infer(expression.left);
    const right = this.infer(expression.right);
    const operator = expression.operator;
    switch (operator) {
      case "&&":
      case "||":
        return { base: "boolean", neverNull: true };
      case "==":
      case "!=":
        if (!this.checkMembers(left, expression.right) && !this.checkMembers(right, expression.left)) {
          if (
            isKnown(left) &&
            isKnown(right) &&
            left.base !== right.base &&
            (left.neverNull || right.neverNull)
          ) {
            this.report(
              "type-mismatch",
              `'${operator}' compares ${article[left.base]} with ${article[right.base]}; they are never equal`,
              expression,
            );
          }
        }
        return { base: "boolean", neverNull: true };
      case "<":
      case "<=":
      case ">":
      case ">=": {
        const ordered = (type: StaticType) => type.base === "string" || type.base === "number";
        const wrong = [left, right].find((type) => type.base !== "unknown" && !ordered(type));
        if (wrong) {
          this.report(
            "type-mismatch",
            `'${operator}' orders numbers or strings, not ${article[wrong.base]}; it is always false`,
            expression,
          );
        } else if (ordered(left) && ordered(right) && left.base !== right.base) {
          this.report(
            "type-mismatch",
            `'${operator}' compares ${article[left.base]} with ${article[right.base]}; it is always false`,
            expression,
          );
        }
        return { base: "boolean", neverNull: true };
      }
      case "in":
        if (expression.right.kind === "list") {
          for (const element of expression.right.elements) {
            if (this.checkMembers(left, element) || element.kind !== "literal") continue;
            const type = { base: baseOf(element.value) };
            if (isKnown(left) && isKnown(type) && type.base !== left.base) {
              this.report(
                "type-mismatch",
                `${article[type.base]} is never equal to ${article[left.base]}; this element never matches`,
                element,
              );
            }
          }
        } else if (right.base === "string") {
          if (isKnown(left) && left.base !== "string") {
            this.report(
              "type-mismatch",
              `'in' looks for a string in a string, not ${article[left.base]}; it is always false`,
              expression,
            );
          }
        } else if (right.base !== "list" && right.base !== "unknown") {
          this.report(
            "type-mismatch",
            `'in' needs a list or a string on the right, not ${article[right.base]}; it is always false`,
            expression,
          );
        }
        return { base: "boolean", neverNull: true };
      case "+":
        if (left.base === "string" && right.base === "string")
          return { base: "string", neverNull: left.neverNull && right.neverNull };
        if (left.base === "number" && right.base === "number") return { base: "number" };
        if ((isKnown(left) || left.base === "null") && (isKnown(right) || right.base === "null")) {
          this.report(
            "type-mismatch",
            `'+' adds two numbers or joins two strings, not ${article[left.base]} and ${article[right.base]}; it gives null`,
            expression,
          );
        }
        return unknownType;
      default:
        this.expectNumber(left.base === "number" ? right : left, expression, `'${operator}'`);
        return { base: "number" };
    }
  }

  /**
   * If `type` is an enum and `other` a literal, reports a literal that is not a member.
   * Returns whether the comparison was settled this way.
   */
  private checkMembers(type: StaticType, other: Expression): boolean {
    if (type.members === undefined || other.kind !== "literal" || other.value === null) return false;
    const value = other.value;
    if (!type.members.some((member) => valuesEqual(member, value))) {
      const members = type.members.map(formatValue).join(", ");
      this.report(
        "not-a-member",
        `${formatValue(value)} is not one of the values of ${type.name ?? "the field"}: ${members}`,
        other,
      );
    }
    return true;
  }

  private expectNumber(type: StaticType, expression: Expression, operator: string): void {
    if (type.base !== "number" && type.base !== "unknown") {
      this.report(
        "type-mismatch",
        `${operator} needs numbers, not ${article[type.base]}; it gives null`,
        expression,
      );
    }
  }

  private method(expression: Expression & { kind: "method" }): StaticType {
    const target = this.infer(expression.target);
    const args = expression.arguments.map((argument) => this.infer(argument));
    if (!isMethodName(expression.name)) {
      this.report("unknown-function", `unknown method '${String(expression.name)}'`, expression);
      return unknownType;
    }
    const arity = methodArity[expression.name];
    if (args.length !== arity) {
      this.report("arity", `${expression.name} takes ${plural(arity)}, not ${args.length}`, expression);
    }
    if (target.base !== "string" && target.base !== "unknown") {
      this.report(
        "type-mismatch",
        `${expression.name}() works on strings, not ${article[target.base]}; it gives null`,
        expression,
      );
    }
    args.forEach((argument, index) => {
      if (argument.base !== "string" && argument.base !== "unknown") {
        const node = expression.arguments[index] as Expression;
        this.report(
          "type-mismatch",
          `${expression.name}() needs a string argument, not ${article[argument.base]}`,
          node,
        );
      }
    });
    const neverNull =
      target.base === "string" &&
      target.neverNull === true &&
      args.every((argument) => argument.base === "string" && argument.neverNull);
    return {
      base: expression.name === "lower" || expression.name === "upper" ? "string" : "boolean",
      neverNull,
    };
  }

  private call(expression: Expression & { kind: "call" }): StaticType {
    const name = expression.name as string;
    if (!isFunctionName(name)) {
      for (const argument of expression.arguments) this.infer(argument);
      this.report(
        "unknown-function",
        `unknown function '${name}'; the functions are ${functionNames}`,
        expression,
      );
      return unknownType;
    }
    const parameters = functionParameters[name];
    if (expression.arguments.length !== parameters.length) {
      this.report(
        "arity",
        `${name} takes ${plural(parameters.length)}, not ${expression.arguments.length}`,
        expression,
      );
    }
    let tool: string | undefined;
    /** Whether the first argument is surely of a type the function takes (then it gives no null). */
    let measured = false;
    expression.arguments.forEach((argument, index) => {
      const parameter = parameters[index];
      if (parameter === undefined || parameter === "value") {
        const type = this.infer(argument);
        const { takes, mismatch } = valueParameter(name, index);
        if (index === 0) measured = takes.includes(type.base) && type.neverNull === true;
        if (parameter === "value" && !["unknown", ...takes].includes(type.base)) {
          this.report(
            "type-mismatch",
            `${mismatch} not ${article[type.base]}; it gives ${booleanFunctions.has(name) ? "false" : "null"}`,
            argument,
          );
        }
        return;
      }
      if (parameter === "field") {
        if (argument.kind !== "literal" || typeof argument.value !== "string") {
          this.infer(argument);
          this.report("non-literal-name", `${name}() needs the field name as a quoted string`, argument);
        }
        return;
      }
      if (argument.kind !== "literal" || typeof argument.value !== "string") {
        this.infer(argument);
        this.report("non-literal-name", `${name}() needs the ${parameter} name as a quoted string`, argument);
        return;
      }
      const value = argument.value;
      const tools = this.environment.tools;
      if (parameter === "tool") {
        if (Object.hasOwn(tools, value)) tool = value;
        else this.report("unknown-tool", `unknown tool '${value}'; the tools are: ${names(tools)}`, argument);
      } else if (parameter === "argument") {
        const declared = tool === undefined ? undefined : tools[tool]?.arguments;
        if (declared && !Object.hasOwn(declared, value)) {
          this.report(
            "unknown-tool-argument",
            `unknown argument '${value}' of tool '${tool}'; its arguments are: ${names(declared)}`,
            argument,
          );
        }
      } else if (!this.environment.propositions.includes(value)) {
        const known = this.environment.propositions.join(", ") || "none";
        this.report(
          "unknown-proposition",
          `unknown proposition '${value}'; the propositions are: ${known}`,
          argument,
        );
      }
    });
    switch (name) {
      case "len":
        return { base: "number", neverNull: measured };
      case "subset":
      case "submultiset":
      case "same_group":
        return { base: "boolean", neverNull: true };
      case "pluck":
      case "flat":
        return { base: "list", neverNull: measured };
      case "where":
      case "except":
      case "named":
      case "named_changes":
        return { base: "list", neverNull: false };
      case "count":
        return { base: "number", neverNull: true };
      case "held":
        return { base: "boolean", neverNull: true };
      case "values":
      case "outcomes":
        return { base: "list", neverNull: true };
      case "last": {
        const outcome = tool === undefined ? undefined : this.environment.tools[tool]?.outcome;
        if (outcome === undefined || outcome === "any") return unknownType;
        return {
          base: "object",
          fields: { declared: outcome, what: `${formatExpression(expression)} (what ${tool} returned)` },
        };
      }
    }
  }

  /** A field of an object whose fields are declared (`last('t').label`), and its type. */
  private declaredField(
    fields: NonNullable<StaticType["fields"]>,
    expression: Expression & { kind: "member" },
  ): StaticType {
    const key = expression.key;
    if (typeof key !== "string" || !Object.hasOwn(fields.declared, key)) {
      this.report(
        "unknown-field",
        `unknown field ${formatKey(key)} of ${fields.what}; its fields are: ${names(fields.declared)}`,
        expression,
      );
      return unknownType;
    }
    return { ...fromFieldType(fields.declared[key] as FieldType), name: formatExpression(expression) };
  }

  private reference(expression: ReferenceExpression): StaticType {
    const { root, path } = expression;
    const text = formatExpression(expression);
    switch (root) {
      case "arguments": {
        const declared = this.environment.arguments;
        if (declared === undefined) {
          this.report("unavailable", `'a' (the call's arguments) is not available here`, expression);
          return unknownType;
        }
        return this.field(declared, path, 0, "argument", "the call's arguments are", expression, text);
      }
      case "outcome": {
        const declared = this.environment.outcome;
        if (declared === undefined) {
          this.report("unavailable", `'o' (the call's outcome) is not available here`, expression);
          return unknownType;
        }
        if (declared === "any") return unknownType;
        return this.field(declared, path, 0, "outcome field", "the outcome's fields are", expression, text);
      }
      case "variable":
        return this.field(
          this.environment.variables,
          path,
          0,
          "variable",
          "the variables are",
          expression,
          text,
        );
      case "task": {
        const [call] = path;
        const calls = this.environment.task;
        if (call === undefined) {
          this.report(
            "unknown-task-call",
            `'task' needs a task call and field: task.<call>.<field>`,
            expression,
          );
          return unknownType;
        }
        if (typeof call !== "string" || !Object.hasOwn(calls, call)) {
          this.report(
            "unknown-task-call",
            `unknown task call ${formatKey(call)}; the task calls are: ${names(calls)}`,
            expression,
          );
          return unknownType;
        }
        const fields = calls[call] as Record<string, FieldType>;
        if (path.length === 1) return { base: "object" };
        return this.field(
          fields,
          path,
          1,
          "field",
          `the fields of task call '${call}' are`,
          expression,
          text,
        );
      }
    }
  }

  /** Checks `path[index]` against `declared` and deeper segments against the field's type. */
  private field(
    declared: Record<string, FieldType>,
    path: readonly PathSegment[],
    index: number,
    what: string,
    listing: string,
    expression: ReferenceExpression,
    text: string,
  ): StaticType {
    const key = path[index];
    if (key === undefined) return { base: "object" };
    if (typeof key !== "string" || !Object.hasOwn(declared, key)) {
      this.report(
        what === "variable" ? "unknown-variable" : "unknown-field",
        `unknown ${what} ${formatKey(key)}; ${listing}: ${names(declared)}`,
        expression,
      );
      return unknownType;
    }
    const type = fromFieldType(declared[key] as FieldType);
    if (index === path.length - 1) return { ...type, name: text };
    if (
      type.base === "object" ||
      type.base === "list" ||
      (type.base === "unknown" && type.members === undefined)
    ) {
      return unknownType;
    }
    const next = path[index + 1] as PathSegment;
    this.report(
      "no-field",
      `${formatKey(key)} is ${article[type.base]}; it has no field ${formatKey(next)}`,
      expression,
    );
    return unknownType;
  }

  private report(kind: ProblemKind, message: string, node: Expression): void {
    this.problems.push({ kind, message, offset: node.offset, length: node.length });
  }
}

function isKnown(type: StaticType): boolean {
  return type.base !== "unknown" && type.base !== "null";
}

function formatKey(key: PathSegment): string {
  return typeof key === "number" ? `[${key}]` : `'${key}'`;
}

function plural(count: number): string {
  return count === 1 ? "1 argument" : `${count} arguments`;
}
