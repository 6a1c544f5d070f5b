import {
  type ComparisonOperator,
  type Expression,
  evaluateExpression,
  type FieldType,
  forEachNode,
  groupMembers,
  holdsIn,
  referencesOf,
  type Scope,
  sameExpression,
  type Value,
  valuesEqual,
} from "../expression/index.js";
import {
  type ConstraintSpec,
  fitsParameterType,
  type Parameter,
  type PropositionSpec,
  type RuleSpec,
} from "../policy/index.js";
import type { Run, ToolCallEvent } from "../run/index.js";
import type { Judge } from "./judge.js";
import { type ArgumentLimits, type ProposedCall, proposedEvent } from "./types.js";

// The limits that the policy's block constraints put on one argument whatever the call's other
// arguments are, so that the token shield can mask them while the value is written: an abstract
// reading of `require` per argument (numbers: an interval; strings: the values allowed; lists:
// the interval of their length), evaluated in every context a call of the tool can be judged in;
// and a binding argument's known values, where a rule blocks any call that names a new binding.

/** What a constraint allows one argument, in one domain: an interval, or a set of strings. */
interface Domain<T> {
  any: T;
  none: T;
  meet(left: T, right: T): T;
  join(left: T, right: T): T;
  /** The argument's values `x` (or lengths) with `x operator value`. */
  compare(operator: ComparisonOperator, value: Value): T;
  isAny(allowed: T): boolean;
  isNone(allowed: T): boolean;
}

interface Interval {
  low: number;
  lowOpen: boolean;
  high: number;
  highOpen: boolean;
}

const everything: Interval = {
  low: Number.NEGATIVE_INFINITY,
  lowOpen: true,
  high: Number.POSITIVE_INFINITY,
  highOpen: true,
};
const nothing: Interval = { low: 1, lowOpen: true, high: 0, highOpen: true };

const intervals: Domain<Interval> = {
  any: everything,
  none: nothing,
  meet: (left, right) =>
    interval(
      bound(left.low, left.lowOpen, right.low, right.lowOpen, "greater", "tight"),
      bound(left.high, left.highOpen, right.high, right.highOpen, "smaller", "tight"),
    ),
  // The hull: it may allow more than the union, never less (masks stay on the safe side).
  join: (left, right) => {
    if (isEmpty(left)) return right;
    if (isEmpty(right)) return left;
    return interval(
      bound(left.low, left.lowOpen, right.low, right.lowOpen, "smaller", "loose"),
      bound(left.high, left.highOpen, right.high, right.highOpen, "greater", "loose"),
    );
  },
  compare: (operator, value) => {
    if (operator === "in")
      return Array.isArray(value)
        ? value.reduce<Interval>(
            (hull, member) => intervals.join(hull, intervals.compare("==", member)),
            nothing,
          )
        : everything;
    if (operator === "!=") return everything;
    // A comparison with anything but a number is false.
    if (typeof value !== "number") return nothing;
    switch (operator) {
      case "==":
        return { low: value, lowOpen: false, high: value, highOpen: false };
      case "<":
      case "<=":
        return { ...everything, high: value, highOpen: operator === "<" };
      default:
        return { ...everything, low: value, lowOpen: operator === ">" };
    }
  },
  isAny: (allowed) => allowed.low === Number.NEGATIVE_INFINITY && allowed.high === Number.POSITIVE_INFINITY,
  isNone: isEmpty,
};

/**
 * One of two bounds (`greater` or `smaller`); where they are equal, open if either is (`tight`:
 * a meet) or only if both are (`loose`: a join).
 */
function bound(
  left: number,
  leftOpen: boolean,
  right: number,
  rightOpen: boolean,
  pick: "greater" | "smaller",
  equal: "tight" | "loose",
): { at: number; open: boolean } {
  if (left === right)
    return { at: left, open: equal === "tight" ? leftOpen || rightOpen : leftOpen && rightOpen };
  return left > right === (pick === "greater")
    ? { at: left, open: leftOpen }
    : { at: right, open: rightOpen };
}

function interval(low: { at: number; open: boolean }, high: { at: number; open: boolean }): Interval {
  return { low: low.at, lowOpen: low.open, high: high.at, highOpen: high.open };
}

function isEmpty(interval: Interval): boolean {
  return (
    interval.low > interval.high ||
    (interval.low === interval.high && (interval.lowOpen || interval.highOpen))
  );
}

/**
 * A domain whose values are lists (what is allowed) or "any": "any" meets as the other side and
 * joins as itself, and an empty list allows nothing.
 */
function listDomain<E>(lists: {
  meet(left: E[], right: E[]): E[];
  join(left: E[], right: E[]): E[];
  compare(operator: ComparisonOperator, value: Value): E[] | "any";
}): Domain<E[] | "any"> {
  return {
    any: "any",
    none: [],
    meet: (left, right) => (left === "any" ? right : right === "any" ? left : lists.meet(left, right)),
    join: (left, right) => (left === "any" || right === "any" ? "any" : lists.join(left, right)),
    compare: lists.compare,
    isAny: (allowed) => allowed === "any",
    isNone: (allowed) => allowed !== "any" && allowed.length === 0,
  };
}

/** The strings allowed. */
const strings = listDomain<Value>({
  meet: (left, right) => left.filter((value) => includes(right, value)),
  join: (left, right) => [...left, ...right.filter((value) => !includes(left, value))],
  compare: (operator, value) => {
    if (operator === "==") return typeof value === "string" ? [value] : [];
    if (operator === "in" && Array.isArray(value))
      return value.filter((member) => typeof member === "string");
    return "any";
  },
});

/** A multiset: how often a list may hold each value (a value not listed: never). */
interface Count {
  value: Value;
  most: number;
}

const counts = listDomain<Count>({
  meet: (left, right) =>
    left.flatMap(({ value, most }) => {
      const other = countOf(right, value);
      return other > 0 ? [{ value, most: Math.min(most, other) }] : [];
    }),
  join: (left, right) => [
    ...left.map(({ value, most }) => ({ value, most: Math.max(most, countOf(right, value)) })),
    ...right.filter(({ value }) => countOf(left, value) === 0),
  ],
  compare: (operator, value) => {
    if (operator !== "in" || !Array.isArray(value)) return "any";
    const tally: Count[] = [];
    for (const member of value) {
      const known = tally.find((entry) => valuesEqual(entry.value, member));
      if (known) known.most++;
      else tally.push({ value: member, most: 1 });
    }
    return tally;
  },
});

function countOf(allowed: Count[], value: Value): number {
  return allowed.find((entry) => valuesEqual(entry.value, value))?.most ?? 0;
}

/**
 * The groups an item and its partner (the item at its position in another list) must share one
 * of. Two such constraints together: the pairwise intersections of their groups.
 */
const groups = listDomain<Value[]>({
  meet: (left, right) =>
    left
      .flatMap((group) => right.map((other) => group.filter((value) => includes(other, value))))
      .filter((group) => group.length > 0),
  join: (left, right) => [...left, ...right],
  compare: (operator, value) => (operator === "in" && Array.isArray(value) ? value.map(groupMembers) : "any"),
});

function includes(values: readonly Value[], value: Value): boolean {
  return values.some((known) => valuesEqual(known, value));
}

const flipped: Partial<Record<ComparisonOperator, ComparisonOperator>> = {
  "==": "==",
  "!=": "!=",
  "<": ">",
  "<=": ">=",
  ">": "<",
  ">=": "<=",
};

/**
 * What `expression` allows the argument (`subject`: its value, or its length), evaluated in
 * `scope`: a part `known` before the call holds or not there; `&&` meets, `||` joins; a
 * comparison of the subject with a known part is the domain's; anything else allows everything.
 */
function allowedBy<T>(
  expression: Expression,
  subject: (node: Expression) => boolean,
  domain: Domain<T>,
  scope: Scope,
): T {
  if (known(expression)) return holdsIn(expression, scope) ? domain.any : domain.none;
  if (!referencesOf(expression).some((reference) => reference.kind === "arguments")) return domain.any;
  // `subset(a.xs, pool)`, `submultiset(a.xs, pool)`, `same_group(a.xs, a.ys, pool)`: the subject
  // is the call (a list's items), the pool its last argument.
  if (expression.kind === "call" && subject(expression)) {
    const pool = expression.arguments.at(-1);
    return pool && known(pool) ? domain.compare("in", evaluateExpression(pool, scope)) : domain.any;
  }
  if (expression.kind !== "binary") return domain.any;
  const { operator, left, right } = expression;
  if (operator === "&&" || operator === "||") {
    const both = [left, right].map((side) => allowedBy(side, subject, domain, scope)) as [T, T];
    return operator === "&&" ? domain.meet(...both) : domain.join(...both);
  }
  if (subject(left) && known(right))
    return domain.compare(operator as ComparisonOperator, evaluateExpression(right, scope));
  const mirrored = flipped[operator as ComparisonOperator];
  if (mirrored && subject(right) && known(left))
    return domain.compare(mirrored, evaluateExpression(left, scope));
  return domain.any;
}

/**
 * `allowedBy`, met with what the expression allows each other argument term that a part of its
 * top-level conjunction says the subject equals (`len(a.item_ids) > 0 && len(a.item_ids) ==
 * len(a.new_item_ids)`: the new ids' list cannot be empty either). One step: the other term's
 * own equalities are not followed.
 */
function allowedWithEqualities<T>(
  expression: Expression,
  subject: (node: Expression) => boolean,
  domain: Domain<T>,
  scope: Scope,
): T {
  let allowed = allowedBy(expression, subject, domain, scope);
  for (const part of conjuncts(expression)) {
    if (part.kind !== "binary" || part.operator !== "==") continue;
    const other = subject(part.left) ? part.right : subject(part.right) ? part.left : undefined;
    if (!other || known(other)) continue;
    allowed = domain.meet(
      allowed,
      allowedBy(expression, (node) => sameExpression(node, other), domain, scope),
    );
  }
  return allowed;
}

function conjuncts(expression: Expression): Expression[] {
  return expression.kind === "binary" && expression.operator === "&&"
    ? [...conjuncts(expression.left), ...conjuncts(expression.right)]
    : [expression];
}

/**
 * Whether an expression's value is known before the call is written: it reads no argument, and
 * no variable (the binding's: a call not written yet may name another one).
 */
function known(expression: Expression): boolean {
  return !referencesOf(expression).some(
    (reference) => reference.kind === "arguments" || reference.kind === "variable",
  );
}

function isArgument(node: Expression, argument: string): boolean {
  return (
    node.kind === "reference" &&
    node.root === "arguments" &&
    node.path.length === 1 &&
    node.path[0] === argument
  );
}

/** The top-level argument names an expression reads (`a.x`, `a.x.y` → `x`). */
export function argumentsRead(expression: Expression | undefined): string[] {
  if (!expression) return [];
  return referencesOf(expression).flatMap((reference) =>
    reference.kind === "arguments" && typeof reference.path[0] === "string" ? [reference.path[0]] : [],
  );
}

/**
 * A proposition's binding pattern as variable → top-level argument pairs, where which bindings
 * a call names can be told per argument: one entity at most, its pattern at the top level of the
 * arguments, and a `when` that reads no other argument. Undefined where it cannot.
 */
function argumentPattern(proposition: PropositionSpec): [string, string][] | undefined {
  if (proposition.entities.length > 1) return undefined;
  const pattern = Object.entries(proposition.bindingPattern);
  if (pattern.some(([, path]) => path.length !== 1 || typeof path[0] !== "string")) return undefined;
  const named = new Set(pattern.map(([, path]) => path[0] as string));
  if (argumentsRead(proposition.when).some((argument) => !named.has(argument))) return undefined;
  return pattern.map(([variable, path]) => [variable, path[0] as string]);
}

/**
 * Where one constraint is judged: per context a call of its tool may be in, the scopes of its
 * targets, and the arguments that name the context's binding.
 */
type Contexts = { named: Record<string, Value>; scopes: Scope[] }[] | "somewhere not";

/**
 * The contexts a call of the constraint's tool can be judged in, whatever its other arguments:
 * one per binding of the proposition's entity and one for a binding not seen yet, unless the mask
 * keeps the argument that names it to the known ones (`masked`: `tool.argument`; no entity: one).
 * Undefined where they cannot be listed: a proposition over several entities, a binding pattern
 * below the top level, or a `when` that reads arguments other than the binding's.
 * `"somewhere not"`: the constraint does not apply in some context (it limits nothing).
 */
function contextsOf(
  judge: Judge,
  run: Run,
  constraint: ConstraintSpec,
  eventOf: (call: ProposedCall) => ToolCallEvent,
  masked: ReadonlySet<string>,
): Contexts | undefined {
  const proposition: PropositionSpec = constraint.on;
  const pattern = argumentPattern(proposition);
  if (!pattern) return undefined;
  const unseen = !(pattern.length === 1 && masked.has(`${proposition.tool}.${pattern[0]?.[1]}`));
  const entity = proposition.entities[0];
  const argumentsFor = (value: (variable: string) => Value) =>
    Object.fromEntries(pattern.map(([variable, argument]) => [argument, value(variable)]));
  const calls =
    entity === undefined
      ? [{}]
      : [
          ...run.bindings
            .filter((binding) => binding.entity === entity)
            .map((binding) => argumentsFor((variable) => binding.values[variable] ?? null)),
          // Argument values no binding can have, so the call introduces a new one.
          ...(unseen ? [argumentsFor((variable) => `\u0000unseen ${variable}`)] : []),
        ];
  const contexts: { named: Record<string, Value>; scopes: Scope[] }[] = [];
  for (const args of calls) {
    const event = eventOf({ name: proposition.tool, arguments: args });
    const targets = judge.constraintTargets(run, constraint, event);
    if (targets.length === 0) return "somewhere not";
    const at = run.atCall(event);
    contexts.push({ named: args, scopes: targets.map((bindings) => at.scopeFor(bindings, args)) });
  }
  return contexts;
}

/**
 * Per tool argument, the limits every block constraint on the tool puts on it whatever the
 * call's other arguments (see the file's head), met with the known bindings' values where a
 * rule blocks a new binding (`knownBindingValues`); only arguments with some limit are listed. A
 * limit nothing can meet is left out (the evaluator judges such calls). `only`: the tool's alone.
 */
export function argumentLimits(
  judge: Judge,
  run: Run,
  only?: string,
): { tool: string; argument: string; limits: ArgumentLimits }[] {
  const found = new Map<string, { tool: string; argument: string; limits: ArgumentLimits }>();
  const byTool = new Map<string, { constraint: ConstraintSpec; contexts: Contexts | undefined }[]>();
  // One event per call, so that the run at each call (new bindings and their instances) is built once.
  const events = new Map<string, ToolCallEvent>();
  const eventOf = (call: ProposedCall) => {
    const key = JSON.stringify([call.name, call.arguments]);
    let event = events.get(key);
    if (!event) {
      event = proposedEvent(call);
      events.set(key, event);
    }
    return event;
  };
  for (const constraint of judge.policy.constraints) {
    if (constraint.mode !== "block" || (only !== undefined && constraint.on.tool !== only)) continue;
    const list = byTool.get(constraint.on.tool) ?? [];
    list.push({ constraint, contexts: undefined });
    byTool.set(constraint.on.tool, list);
  }
  const knownValues = knownBindingValues(judge, run, eventOf);
  // An argument the mask keeps to the known bindings' values names no new binding: a call of the
  // tool is judged in a known binding's context only.
  const masked = new Set(
    knownValues.flatMap(({ tool, argument, values }) => (values.length > 0 ? [`${tool}.${argument}`] : [])),
  );
  for (const [toolName, constraints] of byTool) {
    const tool = judge.policy.tools.get(toolName);
    if (!tool) continue;
    for (const parameter of tool.parameters) {
      const reading = constraints.filter(({ constraint }) =>
        argumentsRead(constraint.require).includes(parameter.name),
      );
      if (reading.length === 0) continue;
      const contextsFor = (entry: (typeof reading)[number]) => {
        entry.contexts ??= contextsOf(judge, run, entry.constraint, eventOf, masked) ?? "somewhere not";
        return entry.contexts;
      };
      const limits = limitsOf(parameter.name, parameter.type, reading, contextsFor);
      if (!limits) continue;
      const given = givenLimits(tool.parameters, parameter, reading, contextsFor, limits);
      found.set(`${toolName}.${parameter.name}`, {
        tool: toolName,
        argument: parameter.name,
        limits: given ? { ...limits, given } : limits,
      });
    }
  }
  // A value outside the known bindings names a new one, which a rule blocks: met with what the
  // constraints allow (where nothing is left, every call is blocked anyway: theirs stay).
  for (const { tool, argument, values } of knownValues) {
    if (only !== undefined && tool !== only) continue;
    const key = `${tool}.${argument}`;
    const limits = found.get(key)?.limits ?? {};
    const oneOf = strings.meet(limits.oneOf ?? "any", values) as Value[];
    if (oneOf.length > 0) found.set(key, { tool, argument, limits: { ...limits, oneOf } });
  }
  return [...found.values()];
}

/**
 * Per tool argument that alone names the binding of an entity, where a call that names one not
 * seen yet breaks a block rule for good whatever its other arguments (tau2-retail's R5: an order
 * modified before it was seen pending): the values of the entity's bindings the run knows. The
 * run matches a written value to a binding by exact equality, so any other value names a new one.
 */
function knownBindingValues(
  judge: Judge,
  run: Run,
  eventOf: (call: ProposedCall) => ToolCallEvent,
): { tool: string; argument: string; values: Value[] }[] {
  const found: { tool: string; argument: string; values: Value[] }[] = [];
  for (const rule of judge.policy.rules) {
    const entity =
      rule.entities.length === 1 ? judge.policy.entities.get(rule.entities[0] as string) : undefined;
    if (rule.mode !== "block" || !entity || entity.variables.length !== 1) continue;
    const variable = entity.variables[0] as string;
    for (const tool of new Set(rule.propositions.map((proposition) => proposition.tool))) {
      const argument = namingArgument(
        rule.propositions.filter((proposition) => proposition.tool === tool),
        variable,
      );
      const type = judge.policy.tools.get(tool)?.parameters.find(({ name }) => name === argument)?.type;
      if (argument === undefined || !(type === "string" || typeof type === "object")) continue;
      const fresh = eventOf({ name: tool, arguments: { [argument]: `\u0000unseen ${variable}` } });
      if (!breaksNewBinding(run, rule, fresh)) continue;
      const values = run.bindings
        .filter((binding) => binding.entity === entity.name)
        .map((binding) => binding.values[variable] ?? null)
        .filter((value) => fitsParameterType(type, value));
      found.push({ tool, argument, values });
    }
  }
  return found;
}

/**
 * The argument through which a rule's propositions on one tool name the binding of the entity's
 * one variable, where the rule's letters at a call that names a new binding depend neither on
 * the call's other arguments nor on which new value it writes: each proposition over the entity
 * pins it by `a.<argument> == variable`, and every other part of its `when`, its `outcome`, and
 * a proposition without entities read no argument and no variable. Undefined where they do.
 */
function namingArgument(propositions: PropositionSpec[], variable: string): string | undefined {
  let argument: string | undefined;
  for (const proposition of propositions) {
    if (proposition.outcome && !known(proposition.outcome)) return undefined;
    if (proposition.entities.length === 0) {
      if (proposition.when && !known(proposition.when)) return undefined;
      continue;
    }
    const pattern = argumentPattern(proposition);
    const named = pattern?.length === 1 && pattern[0]?.[0] === variable ? pattern[0][1] : undefined;
    if (named === undefined || (argument !== undefined && named !== argument)) return undefined;
    const pins = (part: Expression) =>
      part.kind === "binary" &&
      part.operator === "==" &&
      [
        [part.left, part.right],
        [part.right, part.left],
      ].some(
        ([side, other]) =>
          isArgument(side as Expression, named) &&
          other?.kind === "reference" &&
          other.root === "variable" &&
          other.path.length === 1 &&
          other.path[0] === variable,
      );
    if (!conjuncts(proposition.when as Expression).every((part) => known(part) || pins(part)))
      return undefined;
    argument = named;
  }
  return argument;
}

/**
 * Whether a call that introduces a binding leaves the rule's instance of it permanently
 * violated, in every belief and every outcome case (then `decide` blocks the call).
 */
function breaksNewBinding(run: Run, rule: RuleSpec, call: ToolCallEvent): boolean {
  const index = run
    .atCall(call)
    .instances.findIndex(
      (instance) => instance.rule === rule && instance.bindings.some(({ id }) => id >= run.bindings.length),
    );
  if (index < 0) return false;
  return run
    .afterEach(
      call,
      run.expectedCases(call).map((outcomeCase) => [outcomeCase]),
    )
    .every((after) =>
      after.beliefs.every((belief) => rule.automaton.colour(belief[index] as number) === "PERM_VIOL"),
    );
}

/**
 * Per value an argument written before `parameter` takes in some known binding's context (the
 * one the decoder reads first, in the tool's order), the limits in the contexts it names, where
 * they are narrower than `joined`, the limits over every context. A constraint none of whose
 * contexts the value names keeps all of its contexts.
 */
function givenLimits<E extends { constraint: ConstraintSpec }>(
  parameters: readonly Parameter[],
  parameter: Parameter,
  reading: E[],
  contextsFor: (entry: E) => Contexts,
  joined: ArgumentLimits,
): ArgumentLimits["given"] {
  const before = parameters.slice(0, parameters.indexOf(parameter)).map(({ name }) => name);
  for (const argument of before) {
    const values: Value[] = [];
    for (const entry of reading) {
      const contexts = contextsFor(entry);
      if (contexts === "somewhere not") continue;
      for (const { named } of contexts) {
        const value = named[argument];
        if (typeof value === "string" && !value.startsWith("\u0000") && !values.includes(value))
          values.push(value);
      }
    }
    const cases = values.flatMap((value) => {
      const naming = (entry: E): Contexts => {
        const contexts = contextsFor(entry);
        if (contexts === "somewhere not") return contexts;
        const own = contexts.filter(({ named }) => named[argument] === value);
        return own.length > 0 ? own : contexts;
      };
      const limits = limitsOf(parameter.name, parameter.type, reading, naming);
      return limits && JSON.stringify(limits) !== JSON.stringify(joined) ? [{ value, limits }] : [];
    });
    if (cases.length > 0) return { argument, cases };
  }
  return undefined;
}

function limitsOf<E extends { constraint: ConstraintSpec }>(
  argument: string,
  type: FieldType,
  constraints: E[],
  contextsFor: (entry: E) => Contexts,
): ArgumentLimits | undefined {
  const value = (node: Expression) => isArgument(node, argument);
  if (type === "number" || type === "integer") {
    const allowed = fold(constraints, contextsFor, value, intervals);
    return allowed && numberLimits(allowed);
  }
  if (type === "array") {
    const length = (node: Expression) =>
      node.kind === "call" &&
      node.name === "len" &&
      node.arguments.length === 1 &&
      value(node.arguments[0] as Expression);
    const allowed = fold(constraints, contextsFor, length, intervals);
    const least = allowed && (allowed.lowOpen ? Math.floor(allowed.low) + 1 : Math.ceil(allowed.low));
    const items = (names: string[]) => (node: Expression) =>
      node.kind === "call" && names.includes(node.name) && value(node.arguments[0] as Expression);
    const among = fold(constraints, contextsFor, items(["subset", "submultiset"]), strings);
    const most = fold(constraints, contextsFor, items(["submultiset"]), counts);
    const partner = pairedWith(argument, constraints);
    const paired =
      partner &&
      fold(
        constraints,
        contextsFor,
        (node) => node.kind === "call" && node.name === "same_group" && isPairing(node, partner, argument),
        groups,
      );
    const limits: ArgumentLimits = {
      ...(least !== undefined && least >= 1 ? { minItems: least } : {}),
      ...(among && among !== "any" ? { itemsOneOf: among } : {}),
      ...(most && most !== "any" ? { itemsAtMost: most } : {}),
      ...(partner && paired && paired !== "any"
        ? { itemsPaired: { argument: partner, groups: paired } }
        : {}),
    };
    return Object.keys(limits).length > 0 ? limits : undefined;
  }
  if (type === "string" || typeof type === "object") {
    const allowed = fold(constraints, contextsFor, value, strings);
    return allowed && allowed !== "any" ? { oneOf: allowed } : undefined;
  }
  return undefined;
}

/**
 * The list argument whose items pair with this one's, position by position, in the first
 * `same_group(a.<partner>, a.<argument>, …)` of the constraints; undefined where none has one.
 */
function pairedWith(argument: string, constraints: { constraint: ConstraintSpec }[]): string | undefined {
  for (const { constraint } of constraints) {
    let partner: string | undefined;
    forEachNode(constraint.require, (node) => {
      if (partner !== undefined || node.kind !== "call" || node.name !== "same_group") return;
      const [first, second] = node.arguments;
      if (
        first?.kind === "reference" &&
        first.root === "arguments" &&
        first.path.length === 1 &&
        isArgument(second as Expression, argument)
      )
        partner = String(first.path[0]);
    });
    if (partner !== undefined && partner !== argument) return partner;
  }
  return undefined;
}

function isPairing(node: Expression & { kind: "call" }, partner: string, argument: string): boolean {
  const [first, second] = node.arguments;
  return isArgument(first as Expression, partner) && isArgument(second as Expression, argument);
}

/**
 * What the constraints together allow the argument: each must hold (meet); within one, any of
 * its contexts may be the call's (join), and in a context every target binding must hold it
 * (meet). Undefined when that is everything or nothing.
 */
function fold<E extends { constraint: ConstraintSpec }, T>(
  constraints: E[],
  contextsFor: (entry: E) => Contexts,
  subject: (node: Expression) => boolean,
  domain: Domain<T>,
): T | undefined {
  let allowed = domain.any;
  for (const entry of constraints) {
    const contexts = contextsFor(entry);
    if (contexts === "somewhere not") continue;
    let joined = domain.none;
    for (const { scopes } of contexts)
      joined = domain.join(
        joined,
        scopes.reduce(
          (met, scope) =>
            domain.meet(met, allowedWithEqualities(entry.constraint.require, subject, domain, scope)),
          domain.any,
        ),
      );
    // A constraint no value meets blocks every call anyway: it says nothing of this argument.
    if (!domain.isNone(joined)) allowed = domain.meet(allowed, joined);
  }
  return domain.isAny(allowed) || domain.isNone(allowed) ? undefined : allowed;
}

function numberLimits(allowed: Interval): ArgumentLimits {
  const limits: ArgumentLimits = {};
  if (allowed.low !== Number.NEGATIVE_INFINITY)
    limits[allowed.lowOpen ? "exclusiveMinimum" : "minimum"] = allowed.low;
  if (allowed.high !== Number.POSITIVE_INFINITY)
    limits[allowed.highOpen ? "exclusiveMaximum" : "maximum"] = allowed.high;
  return limits;
}
