import { holdsIn, type Scope, type Value, valuesEqual } from "../expression/index.js";
import {
  type AbstractMove,
  abstractMoves,
  type Policy,
  type PropositionSpec,
  type RuleSpec,
} from "../policy/index.js";
import type { Outcome, TaskCall, ToolCallEvent, Trace } from "./trace.js";

/** One value assignment of an entity's variables: a route, an order, a patient. */
export interface Binding {
  id: number;
  entity: string;
  values: Record<string, Value>;
  /** Introduced by the task (true) or first named by a tool call (false). */
  requested: boolean;
  /** The task call that introduced it, read by `task.<call>.<field>` for this binding. */
  taskCall: TaskCall | undefined;
}

interface CallContext {
  scope: Scope;
  when: Map<PropositionSpec, boolean>;
}

/** An instance a made call broke for good: the rule's verdict on the run, whatever follows. */
export interface BrokenInstance {
  instance: number;
  /** Position of the call in the run. */
  call: number;
}

/** A binding a call would introduce. */
interface NewBinding {
  entity: string;
  values: Record<string, Value>;
}

interface InstanceIndex {
  byBinding: Map<number, number[]>;
  global: number[];
  /** Instances whose rule reads every call: the empty letter changes its verdicts (`G(a -> X b)`). */
  everyCall: number[];
}

// Runs share their binding and instance arrays until one grows, so indexes are kept per array.
const instanceIndexes = new WeakMap<readonly Instance[], InstanceIndex>();
const valueIndexes = new WeakMap<readonly Binding[], Map<string, Binding[]>>();
/** A tool's outcome cases while its outcome is not known (they depend only on the policy). */
const abstractCases = new WeakMap<Policy, Map<string, OutcomeCase[]>>();

/**
 * A rule monitored for one binding of each of its entities. Its trace has one position per call of
 * the run; a call that is not an event of the instance (another tool, another binding) is a
 * position where none of its atoms holds. Rules whose automaton ignores such positions
 * (`Automaton.ignoresEmptyLetter`: `G(a -> O b)`, `F a`, …) are stepped on their events only,
 * which gives the same verdicts; the others (`G(a -> X b)`, `init`) on every call.
 */
export interface Instance {
  rule: RuleSpec;
  bindings: Binding[];
}

/** How a call's observation propositions resolve: one possible outcome. */
export interface OutcomeCase {
  /** `short`, `status confirmed`, … for explanations. */
  description: string;
  /** `o` for expressions (null when only the abstract outcome is known). */
  value: Value;
  /** For abstract outcomes: the outcome texts that hold. */
  abstract: AbstractMove | undefined;
}

/**
 * The monitor's state after a trace: the bindings, one automaton instance per rule and binding,
 * and the belief — every combination of automaton states the run may be in (more than one only
 * when some outcome could not be placed).
 */
export class Run {
  private constructor(
    readonly policy: Policy,
    readonly task: readonly TaskCall[],
    readonly bindings: readonly Binding[],
    readonly instances: readonly Instance[],
    readonly beliefs: readonly Int32Array[],
    readonly calls: readonly ToolCallEvent[],
    /** Per binding id: the calls that named it, with their outcomes. */
    private readonly histories: readonly (readonly ToolCallEvent[])[],
    /** Instances a made call broke for good (see `fromTrace`), with that call's position. */
    readonly broken: readonly BrokenInstance[] = [],
  ) {}

  static start(policy: Policy, task: readonly TaskCall[]): Run {
    let run = new Run(policy, task, [], [], [new Int32Array(0)], [], []);
    for (const [entityName, entity] of policy.entities) {
      for (const call of task) {
        for (const source of entity.sources) {
          if (source.taskCall !== call.name) continue;
          const values = Object.fromEntries(
            Object.entries(source.bind).map(([variable, field]) => [variable, call.arguments[field] ?? null]),
          );
          run = run.withBinding(entityName, values, true, call);
        }
      }
    }
    return run.withInstancesFor("all");
  }

  /**
   * The run after the calls that were made. A call that breaks an instance for good (a warn rule,
   * a call made unshielded, a trace a client sends) is recorded in `broken`, and the instance
   * keeps its state from before that call: it is re-armed, so it judges each later call for
   * what that call newly breaks instead of staying lost.
   */
  static fromTrace(policy: Policy, trace: Trace): Run {
    let run = Run.start(policy, trace.task);
    for (const call of trace.calls) run = run.afterMade(call);
    return run;
  }

  /** The rule's verdict on the run for an instance: never broken by a call, and accepting in every belief. */
  satisfies(index: number): boolean {
    const automaton = (this.instances[index] as Instance).rule.automaton;
    return (
      !this.broken.some((entry) => entry.instance === index) &&
      this.beliefs.every((belief) => automaton.isAccepting(belief[index] as number))
    );
  }

  /** The run after a call that was made (its outcome as known), re-armed as `fromTrace` says. */
  private afterMade(call: ToolCallEvent): Run {
    return this.stepped(call, [this.outcomeCases(call.name, call.outcome)], true)[0] as Run;
  }

  /** The run after `call`, for each of the given outcome cases (the belief grows if several). */
  after(call: ToolCallEvent, cases: readonly OutcomeCase[]): Run {
    return this.afterEach(call, [cases])[0] as Run;
  }

  /**
   * The runs after `call`, one per group of outcome cases. The groups share the bindings and
   * instances the call introduces (and so every cache keyed by them); only beliefs differ.
   */
  afterEach(call: ToolCallEvent, groups: readonly (readonly OutcomeCase[])[]): Run[] {
    return this.stepped(call, groups, false);
  }

  private stepped(call: ToolCallEvent, groups: readonly (readonly OutcomeCase[])[], rearm: boolean): Run[] {
    let run: Run = this;
    for (const binding of this.introducedBindings(call)) {
      run = run.withBinding(binding.entity, binding.values, false, undefined);
    }
    run = run.withInstancesFor(run.bindings.slice(this.bindings.length));
    const named = new Set(run.namedBindings(call).map((binding) => binding.id));
    const histories = run.histories.map((history, id) => (named.has(id) ? [...history, call] : history));
    const calls = [...run.calls, call];
    return groups.map((cases) => {
      const beliefs = new Map<string, Int32Array>();
      const broken = new Set<number>();
      for (const belief of run.beliefs) {
        for (const outcomeCase of cases) {
          const next = run.successor(belief, call, outcomeCase);
          if (rearm) run.rearm(call, belief, next, broken);
          beliefs.set(next.join(","), next);
        }
      }
      return new Run(
        run.policy,
        run.task,
        run.bindings,
        run.instances,
        [...beliefs.values()],
        calls,
        histories,
        [...run.broken, ...[...broken].map((instance) => ({ instance, call: run.calls.length }))],
      );
    });
  }

  /** Instances the call broke for good from `belief` go back to their state before it (and into `broken`). */
  private rearm(call: ToolCallEvent, belief: Int32Array, next: Int32Array, broken: Set<number>): void {
    for (const index of this.instancesFor(call)) {
      const automaton = (this.instances[index] as Instance).rule.automaton;
      const before = belief[index] as number;
      if (automaton.colour(next[index] as number) !== "PERM_VIOL" || automaton.colour(before) === "PERM_VIOL")
        continue;
      next[index] = before;
      broken.add(index);
    }
  }

  /** The joint state after one call and one outcome case, from one belief. */
  successor(belief: Int32Array, call: ToolCallEvent, outcomeCase: OutcomeCase): Int32Array {
    const next = Int32Array.from(belief);
    for (const index of this.instancesFor(call)) {
      const instance = this.instances[index] as Instance;
      const letter = this.lettersFor(instance, call, [outcomeCase])?.[0];
      if (!letter) continue;
      next[index] = instance.rule.automaton.step(
        belief[index] as number,
        instance.rule.automaton.letterMask(letter),
      );
    }
    return next;
  }

  /**
   * Instances a call steps: those of the bindings it names, those of rules without entities, and
   * those whose rule reads every call.
   */
  instancesFor(call: ToolCallEvent): number[] {
    let indices = this.instancesByCall.get(call);
    if (!indices) {
      const named = this.namedBindings(call);
      const global = this.globalInstances();
      const everyCall = this.everyCallInstances();
      if (named.length === 0 && everyCall.length === 0) indices = global;
      else if (named.length === 1 && global.length === 0 && everyCall.length === 0)
        indices = this.instancesOf(named[0] as Binding);
      else {
        const found = new Set([
          ...global,
          ...everyCall,
          ...named.flatMap((binding) => this.instancesOf(binding)),
        ]);
        indices = [...found].sort((left, right) => left - right);
      }
      this.instancesByCall.set(call, indices);
    }
    return indices;
  }

  private readonly instancesByCall = new WeakMap<ToolCallEvent, number[]>();

  /** Indices of the instances monitoring a binding. */
  instancesOf(binding: Binding): number[] {
    return this.instanceIndex().byBinding.get(binding.id) ?? [];
  }

  /** Indices of the instances of rules without entities. */
  globalInstances(): number[] {
    return this.instanceIndex().global;
  }

  /** Indices of the instances whose rule reads every call of the run (see `Instance`). */
  everyCallInstances(): number[] {
    return this.instanceIndex().everyCall;
  }

  private instanceIndex(): InstanceIndex {
    let index = instanceIndexes.get(this.instances);
    if (!index) {
      index = { byBinding: new Map(), global: [], everyCall: [] };
      for (const [position, instance] of this.instances.entries()) {
        if (instance.bindings.length === 0) index.global.push(position);
        if (readsEveryCall(instance.rule)) index.everyCall.push(position);
        for (const binding of instance.bindings) {
          index.byBinding.set(binding.id, [...(index.byBinding.get(binding.id) ?? []), position]);
        }
      }
      instanceIndexes.set(this.instances, index);
    }
    return index;
  }

  /**
   * Per outcome case, the rule's propositions a call makes true for an instance; undefined when
   * the call is not an event of the instance (it names none of the instance's bindings) and the
   * rule skips such calls, else the empty letter for such a call.
   */
  lettersFor(instance: Instance, call: ToolCallEvent, cases: readonly OutcomeCase[]): string[][] | undefined {
    let context: CallContext | undefined;
    let letters: string[][] | undefined;
    for (const proposition of instance.rule.propositions) {
      if (proposition.tool !== call.name) continue;
      context ??= this.callContext(call, instance.bindings);
      const { scope, when } = context;
      if (proposition.when) {
        let holds = when.get(proposition);
        if (holds === undefined) {
          holds = holdsIn(proposition.when, scope);
          when.set(proposition, holds);
        }
        if (!holds) continue;
      }
      letters ??= cases.map(() => []);
      cases.forEach((outcomeCase, caseIndex) => {
        if (outcomeHolds(proposition, outcomeCase, scope)) letters?.[caseIndex]?.push(proposition.key);
      });
    }
    if (letters === undefined && readsEveryCall(instance.rule)) return cases.map(() => []);
    return letters;
  }

  /** A call's scope for a set of bindings, and its propositions' `when` verdicts there (the rules of one binding share them). */
  private callContext(call: ToolCallEvent, bindings: readonly Binding[]): CallContext {
    let byBindings = this.contexts.get(call);
    if (!byBindings) {
      byBindings = new Map();
      this.contexts.set(call, byBindings);
    }
    const key = bindings.map((binding) => binding.id).join(",");
    let context = byBindings.get(key);
    if (!context) {
      context = { scope: this.scopeFor(bindings, call.arguments), when: new Map() };
      byBindings.set(key, context);
    }
    return context;
  }

  private readonly contexts = new WeakMap<ToolCallEvent, Map<string, CallContext>>();

  /** The possible outcomes of a call of `tool`, given what is known of its outcome. */
  outcomeCases(tool: string, outcome: Outcome): readonly OutcomeCase[] {
    if (outcome.kind === "label") {
      return [
        { description: outcome.label ?? "no label", value: { label: outcome.label }, abstract: undefined },
      ];
    }
    if (outcome.kind === "json")
      return [{ description: "result", value: outcome.value, abstract: undefined }];
    const byTool = abstractCases.get(this.policy) ?? new Map<string, OutcomeCase[]>();
    abstractCases.set(this.policy, byTool);
    let known = byTool.get(tool);
    if (!known) {
      const spec = this.policy.tools.get(tool);
      const cases = new Map<string, OutcomeCase>();
      for (const move of spec ? abstractMoves(spec, [...this.policy.propositions.values()]) : []) {
        const outcomeCase = outcomeCaseOf(move);
        if (!cases.has(outcomeCase.description)) cases.set(outcomeCase.description, outcomeCase);
      }
      known = spec ? [...cases.values()] : [{ description: "result", value: null, abstract: undefined }];
      byTool.set(tool, known);
    }
    return known;
  }

  /** Expression scope for a set of bindings: their variables, their task call, their history. */
  scopeFor(bindings: readonly Binding[], args: Record<string, Value>): Scope {
    const variables: Record<string, Value> = {};
    let task = this.taskFields();
    for (const binding of bindings) {
      Object.assign(variables, binding.values);
      if (binding.taskCall) task = { ...task, [binding.taskCall.name]: binding.taskCall.arguments };
    }
    return { arguments: args, variables, task, history: this.historyFunctions(bindings) };
  }

  private taskFieldsCache: Record<string, Value> | undefined;

  /** `task.<call>` for calls not tied to a binding: the first task call of each name. */
  private taskFields(): Record<string, Value> {
    if (!this.taskFieldsCache) {
      const task: Record<string, Value> = {};
      for (const call of this.task) if (!(call.name in task)) task[call.name] = call.arguments;
      this.taskFieldsCache = task;
    }
    return this.taskFieldsCache;
  }

  /** History functions over the calls that named `bindings` (all calls for rules without entities), read on demand. */
  private historyFunctions(bindings: readonly Binding[]): NonNullable<Scope["history"]> {
    let cached: readonly ToolCallEvent[] | undefined;
    const calls = (): readonly ToolCallEvent[] => {
      cached ??=
        bindings.length === 0 ? this.calls : bindings.flatMap((binding) => this.histories[binding.id] ?? []);
      return cached;
    };
    const outcomeValue = (event: ToolCallEvent): Value =>
      event.outcome.kind === "json"
        ? event.outcome.value
        : event.outcome.kind === "label"
          ? { label: event.outcome.label }
          : null;
    return {
      last: (tool) => {
        const event = calls().findLast((candidate) => candidate.name === tool);
        return event ? outcomeValue(event) : null;
      },
      held: (name) => {
        const proposition = this.policy.propositions.get(name);
        if (!proposition) return false;
        const variables = Object.assign({}, ...bindings.map((binding) => binding.values));
        return calls().some((event) => {
          if (event.name !== proposition.tool) return false;
          const scope: Scope = { arguments: event.arguments, variables, outcome: outcomeValue(event) };
          return (
            (!proposition.when || holdsIn(proposition.when, scope)) &&
            (!proposition.outcome || holdsIn(proposition.outcome, scope))
          );
        });
      },
      count: (tool) => calls().filter((event) => event.name === tool).length,
      values: (tool, argument) =>
        calls()
          .filter((event) => event.name === tool)
          .map((event) => event.arguments[argument] ?? null),
    };
  }

  /** Whether a call names a binding: some proposition of its tool over the binding's entity holds for it. */
  names(binding: Binding, call: ToolCallEvent): boolean {
    return this.namedBindings(call).includes(binding);
  }

  /**
   * The bindings a call names. Where a proposition's `when` pins every variable of its entity
   * (`a.origin == x && a.destination == y`), only the binding with those values can match, so it
   * is looked up instead of trying every binding.
   */
  namedBindings(call: ToolCallEvent): Binding[] {
    let named = this.namedByCall.get(call);
    if (named) return named;
    const found = new Set<Binding>();
    for (const proposition of this.policy.propositions.values()) {
      if (proposition.tool !== call.name) continue;
      for (const entityName of proposition.entities) {
        const entity = this.policy.entities.get(entityName);
        if (!entity) continue;
        const pinned = entity.variables.every((variable) => variable in proposition.bindingPattern);
        const candidates = pinned
          ? this.bindingsByValues(entityName, patternValues(proposition, entity.variables, call.arguments))
          : this.bindings.filter((binding) => binding.entity === entityName);
        for (const binding of candidates) {
          if (found.has(binding)) continue;
          if (!proposition.when || holdsIn(proposition.when, this.scopeFor([binding], call.arguments)))
            found.add(binding);
        }
      }
    }
    named = [...found].sort((left, right) => left.id - right.id);
    this.namedByCall.set(call, named);
    return named;
  }

  private readonly namedByCall = new WeakMap<ToolCallEvent, Binding[]>();
  private bindingsByValues(entity: string, values: Record<string, Value>): Binding[] {
    let index = valueIndexes.get(this.bindings);
    if (!index) {
      index = new Map();
      for (const binding of this.bindings) {
        const key = `${binding.entity}\u0000${canonicalJson(binding.values)}`;
        index.set(key, [...(index.get(key) ?? []), binding]);
      }
      valueIndexes.set(this.bindings, index);
    }
    return index.get(`${entity}\u0000${canonicalJson(values)}`) ?? [];
  }

  /** Bindings a call names that do not exist yet, read through the propositions' binding patterns. */
  introducedBindings(call: ToolCallEvent): readonly NewBinding[] {
    const known = this.introducedByCall.get(call);
    if (known) return known;
    const found: NewBinding[] = [];
    for (const proposition of this.policy.propositions.values()) {
      if (proposition.tool !== call.name || proposition.entities.length !== 1) continue;
      const entity = this.policy.entities.get(proposition.entities[0] as string);
      if (!entity?.variables.every((variable) => variable in proposition.bindingPattern)) continue;
      const values = patternValues(proposition, entity.variables, call.arguments);
      const seen =
        this.bindingsByValues(entity.name, values).length > 0 ||
        found.some((binding) => binding.entity === entity.name && valuesEqual(binding.values, values));
      if (!seen) found.push({ entity: entity.name, values });
    }
    this.introducedByCall.set(call, found);
    return found;
  }

  private readonly introducedByCall = new WeakMap<ToolCallEvent, NewBinding[]>();

  private withBinding(
    entity: string,
    values: Record<string, Value>,
    requested: boolean,
    taskCall: TaskCall | undefined,
  ): Run {
    const binding: Binding = { id: this.bindings.length, entity, values, requested, taskCall };
    const bindings = [...this.bindings, binding];
    return new Run(
      this.policy,
      this.task,
      bindings,
      this.instances,
      this.beliefs,
      this.calls,
      [...this.histories, []],
      this.broken,
    );
  }

  /** Adds an instance per rule and binding combination that involves one of `fresh` (or all of them). */
  private withInstancesFor(fresh: readonly Binding[] | "all"): Run {
    if (fresh !== "all" && fresh.length === 0) return this;
    const added: Instance[] = [];
    const freshIds = new Set(fresh === "all" ? [] : fresh.map((binding) => binding.id));
    for (const rule of this.policy.rules) {
      const choices = rule.entities.map((entity) =>
        this.bindings.filter((binding) => binding.entity === entity && appliesTo(rule, binding)),
      );
      for (const combination of cartesian(choices)) {
        if (fresh === "all" || combination.some((binding) => freshIds.has(binding.id))) {
          added.push({ rule, bindings: combination });
        }
      }
    }
    if (added.length === 0) return this;
    const beliefs = this.beliefs.map((belief) => {
      const next = new Int32Array(belief.length + added.length);
      next.set(belief);
      added.forEach((instance, index) => {
        next[belief.length + index] = startState(instance.rule, this.calls.length);
      });
      return next;
    });
    return new Run(
      this.policy,
      this.task,
      this.bindings,
      [...this.instances, ...added],
      beliefs,
      this.calls,
      this.histories,
      this.broken,
    );
  }
}

export function describeBinding(binding: Binding): string {
  const values = Object.entries(binding.values).map(
    ([variable, value]) => `${variable}=${JSON.stringify(value)}`,
  );
  return `${binding.entity}(${values.join(", ")})`;
}

export function describeInstance(instance: Instance): string {
  return instance.bindings.length === 0
    ? instance.rule.id
    : `${instance.rule.id} for ${instance.bindings.map(describeBinding).join(", ")}`;
}

/**
 * The outcome an abstract move stands for: a text tool's label (exact), or which of the tool's
 * outcome predicates hold (abstract, for JSON tools).
 */
export function outcomeCaseOf(move: AbstractMove): OutcomeCase {
  if (move.label !== undefined) {
    return { description: move.label ?? "no label", value: { label: move.label }, abstract: undefined };
  }
  const description = [...move.outcomeTrue].sort().join(" && ") || "no outcome condition holds";
  return { description, value: null, abstract: move };
}

function outcomeHolds(proposition: PropositionSpec, outcomeCase: OutcomeCase, scope: Scope): boolean {
  if (!proposition.outcome) return true;
  if (outcomeCase.abstract) return outcomeCase.abstract.outcomeTrue.has(proposition.outcomeText as string);
  return holdsIn(proposition.outcome, { ...scope, outcome: outcomeCase.value });
}

/** The values a call's arguments give an entity's variables through a proposition's binding pattern. */
function patternValues(
  proposition: PropositionSpec,
  variables: readonly string[],
  args: Record<string, Value>,
): Record<string, Value> {
  return Object.fromEntries(
    variables.map((variable) => [variable, readPath(args, proposition.bindingPattern[variable] ?? [])]),
  );
}

/** JSON with sorted keys, so equal values give equal text. */
function canonicalJson(value: Value): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as Value)}`).join(",")}}`;
}

function readPath(value: Value, path: readonly (string | number)[]): Value {
  let current: Value = value;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return null;
    current = (current as Record<string, Value>)[segment as string] ?? null;
  }
  return current;
}

function cartesian<T>(choices: readonly (readonly T[])[]): T[][] {
  return choices.reduce<T[][]>(
    (product, options) => product.flatMap((prefix) => options.map((option) => [...prefix, option])),
    [[]],
  );
}

function appliesTo(rule: RuleSpec, binding: Binding): boolean {
  return rule.appliesTo === "all" || binding.requested === (rule.appliesTo === "requested");
}

/** Whether a rule's instances read every call (the empty letter changes its verdicts), memoized by its automaton. */
function readsEveryCall(rule: RuleSpec): boolean {
  return !rule.automaton.ignoresEmptyLetter();
}

/**
 * The state of an instance that starts after `calls` calls: none of them concerned its binding,
 * so it has read that many empty letters (a no-op for rules that ignore them).
 */
function startState(rule: RuleSpec, calls: number): number {
  const automaton = rule.automaton;
  let state = automaton.initial;
  if (!readsEveryCall(rule)) return state;
  for (let index = 0; index < calls; index++) {
    const next = automaton.step(state, 0);
    if (next === state) break;
    state = next;
  }
  return state;
}
