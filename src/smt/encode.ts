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
import {
  type Expression,
  evaluateExpression,
  type FieldType,
  forEachNode,
  type Scope,
  type Value,
  valuesEqual,
} from "../expression/index.js";
import type { Terms, VariableSort } from "./terms.js";

/** Something the encoding does not model faithfully; the message says what. */
export class Unsupported extends Error {}

export type { VariableSort };

/** An argument the solver chooses: a presence flag and a value, as terms of type `T`. */
export interface ArgumentVariable<T> {
  name: string;
  sort: VariableSort;
  present: T;
  value: T;
  /** Enum members, if the declared type is an enum. */
  members: Value[] | undefined;
}

type Symbolic<T> =
  | { type: "constant"; value: Value }
  | { type: "bool"; isNull: T; value: T }
  | { type: "int" | "real"; isNull: T; value: T }
  | { type: "string"; isNull: T; value: T };

/** A scalar constant or a symbolic value, ready to combine. */
type Operand<T> =
  | Exclude<Symbolic<T>, { type: "constant" }>
  | { type: "null" }
  | { type: "other"; value: Value };

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

export class Encoder<T> {
  readonly #terms: Terms<T>;
  readonly #variables: ReadonlyMap<string, ArgumentVariable<T>>;
  readonly #scope: Scope;

  /** `scope.arguments` holds the arguments that are constants; `variables` the ones the solver chooses. */
  constructor(terms: Terms<T>, variables: ReadonlyMap<string, ArgumentVariable<T>>, scope: Scope) {
    this.#terms = terms;
    this.#variables = variables;
    this.#scope = scope;
  }

  /** The Z3 formula that is true iff the expression evaluates to exactly `true`. */
  holds(expression: Expression): T {
    return this.#isTrue(this.#encode(expression));
  }

  /** The constraints a variable carries by itself: enum membership, presence if required. */
  domain(variable: ArgumentVariable<T>, required: boolean): T {
    const t = this.#terms;
    const parts: T[] = [];
    if (required) parts.push(variable.present);
    if (variable.members !== undefined) {
      const member = t.or(...variable.members.map((value) => this.equalsValue(variable, value)));
      parts.push(t.implies(variable.present, member));
    }
    return t.and(...parts);
  }

  /** `variable == value` on the value alone (the caller handles presence); false if the value does not fit. */
  equalsValue(variable: ArgumentVariable<T>, value: Value): T {
    const t = this.#terms;
    if (!fitsSort(value, variable.sort, undefined)) return t.bool(false);
    switch (variable.sort) {
      case "bool":
        return t.eq(variable.value, t.bool(value as boolean));
      case "int":
        return t.eq(variable.value, t.int(value as number));
      case "real":
        return t.eq(variable.value, t.real(decimalText(value as number)));
      case "string":
        return t.eq(variable.value, t.string(value as string));
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

  #encode(expression: Expression): Symbolic<T> {
    const t = this.#terms;
    if (!this.#dependsOnVariables(expression)) {
      return { type: "constant", value: evaluateExpression(expression, this.#scope) };
    }
    switch (expression.kind) {
      case "literal":
        return { type: "constant", value: expression.value };
      case "reference": {
        const variable = this.#variables.get(expression.path[0] as string) as ArgumentVariable<T>;
        // A field or index of a string, number or boolean is null.
        if (expression.path.length > 1) return { type: "constant", value: null };
        const isNull = t.not(variable.present);
        switch (variable.sort) {
          case "bool":
            return { type: "bool", isNull, value: variable.value };
          case "int":
          case "real":
            return { type: variable.sort, isNull, value: variable.value };
          case "string":
            return { type: "string", isNull, value: variable.value };
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
        if (expression.operator === "!") return this.#boolean(t.not(this.#isTrue(operand)));
        if (operand.type === "int" || operand.type === "real") {
          return { type: operand.type, isNull: operand.isNull, value: t.neg(operand.value) };
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
            ? t.contains(target.value, argument.value)
            : expression.name === "startsWith"
              ? t.prefixOf(argument.value, target.value)
              : t.suffixOf(argument.value, target.value);
        return { type: "bool", isNull: t.or(target.isNull, argument.isNull), value };
      }
      case "call": {
        if (expression.name !== "len")
          throw new Unsupported(`${expression.name}() with arguments read from the call`);
        const argumentExpression = expression.arguments[0];
        const operand =
          argumentExpression === undefined ? null : this.#operand(this.#encode(argumentExpression));
        if (operand?.type !== "string") return { type: "constant", value: null };
        return { type: "int", isNull: operand.isNull, value: t.length(operand.value) };
      }
    }
    throw new Unsupported("an expression node of an unknown kind");
  }

  #binary(operator: string, leftExpression: Expression, rightExpression: Expression): Symbolic<T> {
    const t = this.#terms;
    if (operator === "&&" || operator === "||") {
      const left = this.#isTrue(this.#encode(leftExpression));
      const right = this.#isTrue(this.#encode(rightExpression));
      return this.#boolean(operator === "&&" ? t.and(left, right) : t.or(left, right));
    }
    if (operator === "in") return this.#boolean(this.#in(leftExpression, rightExpression));
    const left = this.#encode(leftExpression);
    const right = this.#encode(rightExpression);
    switch (operator) {
      case "==":
        return this.#boolean(this.#equal(left, right));
      case "!=":
        return this.#boolean(t.not(this.#equal(left, right)));
      case "<":
      case "<=":
      case ">":
      case ">=":
        return this.#boolean(this.#compare(operator, left, right));
    }
    const l = this.#operand(left);
    const r = this.#operand(right);
    const isNumeric = (o: Operand<T>): o is Extract<Operand<T>, { type: "int" | "real" }> =>
      o.type === "int" || o.type === "real";
    if (operator === "+" && l.type === "string" && r.type === "string") {
      return { type: "string", isNull: t.or(l.isNull, r.isNull), value: t.concat(l.value, r.value) };
    }
    if (operator === "%") throw new Unsupported("`%` on an argument cannot be encoded");
    if (!isNumeric(l) || !isNumeric(r)) return { type: "constant", value: null };
    const type = l.type === "real" || r.type === "real" || operator === "/" ? "real" : "int";
    const lv = type === "real" && l.type === "int" ? t.toReal(l.value) : l.value;
    const rv = type === "real" && r.type === "int" ? t.toReal(r.value) : r.value;
    const isNull = t.or(l.isNull, r.isNull);
    switch (operator) {
      case "+":
        return { type, isNull, value: t.add(lv, rv) };
      case "-":
        return { type, isNull, value: t.sub(lv, rv) };
      case "*":
        if (left.type !== "constant" && right.type !== "constant") {
          throw new Unsupported("a product of two arguments (non-linear) is not encoded");
        }
        return { type, isNull, value: t.mul(lv, rv) };
      case "/": {
        if (right.type !== "constant") throw new Unsupported("division by an argument is not encoded");
        if (right.value === 0) return { type: "constant", value: null };
        return { type, isNull, value: t.div(lv, rv) };
      }
    }
    throw new Unsupported(`operator ${operator}`);
  }

  #in(leftExpression: Expression, rightExpression: Expression): T {
    const t = this.#terms;
    const left = this.#encode(leftExpression);
    if (rightExpression.kind === "list" && this.#dependsOnVariables(rightExpression)) {
      return t.or(...rightExpression.elements.map((element) => this.#equal(left, this.#encode(element))));
    }
    const right = this.#encode(rightExpression);
    if (right.type === "constant" && Array.isArray(right.value)) {
      return t.or(...right.value.map((element) => this.#equal(left, { type: "constant", value: element })));
    }
    const l = this.#operand(left);
    const r = this.#operand(right);
    if (l.type !== "string" || r.type !== "string") return t.bool(false);
    return t.and(t.not(l.isNull), t.not(r.isNull), t.contains(r.value, l.value));
  }

  /** Deep equality; symbolic values are scalars, so a list or object equals none of them. */
  #equal(left: Symbolic<T>, right: Symbolic<T>): T {
    const t = this.#terms;
    if (left.type === "constant" && right.type === "constant") {
      return t.bool(valuesEqual(left.value, right.value));
    }
    const l = this.#operand(left);
    const r = this.#operand(right);
    if (l.type === "other" || r.type === "other") return t.bool(false);
    if (l.type === "null") return r.type === "null" ? t.bool(true) : r.isNull;
    if (r.type === "null") return l.isNull;
    const bothNull = t.and(l.isNull, r.isNull);
    const same = this.#sameValue(l, r);
    if (same === undefined) return bothNull;
    return t.or(bothNull, t.and(t.not(l.isNull), t.not(r.isNull), same));
  }

  #sameValue(
    l: Exclude<Operand<T>, { type: "null" | "other" }>,
    r: Exclude<Operand<T>, { type: "null" | "other" }>,
  ): T | undefined {
    const t = this.#terms;
    if ((l.type === "int" || l.type === "real") && (r.type === "int" || r.type === "real")) {
      if (l.type === r.type) return t.eq(l.value, r.value);
      return t.eq(
        l.type === "int" ? t.toReal(l.value) : l.value,
        r.type === "int" ? t.toReal(r.value) : r.value,
      );
    }
    if (l.type === "string" && r.type === "string") return t.eq(l.value, r.value);
    if (l.type === "bool" && r.type === "bool") return t.eq(l.value, r.value);
    return undefined;
  }

  #compare(operator: "<" | "<=" | ">" | ">=", left: Symbolic<T>, right: Symbolic<T>): T {
    const t = this.#terms;
    let l = this.#operand(left);
    let r = this.#operand(right);
    const strict = operator === "<" || operator === ">";
    if (operator === ">" || operator === ">=") [l, r] = [r, l];
    const bothPresent = (a: { isNull: T }, b: { isNull: T }) => t.and(t.not(a.isNull), t.not(b.isNull));
    if ((l.type === "int" || l.type === "real") && (r.type === "int" || r.type === "real")) {
      const lv = l.type === "int" && r.type === "real" ? t.toReal(l.value) : l.value;
      const rv = r.type === "int" && l.type === "real" ? t.toReal(r.value) : r.value;
      return t.and(bothPresent(l, r), strict ? t.lt(lv, rv) : t.le(lv, rv));
    }
    if (l.type === "string" && r.type === "string") {
      return t.and(bothPresent(l, r), strict ? t.stringLt(l.value, r.value) : t.stringLe(l.value, r.value));
    }
    return t.bool(false);
  }

  #isTrue(value: Symbolic<T>): T {
    const t = this.#terms;
    if (value.type === "constant") return t.bool(value.value === true);
    if (value.type === "bool") return t.and(t.not(value.isNull), value.value);
    return t.bool(false);
  }

  #boolean(value: T): Symbolic<T> {
    return { type: "bool", isNull: this.#terms.bool(false), value };
  }

  /** A symbolic value, or a constant lifted to one where it is a scalar. */
  #operand(value: Symbolic<T>): Operand<T> {
    if (value.type !== "constant") return value;
    const t = this.#terms;
    const constant = value.value;
    const present = t.bool(false);
    if (constant === null) return { type: "null" };
    if (typeof constant === "boolean") return { type: "bool", isNull: present, value: t.bool(constant) };
    if (typeof constant === "number") {
      return Number.isSafeInteger(constant)
        ? { type: "int", isNull: present, value: t.int(constant) }
        : { type: "real", isNull: present, value: t.real(decimalText(constant)) };
    }
    if (typeof constant === "string") {
      checkEncodableString(constant);
      return { type: "string", isNull: present, value: t.string(constant) };
    }
    return { type: "other", value: constant };
  }
}

/** A JavaScript number as the text of an exact real (its shortest decimal, which preserves order): `12`, `7/2`. */
export function decimalText(value: number): string {
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

/** A string in Z3's escaped form: printable ASCII as is, everything else (and `\`) as `\u{…}`. */
export function escapeZ3String(text: string): string {
  let escaped = "";
  for (const character of text) {
    const code = character.codePointAt(0) as number;
    escaped += code >= 0x20 && code <= 0x7e && code !== 0x5c ? character : `\\u{${code.toString(16)}}`;
  }
  return escaped;
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
