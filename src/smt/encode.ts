/**
 * Encoding of argument constraints into Z3 for one tool call, matching `evaluateExpression`.
 *
 * - Every argument the solver may choose is an *argument variable*: a presence flag (absent =
 *   null) and a value of the sort its declared type gives (string → String, integer → Int,
 *   number → Real, boolean → Bool, an enum → the sort of its members, restricted to them).
 * - Every subexpression that reads no argument variable is a constant: it is evaluated with
 *   `evaluateExpression` before encoding (task fields, entity variables, history results,
 *   arguments the solver may not change).
 * - Every other node becomes a symbolic value: a static type, a Z3 "is null" flag and a Z3
 *   value, so null propagates exactly as in the evaluator (`null + 1` is null, `null < 1` is
 *   false, `null == null` is true, `!null` is true).
 * - What cannot be encoded faithfully throws `Unsupported` (the caller falls back): `a` as a
 *   whole, arguments of type object/array/any, lists other than the right side of `in`,
 *   `lower()`/`upper()`, `%`, a product of two non-constants, division by a non-constant,
 *   strings with lone surrogates or code points above U+2FFFF, enums mixing kinds of values.
 * - Known difference, caught by verifying every repair with the evaluator: Z3 reals are exact
 *   rationals and its integers unbounded, while JavaScript numbers are doubles (rounding,
 *   overflow to a non-finite result, which the evaluator turns into null).
 */
import type { Arith, Bool, Context, Expr, Seq } from "z3-solver";
import {
  type Expression,
  evaluateExpression,
  type FieldType,
  forEachNode,
  type Scope,
  type Value,
  valuesEqual,
} from "../expression/index.js";

type Z3 = Context<"main">;
type ZBool = Bool<"main">;
type ZArith = Arith<"main">;
type ZSeq = Seq<"main">;

/** Something the encoding does not model faithfully; the message says what. */
export class Unsupported extends Error {}

export type VariableSort = "bool" | "int" | "real" | "string";

/** An argument the solver chooses. */
export interface ArgumentVariable {
  name: string;
  sort: VariableSort;
  present: ZBool;
  value: Expr<"main">;
  /** Enum members, if the declared type is an enum. */
  members: Value[] | undefined;
}

type Symbolic =
  | { type: "constant"; value: Value }
  | { type: "bool"; isNull: ZBool; value: ZBool }
  | { type: "int" | "real"; isNull: ZBool; value: ZArith }
  | { type: "string"; isNull: ZBool; value: ZSeq };

/** A scalar constant or a symbolic value, ready to combine. */
type Operand = Exclude<Symbolic, { type: "constant" }> | { type: "null" } | { type: "other"; value: Value };

/** The sort and members an argument of this declared type gets; throws `Unsupported` for object/array/any. */
export function sortOf(name: string, type: FieldType): { sort: VariableSort; members: Value[] | undefined } {
  if (typeof type === "object") {
    const members = type.enum;
    if (members.length > 0 && members.every((member) => typeof member === "string")) {
      members.forEach(checkEncodableString);
      return { sort: "string", members };
    }
    if (members.length > 0 && members.every((member) => Number.isSafeInteger(member))) {
      return { sort: "int", members };
    }
    if (members.length > 0 && members.every((member) => typeof member === "number")) {
      return { sort: "real", members };
    }
    if (members.length > 0 && members.every((member) => typeof member === "boolean")) {
      return { sort: "bool", members };
    }
    throw new Unsupported(
      `argument '${name}': an enum must have members of one kind (strings, numbers or booleans)`,
    );
  }
  switch (type) {
    case "string":
      return { sort: "string", members: undefined };
    case "integer":
      return { sort: "int", members: undefined };
    case "number":
      return { sort: "real", members: undefined };
    case "boolean":
      return { sort: "bool", members: undefined };
  }
  throw new Unsupported(`argument '${name}' has type ${type}, which the solver does not model`);
}

/** Whether a JSON value is a non-null value of the sort (and a member, if there are members). */
export function fitsSort(value: Value, sort: VariableSort, members: Value[] | undefined): boolean {
  let fits: boolean;
  switch (sort) {
    case "bool":
      fits = typeof value === "boolean";
      break;
    case "int":
      fits = Number.isSafeInteger(value);
      break;
    case "real":
      fits = typeof value === "number" && Number.isFinite(value);
      break;
    case "string":
      fits = typeof value === "string" && encodableString(value);
      break;
  }
  return fits && (members === undefined || members.some((member) => valuesEqual(member, value)));
}

/** The names of the arguments `a.<name>` the expressions read (first path segment). */
export function argumentsRead(expressions: readonly Expression[]): Set<string> {
  const names = new Set<string>();
  for (const expression of expressions) {
    forEachNode(expression, (node) => {
      if (node.kind === "reference" && node.root === "arguments") {
        const first = node.path[0];
        if (typeof first === "string") names.add(first);
      }
    });
  }
  return names;
}

export class Encoder {
  readonly #z3: Z3;
  readonly #variables: ReadonlyMap<string, ArgumentVariable>;
  readonly #scope: Scope;

  /** `scope.arguments` holds the arguments that are constants; `variables` the ones the solver chooses. */
  constructor(z3: Z3, variables: ReadonlyMap<string, ArgumentVariable>, scope: Scope) {
    this.#z3 = z3;
    this.#variables = variables;
    this.#scope = scope;
  }

  /** The Z3 formula that is true iff the expression evaluates to exactly `true`. */
  holds(expression: Expression): ZBool {
    return this.#isTrue(this.#encode(expression));
  }

  /** The constraints a variable carries by itself: enum membership, presence if required. */
  domain(variable: ArgumentVariable, required: boolean): ZBool {
    const z3 = this.#z3;
    const parts: ZBool[] = [];
    if (required) parts.push(variable.present);
    if (variable.members !== undefined) {
      const member = z3.Or(...variable.members.map((value) => this.equalsValue(variable, value)));
      parts.push(z3.Implies(variable.present, member));
    }
    return z3.And(...parts);
  }

  /** `variable == value` on the value alone (the caller handles presence); false if the value does not fit. */
  equalsValue(variable: ArgumentVariable, value: Value): ZBool {
    const z3 = this.#z3;
    if (!fitsSort(value, variable.sort, undefined)) return z3.Bool.val(false);
    switch (variable.sort) {
      case "bool":
        return (variable.value as ZBool).eq(z3.Bool.val(value as boolean));
      case "int":
        return (variable.value as ZArith).eq(z3.Int.val(value as number));
      case "real":
        return (variable.value as ZArith).eq(realValue(z3, value as number));
      case "string":
        return (variable.value as ZSeq).eq(stringValue(z3, value as string));
    }
  }

  #dependsOnVariables(expression: Expression): boolean {
    let depends = false;
    forEachNode(expression, (node) => {
      if (node.kind !== "reference" || node.root !== "arguments") return;
      const first = node.path[0];
      if (first === undefined) {
        if (this.#variables.size > 0)
          throw new Unsupported("`a` as a whole cannot be encoded; read its fields");
      } else if (typeof first === "string" && this.#variables.has(first)) {
        depends = true;
      }
    });
    return depends;
  }

  #encode(expression: Expression): Symbolic {
    const z3 = this.#z3;
    if (!this.#dependsOnVariables(expression)) {
      return { type: "constant", value: evaluateExpression(expression, this.#scope) };
    }
    switch (expression.kind) {
      case "literal":
        return { type: "constant", value: expression.value };
      case "reference": {
        const variable = this.#variables.get(expression.path[0] as string) as ArgumentVariable;
        // A field or index of a string, number or boolean is null.
        if (expression.path.length > 1) return { type: "constant", value: null };
        const isNull = z3.Not(variable.present);
        switch (variable.sort) {
          case "bool":
            return { type: "bool", isNull, value: variable.value as ZBool };
          case "int":
          case "real":
            return { type: variable.sort, isNull, value: variable.value as ZArith };
          case "string":
            return { type: "string", isNull, value: variable.value as ZSeq };
        }
        break;
      }
      case "list":
        throw new Unsupported("a list that depends on the arguments is only supported on the right of `in`");
      case "member":
        // The object is a scalar (every symbolic value is): any field or index of it is null.
        this.#encode(expression.object);
        return { type: "constant", value: null };
      case "unary": {
        const operand = this.#encode(expression.operand);
        if (expression.operator === "!") return this.#boolean(z3.Not(this.#isTrue(operand)));
        if (operand.type === "int" || operand.type === "real") {
          return { type: operand.type, isNull: operand.isNull, value: operand.value.neg() };
        }
        return { type: "constant", value: null };
      }
      case "binary":
        return this.#binary(expression.operator, expression.left, expression.right);
      case "method": {
        if (expression.name === "lower" || expression.name === "upper") {
          throw new Unsupported(`${expression.name}() of an argument cannot be encoded`);
        }
        const target = this.#operand(this.#encode(expression.target));
        const argumentExpression = expression.arguments[0];
        const argument = this.#operand(
          argumentExpression === undefined
            ? { type: "constant", value: null }
            : this.#encode(argumentExpression),
        );
        if (target.type !== "string" || argument.type !== "string") return { type: "constant", value: null };
        const value =
          expression.name === "contains"
            ? target.value.contains(argument.value)
            : expression.name === "startsWith"
              ? argument.value.prefixOf(target.value)
              : argument.value.suffixOf(target.value);
        return { type: "bool", isNull: z3.Or(target.isNull, argument.isNull), value };
      }
      case "call": {
        if (expression.name !== "len")
          throw new Unsupported(`${expression.name}() with arguments read from the call`);
        const argumentExpression = expression.arguments[0];
        const operand =
          argumentExpression === undefined ? null : this.#operand(this.#encode(argumentExpression));
        if (operand?.type !== "string") return { type: "constant", value: null };
        return { type: "int", isNull: operand.isNull, value: operand.value.length() };
      }
    }
    throw new Unsupported("an expression node of an unknown kind");
  }

  #binary(operator: string, leftExpression: Expression, rightExpression: Expression): Symbolic {
    const z3 = this.#z3;
    if (operator === "&&" || operator === "||") {
      const left = this.#isTrue(this.#encode(leftExpression));
      const right = this.#isTrue(this.#encode(rightExpression));
      return this.#boolean(operator === "&&" ? z3.And(left, right) : z3.Or(left, right));
    }
    if (operator === "in") return this.#boolean(this.#in(leftExpression, rightExpression));
    const left = this.#encode(leftExpression);
    const right = this.#encode(rightExpression);
    switch (operator) {
      case "==":
        return this.#boolean(this.#equal(left, right));
      case "!=":
        return this.#boolean(z3.Not(this.#equal(left, right)));
      case "<":
      case "<=":
      case ">":
      case ">=":
        return this.#boolean(this.#compare(operator, left, right));
    }
    const l = this.#operand(left);
    const r = this.#operand(right);
    const isNumeric = (o: Operand): o is Extract<Operand, { type: "int" | "real" }> =>
      o.type === "int" || o.type === "real";
    if (operator === "+" && l.type === "string" && r.type === "string") {
      return { type: "string", isNull: z3.Or(l.isNull, r.isNull), value: l.value.concat(r.value) };
    }
    if (operator === "%") throw new Unsupported("`%` on an argument cannot be encoded");
    if (!isNumeric(l) || !isNumeric(r)) return { type: "constant", value: null };
    const type = l.type === "real" || r.type === "real" || operator === "/" ? "real" : "int";
    const lv = type === "real" && l.type === "int" ? z3.ToReal(l.value) : l.value;
    const rv = type === "real" && r.type === "int" ? z3.ToReal(r.value) : r.value;
    const isNull = z3.Or(l.isNull, r.isNull);
    switch (operator) {
      case "+":
        return { type, isNull, value: lv.add(rv) };
      case "-":
        return { type, isNull, value: lv.sub(rv) };
      case "*":
        if (left.type !== "constant" && right.type !== "constant") {
          throw new Unsupported("a product of two arguments (non-linear) is not encoded");
        }
        return { type, isNull, value: lv.mul(rv) };
      case "/": {
        if (right.type !== "constant") throw new Unsupported("division by an argument is not encoded");
        if (right.value === 0) return { type: "constant", value: null };
        return { type, isNull, value: lv.div(rv) };
      }
    }
    throw new Unsupported(`operator ${operator}`);
  }

  #in(leftExpression: Expression, rightExpression: Expression): ZBool {
    const z3 = this.#z3;
    const left = this.#encode(leftExpression);
    if (rightExpression.kind === "list" && this.#dependsOnVariables(rightExpression)) {
      return z3.Or(...rightExpression.elements.map((element) => this.#equal(left, this.#encode(element))));
    }
    const right = this.#encode(rightExpression);
    if (right.type === "constant" && Array.isArray(right.value)) {
      return z3.Or(...right.value.map((element) => this.#equal(left, { type: "constant", value: element })));
    }
    const l = this.#operand(left);
    const r = this.#operand(right);
    if (l.type !== "string" || r.type !== "string") return z3.Bool.val(false);
    return z3.And(z3.Not(l.isNull), z3.Not(r.isNull), r.value.contains(l.value));
  }

  /** Deep equality; symbolic values are scalars, so a list or object equals none of them. */
  #equal(left: Symbolic, right: Symbolic): ZBool {
    const z3 = this.#z3;
    if (left.type === "constant" && right.type === "constant") {
      return z3.Bool.val(valuesEqual(left.value, right.value));
    }
    const l = this.#operand(left);
    const r = this.#operand(right);
    if (l.type === "other" || r.type === "other") return z3.Bool.val(false);
    if (l.type === "null") return r.type === "null" ? z3.Bool.val(true) : r.isNull;
    if (r.type === "null") return l.isNull;
    const bothNull = z3.And(l.isNull, r.isNull);
    const same = this.#sameValue(l, r);
    if (same === undefined) return bothNull;
    return z3.Or(bothNull, z3.And(z3.Not(l.isNull), z3.Not(r.isNull), same));
  }

  #sameValue(
    l: Exclude<Operand, { type: "null" | "other" }>,
    r: Exclude<Operand, { type: "null" | "other" }>,
  ): ZBool | undefined {
    const z3 = this.#z3;
    if ((l.type === "int" || l.type === "real") && (r.type === "int" || r.type === "real")) {
      if (l.type === r.type) return l.value.eq(r.value);
      return (l.type === "int" ? z3.ToReal(l.value) : l.value).eq(
        r.type === "int" ? z3.ToReal(r.value) : r.value,
      );
    }
    if (l.type === "string" && r.type === "string") return l.value.eq(r.value);
    if (l.type === "bool" && r.type === "bool") return l.value.eq(r.value);
    return undefined;
  }

  #compare(operator: "<" | "<=" | ">" | ">=", left: Symbolic, right: Symbolic): ZBool {
    const z3 = this.#z3;
    let l = this.#operand(left);
    let r = this.#operand(right);
    const strict = operator === "<" || operator === ">";
    if (operator === ">" || operator === ">=") [l, r] = [r, l];
    const bothPresent = (a: { isNull: ZBool }, b: { isNull: ZBool }) =>
      z3.And(z3.Not(a.isNull), z3.Not(b.isNull));
    if ((l.type === "int" || l.type === "real") && (r.type === "int" || r.type === "real")) {
      const lv = l.type === "int" && r.type === "real" ? z3.ToReal(l.value) : l.value;
      const rv = r.type === "int" && l.type === "real" ? z3.ToReal(r.value) : r.value;
      return z3.And(bothPresent(l, r), strict ? lv.lt(rv) : lv.le(rv));
    }
    if (l.type === "string" && r.type === "string") {
      return z3.And(bothPresent(l, r), strict ? l.value.lt(r.value) : l.value.le(r.value));
    }
    return z3.Bool.val(false);
  }

  #isTrue(value: Symbolic): ZBool {
    const z3 = this.#z3;
    if (value.type === "constant") return z3.Bool.val(value.value === true);
    if (value.type === "bool") return z3.And(z3.Not(value.isNull), value.value);
    return z3.Bool.val(false);
  }

  #boolean(value: ZBool): Symbolic {
    return { type: "bool", isNull: this.#z3.Bool.val(false), value };
  }

  /** A symbolic value, or a constant lifted to one where it is a scalar. */
  #operand(value: Symbolic): Operand {
    if (value.type !== "constant") return value;
    const z3 = this.#z3;
    const constant = value.value;
    const present = z3.Bool.val(false);
    if (constant === null) return { type: "null" };
    if (typeof constant === "boolean") return { type: "bool", isNull: present, value: z3.Bool.val(constant) };
    if (typeof constant === "number") {
      return Number.isSafeInteger(constant)
        ? { type: "int", isNull: present, value: z3.Int.val(constant) }
        : { type: "real", isNull: present, value: realValue(z3, constant) };
    }
    if (typeof constant === "string") {
      checkEncodableString(constant);
      return { type: "string", isNull: present, value: stringValue(z3, constant) };
    }
    return { type: "other", value: constant };
  }
}

/** A JavaScript number as an exact Z3 real (its shortest decimal, which preserves order). */
export function realValue(z3: Z3, value: number): ZArith {
  return z3.Real.val(decimalText(value));
}

function decimalText(value: number): string {
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (match === null) return text;
  const [, sign, whole, fraction = "", exponentText] = match;
  const digits = BigInt(`${whole}${fraction}`);
  const exponent = Number(exponentText) - fraction.length;
  if (exponent >= 0) return `${sign}${digits * 10n ** BigInt(exponent)}`;
  return `${sign}${digits}/${10n ** BigInt(-exponent)}`;
}

/** Lone surrogates compare differently in UTF-16 and code points; Z3 stops at U+2FFFF. */
export function encodableString(text: string): boolean {
  for (const character of text) {
    const code = character.codePointAt(0) as number;
    if ((code >= 0xd800 && code <= 0xdfff) || code > 0x2ffff) return false;
  }
  return true;
}

function checkEncodableString(value: Value): void {
  if (typeof value === "string" && !encodableString(value)) {
    throw new Unsupported("a string with a lone surrogate or a code point above U+2FFFF");
  }
}

/** A Z3 string literal: printable ASCII as is, everything else (and `\`) as `\u{…}`. */
export function stringValue(z3: Z3, text: string): ZSeq {
  let escaped = "";
  for (const character of text) {
    const code = character.codePointAt(0) as number;
    escaped += code >= 0x20 && code <= 0x7e && code !== 0x5c ? character : `\\u{${code.toString(16)}}`;
  }
  return z3.String.val(escaped);
}

/** Decodes Z3's printed string (escapes `\u{…}`); undefined if a raw backslash makes it ambiguous. */
export function decodeZ3String(printed: string): string | undefined {
  let text = "";
  let index = 0;
  while (index < printed.length) {
    const character = printed[index] as string;
    if (character === "\\") {
      const match = /^\\u\{([0-9a-fA-F]{1,6})\}/.exec(printed.slice(index));
      if (match === null) return undefined;
      text += String.fromCodePoint(Number.parseInt(match[1] as string, 16));
      index += match[0].length;
    } else {
      text += character;
      index++;
    }
  }
  return text;
}
