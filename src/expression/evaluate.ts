/**
 * Evaluation of expressions on concrete JSON values. Evaluation never throws on a parsed
 * expression: whatever is missing or ill-typed becomes `null` or `false`.
 *
 * Semantics:
 * - References. `a.<path>` reads the proposed call's arguments, `o.<path>` its outcome,
 *   `x.<path>` the entity variable `x`, `task.<call>.<field>` a grounded task field. A missing
 *   field or index anywhere along a path (or a step into a value that is not an object/list)
 *   gives `null`. Only own fields count (`a.constructor` is `null`). `[n]` reads lists only;
 *   `['name']` is the same as `.name`.
 * - `==` / `!=`: deep equality of JSON values. Numbers compare by value (`1 == 1.0`, `0 == -0`),
 *   objects by their key sets and values (key order is irrelevant), lists element by element.
 *   No coercion: `'1' == 1` is false, `null == false` is false, `null == null` is true.
 * - `< <= > >=`: number with number, or string with string in Unicode code-point order (not
 *   UTF-16 order, so it agrees with SMT-LIB `str.<`). Any other pair, null included, is false.
 * - `+`: number + number adds, string + string concatenates. `- * /`: numbers only. `%` is the
 *   JavaScript remainder (its sign follows the dividend: `-7 % 3 == -1`). Anything else, a null
 *   operand, division or remainder by zero, or a result that is not a finite number gives `null`.
 * - Unary `-`: negates a number; anything else gives `null`.
 * - `in`: membership in a list by deep equality (`null in [null]` is true); if the right side is
 *   a string, a substring test for a string left side (false otherwise); any other right side
 *   gives false.
 * - `&&`, `||`, `!`: any operand that is not exactly `true` counts as false; the result is always
 *   a boolean; `&&` and `||` short-circuit. Note that `!` turns a missing field into `true`:
 *   `!a.flag` holds when `flag` is absent.
 * - Methods `contains`, `startsWith`, `endsWith` on a string with a string argument give a boolean;
 *   `lower()`, `upper()` on a string give a string (locale-independent); on anything else all of
 *   them give `null`.
 * - `len(x)`: the number of Unicode code points of a string (as SMT-LIB `str.len` counts), the
 *   number of elements of a list, and `null` for anything else.
 * - `subset(xs, ys)`: whether `xs` and `ys` are lists and every element of `xs` is (`==`) an
 *   element of `ys` (false for anything else); `submultiset(xs, ys)`: the same, each element of
 *   `xs` occurring in `xs` at most as often as in `ys`; `same_group(xs, ys, groups)`: whether the
 *   three are lists, `xs` and `ys` of one length, and each `xs[i]` and `ys[i]` are members of
 *   one group (a list's members are its elements, an object's its keys; false for anything
 *   else); `except(xs, ys)`: the elements of `xs` that are no
 *   element of `ys` (`null` unless both are lists); `pluck(xs, 'f')`: the list of each element's field
 *   `f` (`null` where an element has none), `null` when `xs` is not a list; `where(xs, 'f', ys)`:
 *   the elements of `xs` whose field `f` is an element of `ys` (`null` unless both are lists);
 *   `flat(x)`: the elements of the lists and the values of the objects among `x`'s elements (an
 *   object `x`: its values), other elements kept, `null` for anything else.
 * - What a text names (naming.ts): words compare ignoring case, hyphens inside a word, a
 *   possessive and a plural ending, "small"/"medium"/"large" also say "s"/"m"/"l", "no" and
 *   "without" also say "none". `named(text, names)`: the elements of `names` whose last word (the
 *   thing a name like "Vacuum Cleaner" names) is a word of the text. `named_changes(text, items,
 *   candidates, 'key', 'field')`: per item, the list of its key and the keys of the candidates
 *   (no item's key among them) with the same keys under `field` that change every value they
 *   change to one the text names (a value is named by any of its words but "a", "the", "of"…),
 *   those changing the most; where none does, those changing some value to a named one; where
 *   none does, every candidate. Both `null` unless the text is a string and the others lists.
 * - History functions come from `scope.history`; without one, `last` gives `null`, `held` false,
 *   `count` 0, and `values` and `outcomes` `[]`.
 * - An expression holds (`holdsIn`) iff it evaluates to exactly `true`, so a constraint over a
 *   missing field fails closed.
 */
import type { Expression, PathSegment, Value } from "./ast.js";
import { namedChanges, namesName, wordsOf } from "./naming.js";

/** The history a policy's history functions read; supplied by the caller (the monitor). */
export interface HistoryFunctions {
  /** The outcome of the tool's latest call before the call judged, for the current binding, or null. */
  last(tool: string): Value;
  /** The outcomes of the tool's calls before the call judged, for this binding, oldest first. */
  outcomes(tool: string): Value[];
  /** Whether the named proposition held at some earlier position. */
  held(proposition: string): boolean;
  /** How many calls of the tool were made before the call judged, for this binding. */
  count(tool: string): number;
  /** The values the argument took in earlier calls of the tool. */
  values(tool: string, argument: string): Value[];
}

/** What an expression's names refer to. Anything absent reads as `null`. */
export interface Scope {
  /** `a`: the arguments of the proposed call. */
  arguments?: Value;
  /** `o`: the call's outcome. */
  outcome?: Value;
  /** Entity variables (`x`, `route`…) by name. */
  variables?: Record<string, Value>;
  /** `task.<call>.<field>`: grounded task fields by call name. */
  task?: Record<string, Value>;
  /** History functions; if absent they give null / false / 0 / []. */
  history?: HistoryFunctions;
}

/** Evaluates an expression to a JSON value (see the semantics above). */
export function evaluateExpression(expression: Expression, scope: Scope): Value {
  switch (expression.kind) {
    case "literal":
      return expression.value;
    case "list":
      return expression.elements.map((element) => evaluateExpression(element, scope));
    case "reference": {
      switch (expression.root) {
        case "arguments":
          return follow(toValue(scope.arguments), expression.path);
        case "outcome":
          return follow(toValue(scope.outcome), expression.path);
        case "variable":
          return follow(toValue(scope.variables), expression.path);
        case "task":
          return follow(toValue(scope.task), expression.path);
      }
      break;
    }
    case "member":
      return step(evaluateExpression(expression.object, scope), expression.key);
    case "unary": {
      const operand = evaluateExpression(expression.operand, scope);
      if (expression.operator === "!") return operand !== true;
      return typeof operand === "number" ? finite(-operand) : null;
    }
    case "binary":
      return evaluateBinary(expression.operator, expression.left, expression.right, scope);
    case "method":
      return evaluateMethod(
        expression.name,
        evaluateExpression(expression.target, scope),
        expression.arguments.map((argument) => evaluateExpression(argument, scope)),
      );
    case "call":
      return evaluateCall(expression.name, expression.arguments, scope);
  }
}

/** Whether the expression evaluates to exactly `true`. */
export function holdsIn(expression: Expression, scope: Scope): boolean {
  return evaluateExpression(expression, scope) === true;
}

function evaluateBinary(
  operator: string,
  leftExpression: Expression,
  rightExpression: Expression,
  scope: Scope,
): Value {
  if (operator === "&&") {
    return (
      evaluateExpression(leftExpression, scope) === true &&
      evaluateExpression(rightExpression, scope) === true
    );
  }
  if (operator === "||") {
    return (
      evaluateExpression(leftExpression, scope) === true ||
      evaluateExpression(rightExpression, scope) === true
    );
  }
  const left = evaluateExpression(leftExpression, scope);
  const right = evaluateExpression(rightExpression, scope);
  switch (operator) {
    case "==":
      return valuesEqual(left, right);
    case "!=":
      return !valuesEqual(left, right);
    case "<":
    case "<=":
    case ">":
    case ">=": {
      const order = compareValues(left, right);
      if (order === undefined) return false;
      if (operator === "<") return order < 0;
      if (operator === "<=") return order <= 0;
      if (operator === ">") return order > 0;
      return order >= 0;
    }
    case "in":
      if (Array.isArray(right)) return isMember(left, right);
      if (typeof right === "string") return typeof left === "string" && right.includes(left);
      return false;
    case "+":
      if (typeof left === "string" && typeof right === "string") return left + right;
      return typeof left === "number" && typeof right === "number" ? finite(left + right) : null;
  }
  if (typeof left !== "number" || typeof right !== "number") return null;
  switch (operator) {
    case "-":
      return finite(left - right);
    case "*":
      return finite(left * right);
    case "/":
      return right === 0 ? null : finite(left / right);
    case "%":
      return right === 0 ? null : finite(left % right);
  }
  return null;
}

function evaluateMethod(name: string, target: Value, args: Value[]): Value {
  if (typeof target !== "string") return null;
  switch (name) {
    case "lower":
      return target.toLowerCase();
    case "upper":
      return target.toUpperCase();
  }
  const argument = args[0];
  if (typeof argument !== "string") return null;
  switch (name) {
    case "contains":
      return target.includes(argument);
    case "startsWith":
      return target.startsWith(argument);
    case "endsWith":
      return target.endsWith(argument);
  }
  return null;
}

function evaluateCall(name: string, args: Expression[], scope: Scope): Value {
  if (name === "len") {
    const value = args[0] === undefined ? null : evaluateExpression(args[0], scope);
    if (typeof value === "string") return codePointLength(value);
    return Array.isArray(value) ? value.length : null;
  }
  const names = args.map((argument) => evaluateExpression(argument, scope));
  const [first, second] = names;
  if (name === "subset")
    return (
      Array.isArray(first) &&
      Array.isArray(second) &&
      first.every((element) => isMember(toValue(element), second))
    );
  if (name === "submultiset") {
    if (!Array.isArray(first) || !Array.isArray(second)) return false;
    // Each element of `ys` answers for one element of `xs`.
    const pool = second.map(toValue);
    for (const element of first) {
      const at = pool.findIndex((member) => valuesEqual(toValue(element), member));
      if (at < 0) return false;
      pool.splice(at, 1);
    }
    return true;
  }
  if (name === "same_group") {
    const groups = names[2];
    return (
      Array.isArray(first) &&
      Array.isArray(second) &&
      Array.isArray(groups) &&
      first.length === second.length &&
      first.every((element, at) =>
        groups.some((group) => {
          const members = groupMembers(group);
          return isMember(toValue(element), members) && isMember(toValue(second[at]), members);
        }),
      )
    );
  }
  if (name === "except")
    return Array.isArray(first) && Array.isArray(second)
      ? first.filter((element) => !isMember(toValue(element), second))
      : null;
  if (name === "pluck")
    return Array.isArray(first) && typeof second === "string"
      ? first.map((element) => step(element, second))
      : null;
  if (name === "where") {
    const members = names[2];
    return Array.isArray(first) && typeof second === "string" && Array.isArray(members)
      ? first.filter((element) => isMember(step(toValue(element), second), members))
      : null;
  }
  if (name === "flat") return flat(first ?? null);
  if (name === "named") {
    if (typeof first !== "string" || !Array.isArray(second)) return null;
    const words = wordsOf(first);
    return second.map(toValue).filter((element) => namesName(words, element));
  }
  if (name === "named_changes") {
    const [, , candidates, key, field] = names;
    return typeof first === "string" &&
      Array.isArray(second) &&
      Array.isArray(candidates) &&
      typeof key === "string" &&
      typeof field === "string"
      ? namedChanges(first, second.map(toValue), candidates.map(toValue), key, field)
      : null;
  }
  const history = scope.history;
  switch (name) {
    case "last":
      return history && typeof first === "string" ? toValue(history.last(first)) : null;
    case "outcomes": {
      const outcomes = history && typeof first === "string" ? history.outcomes(first) : [];
      return Array.isArray(outcomes) ? outcomes.map(toValue) : [];
    }
    case "held":
      return history !== undefined && typeof first === "string" && history.held(first) === true;
    case "count": {
      const count = history && typeof first === "string" ? history.count(first) : 0;
      return typeof count === "number" && Number.isFinite(count) ? count : 0;
    }
    case "values": {
      const values =
        history && typeof first === "string" && typeof second === "string"
          ? history.values(first, second)
          : [];
      return Array.isArray(values) ? values.map(toValue) : [];
    }
  }
  return null;
}

/** Whether `value` is (`==`) an element of `list`. */
function isMember(value: Value, list: readonly unknown[]): boolean {
  return list.some((element) => valuesEqual(value, toValue(element)));
}

/** The members of a group (`same_group`): a list's elements, an object's keys; else none. */
export function groupMembers(group: unknown): Value[] {
  if (Array.isArray(group)) return group.map(toValue);
  return typeof group === "object" && group !== null ? Object.keys(group) : [];
}

/** The values of an object, or a list's elements with its lists and objects spread; else null. */
function flat(value: Value): Value {
  const elements = (container: Value): Value[] | undefined =>
    Array.isArray(container)
      ? container.map(toValue)
      : container !== null && typeof container === "object"
        ? Object.values(container).map(toValue)
        : undefined;
  if (!Array.isArray(value)) return elements(value) ?? null;
  return value.flatMap((element) => elements(toValue(element)) ?? [toValue(element)]);
}

function follow(root: Value, path: readonly PathSegment[]): Value {
  let value = root;
  for (const segment of path) {
    value = step(value, segment);
    if (value === null) return null;
  }
  return value;
}

function step(value: Value, segment: PathSegment): Value {
  if (typeof segment === "number") {
    return Array.isArray(value) && segment >= 0 && segment < value.length ? toValue(value[segment]) : null;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  return Object.hasOwn(value, segment) ? toValue(value[segment]) : null;
}

/** Undefined (absent scope parts, holes) and anything that is not JSON read as null. */
function toValue(value: unknown): Value {
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return null;
  if (typeof value === "bigint") return null;
  if (typeof value === "number" && !Number.isFinite(value)) return null;
  return value as Value;
}

function finite(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

/** Deep equality of JSON values, without coercion. */
export function valuesEqual(left: Value, right: Value): boolean {
  if (left === right) return true;
  if (left === null || right === null || typeof left !== "object" || typeof right !== "object") return false;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((element, index) => valuesEqual(toValue(element), toValue(right[index])));
  }
  const leftKeys = Object.keys(left).filter((key) => left[key] !== undefined);
  const rightKeys = Object.keys(right).filter((key) => right[key] !== undefined);
  if (leftKeys.length !== rightKeys.length) return false;
  return leftKeys.every(
    (key) => Object.hasOwn(right, key) && valuesEqual(toValue(left[key]), toValue(right[key])),
  );
}

/** Orders two numbers or two strings (by code point); undefined for any other pair. */
export function compareValues(left: Value, right: Value): number | undefined {
  if (typeof left === "number" && typeof right === "number") return left < right ? -1 : left > right ? 1 : 0;
  if (typeof left === "string" && typeof right === "string") return compareCodePoints(left, right);
  return undefined;
}

function compareCodePoints(left: string, right: string): number {
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    const a = left.codePointAt(i) as number;
    const b = right.codePointAt(j) as number;
    if (a !== b) return a < b ? -1 : 1;
    i += a > 0xffff ? 2 : 1;
    j += b > 0xffff ? 2 : 1;
  }
  const leftDone = i >= left.length;
  const rightDone = j >= right.length;
  return leftDone && rightDone ? 0 : leftDone ? -1 : 1;
}

function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}
