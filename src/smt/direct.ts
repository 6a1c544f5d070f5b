/**
 * Exact repair and satisfiability without Z3, for the constraint sets most policies have:
 * equalities, memberships, enums, booleans, linear bounds and string order, where each
 * comparison reads at most one of the arguments being chosen.
 *
 * Why it is exact: once the other arguments are fixed, every comparison that reads one chosen
 * argument changes its truth only at known points (the constant it is compared with, the
 * boundary of a linear bound), so the argument's values fall into finitely many classes with
 * the same truth for every comparison, and one value per class (plus absent, when allowed) is
 * enough. Enums and booleans are small enough to try in full. Every value tried is checked
 * with the evaluator, so an answer is right by construction; "no repair" means no class works.
 *
 * The search follows the solver's order (`solve.ts`): the fewest changed arguments first, the
 * sets of that size in the same order, each first with the changed arguments restricted to
 * their preferred values (enum members, then candidates), then without. So it finds the
 * arguments the solver would change; only values the solver may choose freely can differ.
 * Anything outside this class (string methods and lengths, products or comparisons of two
 * chosen arguments, more than a few thousand combinations) returns undefined: ask Z3.
 */
import {
  type Expression,
  evaluateExpression,
  forEachNode,
  holdsIn,
  type Scope,
  type Value,
  valuesEqual,
} from "../expression/index.js";
import {
  asLinear,
  changePoint,
  type Linear,
  lengthOf,
  NotDirect,
  scaled,
  type Term,
  termArguments,
  underlying,
} from "./direct-terms.js";
import {
  argumentsRead,
  encodableString,
  fitsSort,
  sortOf,
  Unsupported,
  type VariableSort,
} from "./encode.js";
import type { RepairRequest, RepairResult, SatisfiableRequest, SatisfiableResult } from "./protocol.js";
import {
  numericRepresentatives,
  prefixes,
  stringRepresentatives,
  substrings,
  suffixes,
} from "./representatives.js";
import { maxRepairableArguments, subsets } from "./search.js";
import { emptyStringTests, type StringTests, stringClassRepresentatives } from "./strings.js";

/** Candidate calls evaluated before giving up to Z3. */
const maxEvaluations = 5_000;

interface Chosen {
  name: string;
  sort: VariableSort;
  members: Value[] | undefined;
  required: boolean;
}

/** A repair found without Z3, or undefined when the solver must answer. */
export function repairDirectly(request: RepairRequest): RepairResult | undefined {
  try {
    return repairOrThrow(request);
  } catch (error) {
    if (error instanceof NotDirect || error instanceof Unsupported) return undefined;
    throw error;
  }
}

/** Satisfiability decided without Z3, or undefined when the solver must answer. */
export function satisfiableDirectly(request: SatisfiableRequest): SatisfiableResult | undefined {
  try {
    const fixed = request.fixed ?? {};
    const names = new Set([...argumentsRead(request.constraints), ...Object.keys(fixed)]);
    const chosen = declared(
      request.tool,
      [...names].filter((name) => !Object.hasOwn(fixed, name)),
    );
    const constants: Record<string, Value> = {};
    for (const name of names) {
      if (chosen.some((variable) => variable.name === name)) continue;
      const value = fixed[name] ?? null;
      if (value === null) continue;
      const [variable] = declared(request.tool, [name]);
      // As in the solver: a fixed value must fit the declared type, and an enum's members.
      if (variable !== undefined && !fitsSort(value, variable.sort, undefined))
        throw new NotDirect("a fixed value does not fit its type");
      if (variable !== undefined && !fitsSort(value, variable.sort, variable.members))
        return { status: "unsat" };
      constants[name] = value;
    }
    const search = new Search(request.constraints, request.scope ?? {});
    const found = search.first(constants, chosen, () => undefined);
    return found === undefined ? { status: "unsat" } : { status: "sat", example: { ...constants, ...found } };
  } catch (error) {
    if (error instanceof NotDirect || error instanceof Unsupported) return undefined;
    throw error;
  }
}

function repairOrThrow(request: RepairRequest): RepairResult {
  const read = argumentsRead(request.constraints);
  const chosen = declared(
    request.tool,
    [...read].filter((name) => request.repairable.includes(name)),
  );
  if (chosen.length > maxRepairableArguments) throw new NotDirect("too many repairable arguments");
  const search = new Search(request.constraints, request.scope ?? {});
  if (search.holds(request.arguments))
    return { status: "repaired", arguments: { ...request.arguments }, changed: [] };

  const constants: Record<string, Value> = { ...request.arguments };
  for (const variable of chosen) delete constants[variable.name];
  search.checkShape(constants, chosen);
  if (search.constantlyFalse(constants, chosen)) return { status: "unsat" };

  const proposed = (name: string): Value => request.arguments[name] ?? null;
  const preferred = new Map(
    chosen.map((variable) => [
      variable.name,
      unique([...(variable.members ?? []), ...(request.candidates?.[variable.name] ?? [])]).filter(
        (value) =>
          fitsSort(value, variable.sort, variable.members) && !valuesEqual(value, proposed(variable.name)),
      ),
    ]),
  );
  const keepable = (variable: Chosen): boolean => {
    const value = proposed(variable.name);
    return value === null ? !variable.required : fitsSort(value, variable.sort, variable.members);
  };
  for (let size = 1; size <= chosen.length; size++) {
    for (const freed of subsets(chosen.length, size)) {
      const free = freed.map((index) => chosen[index] as Chosen);
      const kept = chosen.filter((_, index) => !freed.includes(index));
      if (!kept.every(keepable)) continue;
      const fixed = { ...constants };
      for (const variable of kept)
        if (proposed(variable.name) !== null) fixed[variable.name] = proposed(variable.name);
      const restricted = free.some((variable) => (preferred.get(variable.name) ?? []).length > 0);
      const phases = restricted ? [true, false] : [false];
      for (const preferOnly of phases) {
        const found = search.first(fixed, free, (variable) =>
          preferOnly && (preferred.get(variable.name) ?? []).length > 0
            ? preferred.get(variable.name)
            : undefined,
        );
        if (found === undefined) continue;
        const repaired = { ...request.arguments };
        for (const { name } of free) {
          if (name in found) repaired[name] = found[name] as Value;
          else delete repaired[name];
        }
        const changed = chosen
          .map((variable) => variable.name)
          .filter((name) => !valuesEqual(repaired[name] ?? null, proposed(name)));
        return { status: "repaired", arguments: repaired, changed };
      }
    }
  }
  return { status: "unsat" };
}

/** The chosen arguments the tool declares (others stay as proposed), with their sorts. */
function declared(tool: RepairRequest["tool"], names: string[]): Chosen[] {
  const required = new Set(tool.required ?? []);
  return names.flatMap((name) => {
    const parameter = tool.parameters.find((candidate) => candidate.name === name);
    if (parameter === undefined) return [];
    const { sort, members } = sortOf(name, parameter.type);
    return [{ name, sort, members, required: required.has(name) }];
  });
}

class Search {
  #evaluations = 0;

  constructor(
    private readonly constraints: readonly Expression[],
    private readonly scope: Omit<Scope, "arguments">,
  ) {}

  holds(args: Record<string, Value>): boolean {
    return this.constraints.every((constraint) => holdsIn(constraint, { ...this.scope, arguments: args }));
  }

  /** Throws `NotDirect` unless every comparison has a shape the search decides (coupled ones allowed). */
  checkShape(constants: Record<string, Value>, chosen: Chosen[]): void {
    const analysis = new Analysis(chosen, { ...this.scope, arguments: constants }, true);
    for (const constraint of this.constraints) analysis.condition(constraint);
  }

  /** Whether a top-level conjunct that reads none of the chosen arguments is false: then nothing helps. */
  constantlyFalse(constants: Record<string, Value>, chosen: Chosen[]): boolean {
    const names = new Set(chosen.map((variable) => variable.name));
    const scope = { ...this.scope, arguments: constants };
    return this.constraints.some((constraint) =>
      conjuncts(constraint).some((part) => !reads(part, names) && !holdsIn(part, scope)),
    );
  }

  /**
   * The first values of `free` (absent ones left out) that, with `fixed`, satisfy every constraint;
   * `only` restricts an argument to given values instead of one value per class.
   */
  first(
    fixed: Record<string, Value>,
    free: Chosen[],
    only: (variable: Chosen) => Value[] | undefined,
  ): Record<string, Value> | undefined {
    const analysis = new Analysis(free, { ...this.scope, arguments: fixed }, false);
    for (const constraint of this.constraints) analysis.condition(constraint);
    const options = free.map((variable) => only(variable) ?? analysis.representatives(variable));
    const args: Record<string, Value> = { ...fixed };
    const assign = (index: number): boolean => {
      if (index === free.length) {
        if (++this.#evaluations > maxEvaluations) throw new NotDirect("too many combinations");
        return this.holds(args);
      }
      const variable = free[index] as Chosen;
      for (const value of options[index] as Value[]) {
        if (value === null) delete args[variable.name];
        else args[variable.name] = value;
        if (assign(index + 1)) return true;
      }
      delete args[variable.name];
      return false;
    };
    if (!assign(0)) return undefined;
    const found: Record<string, Value> = {};
    for (const variable of free)
      if (variable.name in args) found[variable.name] = args[variable.name] as Value;
    return found;
  }
}

/**
 * The points where comparisons over the free arguments change truth, collected by walking the
 * constraints with the fixed arguments as constants. Throws `NotDirect` on a shape it does not
 * decide; a comparison of two free arguments is allowed only when `allowCoupled` (shape check).
 */
class Analysis {
  readonly #free: Map<string, Chosen>;
  readonly #points = new Map<string, Value[]>();
  /** The string tests on each string argument (with constants), for `strings.ts`. */
  readonly #strings = new Map<string, StringTests>();
  /** String arguments with tests beyond equality and order: their classes come from `strings.ts`. */
  readonly #beyondOrder = new Set<string>();

  constructor(
    free: Chosen[],
    private readonly scope: Scope,
    private readonly allowCoupled: boolean,
  ) {
    this.#free = new Map(free.map((variable) => [variable.name, variable]));
  }

  /** One value per class of the argument's values, preferred values first; absent last if allowed. */
  representatives(variable: Chosen): Value[] {
    let values: Value[];
    if (variable.members !== undefined) values = [...variable.members];
    else if (variable.sort === "bool") values = [true, false];
    else {
      const points = this.#points.get(variable.name) ?? [];
      const tests = this.#strings.get(variable.name);
      if (variable.sort === "string" && tests !== undefined && this.#beyondOrder.has(variable.name)) {
        const strings = stringClassRepresentatives(tests);
        if (strings === undefined) throw new NotDirect("too many string classes");
        values = strings;
      } else {
        values =
          variable.sort === "string"
            ? stringRepresentatives(points as string[])
            : numericRepresentatives(points as number[], variable.sort === "int");
      }
    }
    values = unique(values).filter((value) => fitsSort(value, variable.sort, variable.members));
    return variable.required ? values : [...values, null];
  }

  /** A subexpression used as a condition (its value must be exactly true). */
  condition(expression: Expression): void {
    if (!this.#readsFree(expression)) return;
    switch (expression.kind) {
      case "binary":
        switch (expression.operator) {
          case "&&":
          case "||":
            this.condition(expression.left);
            this.condition(expression.right);
            return;
          case "==":
          case "!=":
            this.#compare(this.#term(expression.left), this.#term(expression.right));
            return;
          case "<":
          case "<=":
          case ">":
          case ">=":
            this.#compare(this.#term(expression.left), this.#term(expression.right), true);
            return;
          case "in":
            this.#membership(expression.left, expression.right);
            return;
        }
        break;
      case "unary":
        if (expression.operator === "!") {
          this.condition(expression.operand);
          return;
        }
        break;
      case "reference":
        // A bare argument as a condition: true only for a boolean `true`; no points needed.
        if (expression.path.length === 1) return;
        break;
      case "method":
        this.#term(expression);
        return;
    }
    throw new NotDirect(`a condition of kind ${expression.kind}`);
  }

  #membership(left: Expression, right: Expression): void {
    const element = this.#term(left);
    if (right.kind === "list") {
      for (const item of right.elements) this.#compare(element, this.#term(item));
      return;
    }
    if (this.#readsFree(right)) {
      // `'c' in a.x`: a containment test on x (false for a left side that is not a string).
      const container = this.#term(right);
      if (element.kind !== "constant") {
        if (this.allowCoupled) return;
        throw new NotDirect("`in` a value read from the call");
      }
      if (typeof element.value !== "string") return;
      this.#stringTest(container, (tests) => tests.contains.push(element.value as string));
      return;
    }
    const list = evaluateExpression(right, this.scope);
    if (Array.isArray(list)) {
      for (const item of list) this.#compare(element, { kind: "constant", value: item });
    } else if (typeof list === "string") {
      // `a.x in 'text'`: x is one of the substrings of the text.
      if (!encodableString(list)) throw new NotDirect("a string the solver cannot encode");
      this.#stringTest(element, (tests) => tests.equals.push(...substrings(list)));
    }
  }

  #compare(left: Term, right: Term, ordered = false): void {
    const names = new Set([...termArguments(left), ...termArguments(right)]);
    if (new Set([...names].map(underlying)).size > 1) {
      if (this.allowCoupled) return;
      throw new NotDirect("a comparison of two chosen arguments");
    }
    const constant =
      left.kind === "constant" ? left.value : right.kind === "constant" ? right.value : undefined;
    if (typeof constant === "string" && !encodableString(constant))
      throw new NotDirect("a string the solver cannot encode");
    // A derived value against a constant: decided by the classes already.
    if (left.kind === "derived" || right.kind === "derived") return;
    if (names.size > 1) {
      // `len(a.x)` and `a.x` in one comparison.
      if (this.allowCoupled) return;
      throw new NotDirect("a comparison of a string and its length");
    }
    const [name] = names;
    if (name === undefined) return;
    if (name !== underlying(name)) {
      // A bound on a length: the point where it changes truth.
      const point = changePoint(left, right, name);
      if (point !== undefined) this.#tests(underlying(name)).lengths.push(point);
      return;
    }
    const variable = this.#free.get(name) as Chosen;
    if (variable.sort === "string") {
      if (typeof constant !== "string") return;
      this.#addPoint(name, constant);
      if (variable.members === undefined) {
        const tests = this.#tests(name, false);
        (ordered ? tests.order : tests.equals).push(constant);
      }
      return;
    }
    if (variable.sort === "bool" || variable.members !== undefined) return;
    // A number compared with a non-number: the same answer for every present value.
    const point = changePoint(left, right, name);
    if (point !== undefined) this.#addPoint(name, point);
  }

  /** The string tests of a string argument; `beyondOrder`: a test equality and order points cannot decide. */
  #tests(name: string, beyondOrder = true): StringTests {
    let tests = this.#strings.get(name);
    if (tests === undefined) {
      tests = emptyStringTests();
      this.#strings.set(name, tests);
    }
    if (beyondOrder) this.#beyondOrder.add(name);
    return tests;
  }

  /** Records a test on a term if it is a (non-enum) string argument; on anything else the test's value is constant. */
  #stringTest(term: Term, add: (tests: StringTests) => void): void {
    if (term.kind !== "argument") return;
    const variable = this.#free.get(term.name) as Chosen;
    if (variable.sort !== "string" || variable.members !== undefined) return;
    add(this.#tests(term.name));
  }

  /** `target.contains/startsWith/endsWith(argument)` with one side a chosen argument. */
  #method(expression: Extract<Expression, { kind: "method" }>): Term {
    const target = this.#term(expression.target);
    const argumentExpression = expression.arguments[0];
    const argument: Term =
      argumentExpression === undefined ? { kind: "constant", value: null } : this.#term(argumentExpression);
    const names = [...termArguments(target), ...termArguments(argument)];
    const derived: Term = { kind: "derived", names };
    if (expression.name === "lower" || expression.name === "upper") {
      const variable = target.kind === "argument" ? this.#free.get(target.name) : undefined;
      if (variable?.members !== undefined || (variable !== undefined && variable.sort !== "string"))
        return derived;
      throw new NotDirect(`${expression.name}() of a chosen argument`);
    }
    if (new Set(names.map(underlying)).size > 1) {
      if (this.allowCoupled) return derived;
      throw new NotDirect("a string method on two chosen arguments");
    }
    const { name } = expression;
    if (target.kind === "constant") {
      // `'text'.contains(a.x)`: x is one of the text's substrings (prefixes, suffixes).
      if (typeof target.value === "string") {
        const text = target.value;
        if (!encodableString(text)) throw new NotDirect("a string the solver cannot encode");
        const set =
          name === "contains" ? substrings(text) : name === "startsWith" ? prefixes(text) : suffixes(text);
        this.#stringTest(argument, (tests) => tests.equals.push(...set));
      }
      return derived;
    }
    if (argument.kind === "constant") {
      const text = argument.value;
      if (typeof text === "string") {
        if (!encodableString(text)) throw new NotDirect("a string the solver cannot encode");
        this.#stringTest(target, (tests) =>
          (name === "contains"
            ? tests.contains
            : name === "startsWith"
              ? tests.prefixes
              : tests.suffixes
          ).push(text),
        );
      }
      return derived;
    }
    throw new NotDirect("a string method on a derived value");
  }

  #addPoint(name: string, value: Value): void {
    const points = this.#points.get(name) ?? [];
    points.push(value);
    this.#points.set(name, points);
  }

  #term(expression: Expression): Term {
    if (!this.#readsFree(expression))
      return { kind: "constant", value: evaluateExpression(expression, this.scope) };
    switch (expression.kind) {
      case "method":
        return this.#method(expression);
      case "call": {
        if (expression.name !== "len") break;
        const argumentExpression = expression.arguments[0];
        const inner = argumentExpression === undefined ? undefined : this.#term(argumentExpression);
        if (inner === undefined) break;
        if (inner.kind === "argument") {
          const variable = this.#free.get(inner.name) as Chosen;
          if (variable.sort === "string" && variable.members === undefined) {
            this.#tests(inner.name);
            return { kind: "linear", coefficients: new Map([[lengthOf(inner.name), 1]]), constant: 0 };
          }
        }
        // An enum's length is a function of its member; of a number or a boolean, null.
        return { kind: "derived", names: termArguments(inner) };
      }
      case "reference": {
        const name = expression.path[0] as string;
        // A field of a scalar argument is null whatever its value.
        if (expression.path.length > 1) return { kind: "constant", value: null };
        const sort = this.#sortOf(name);
        if (sort === "int" || sort === "real")
          return { kind: "linear", coefficients: new Map([[name, 1]]), constant: 0 };
        return { kind: "argument", name };
      }
      case "unary":
        if (expression.operator === "-") return scaled(this.#numeric(expression.operand), -1);
        break;
      case "binary": {
        const { operator } = expression;
        if (operator !== "+" && operator !== "-" && operator !== "*" && operator !== "/") break;
        const left = this.#numeric(expression.left);
        const right = this.#numeric(expression.right);
        if (operator === "+" || operator === "-") {
          const sign = operator === "+" ? 1 : -1;
          const coefficients = new Map(left.coefficients);
          for (const [name, value] of right.coefficients)
            coefficients.set(name, (coefficients.get(name) ?? 0) + sign * value);
          return { kind: "linear", coefficients, constant: left.constant + sign * right.constant };
        }
        if (operator === "*") {
          if (left.coefficients.size === 0) return scaled(right, left.constant);
          if (right.coefficients.size === 0) return scaled(left, right.constant);
          break;
        }
        if (right.coefficients.size === 0 && right.constant !== 0) return scaled(left, 1 / right.constant);
        break;
      }
    }
    throw new NotDirect(`a term of kind ${expression.kind}`);
  }

  /** A term that must be a number: a linear term, or a numeric constant. */
  #numeric(expression: Expression): Linear {
    const term = this.#term(expression);
    const linear = asLinear(term);
    if (linear === undefined) throw new NotDirect("arithmetic on something other than numbers");
    return linear;
  }

  #sortOf(name: string): VariableSort {
    return (this.#free.get(name) as Chosen).sort;
  }

  #readsFree(expression: Expression): boolean {
    let found = false;
    forEachNode(expression, (node) => {
      if (node.kind !== "reference" || node.root !== "arguments") return;
      const first = node.path[0];
      if (first === undefined) throw new NotDirect("`a` as a whole");
      if (typeof first === "string" && this.#free.has(first)) found = true;
    });
    return found;
  }
}

function unique(values: Value[]): Value[] {
  const result: Value[] = [];
  for (const value of values) if (!result.some((known) => valuesEqual(known, value))) result.push(value);
  return result;
}

/** The top-level `&&` parts of an expression. */
function conjuncts(expression: Expression): Expression[] {
  return expression.kind === "binary" && expression.operator === "&&"
    ? [...conjuncts(expression.left), ...conjuncts(expression.right)]
    : [expression];
}

function reads(expression: Expression, names: ReadonlySet<string>): boolean {
  let found = false;
  forEachNode(expression, (node) => {
    if (node.kind === "reference" && node.root === "arguments") {
      const first = node.path[0];
      if (first === undefined || (typeof first === "string" && names.has(first))) found = true;
    }
  });
  return found;
}
