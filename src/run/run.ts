import { listItems, type PersistentList, withItem } from "../base/persistent-list.js";
import { holdsIn, type Scope, type Value, valuesEqual } from "../expression/index.js";
import type { Policy, PropositionSpec } from "../policy/index.js";
import { type Binding, BindingTable, type NewBinding, outputBindings, patternValues } from "./bindings.js";
import { historyFunctions } from "./history.js";
import {
  appliesTo,
  cartesian,
  groupBy,
  type Instance,
  InstanceTable,
  readsEveryCall,
  startState,
} from "./instances.js";
import { type OutcomeCase, OutcomeCatalog, outcomeHolds } from "./outcomes.js";
import { newTaskCalls, type Outcome, type TaskCall, type ToolCallEvent, type Trace } from "./trace.js";

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

/** Calls as a persistent list: a run after a call adds one node and shares the rest. */
type CallList = PersistentList<ToolCallEvent>;

/** What a run is made of; a run after a call shares every part the call does not change. */
interface RunParts {
  policy: Policy;
  task: readonly TaskCall[];
  /** Shared until a binding is added. */
  bindings: BindingTable;
  /** Shared until an instance is added. */
  instances: InstanceTable;
  beliefs: readonly Int32Array[];
  calls: CallList | undefined;
  /** Per binding id: the calls that named it, with their outcomes. */
  histories: readonly (CallList | undefined)[];
  /** Instances a made call broke for good (see `fromTrace`), with that call's position. */
  broken: readonly BrokenInstance[];
  /** Shared by every run derived from one `start`. */
  outcomes: OutcomeCatalog;
  /** Per tool that is not volatile: the made calls whose outcome is known, newest first (see `observed`). */
  observations: ReadonlyMap<string, CallList>;
  /** Whether a block-mode instance did not accept at the start or after some made call (see `hadDuty`). */
  hadDuty: boolean;
}

/**
 * The monitor's state after a trace: the bindings, one automaton instance per rule and binding,
 * and the belief — every combination of automaton states the run may be in (more than one only
 * when some outcome could not be placed).
 */
export class Run {
  readonly policy: Policy;
  readonly task: readonly TaskCall[];
  readonly beliefs: readonly Int32Array[];
  /** Instances a made call broke for good (see `fromTrace`), with that call's position. */
  readonly broken: readonly BrokenInstance[];

  private constructor(private readonly parts: RunParts) {
    this.policy = parts.policy;
    this.task = parts.task;
    this.beliefs = parts.beliefs;
    this.broken = parts.broken;
  }

  /** The calls made, in order (listed when first asked: most questions need only their count). */
  get calls(): readonly ToolCallEvent[] {
    this.callArray ??= listItems(this.parts.calls);
    return this.callArray;
  }

  private callArray: readonly ToolCallEvent[] | undefined;

  /** How many calls were made. */
  get callCount(): number {
    return this.parts.calls?.length ?? 0;
  }

  get bindings(): readonly Binding[] {
    return this.parts.bindings.bindings;
  }

  get instances(): readonly Instance[] {
    return this.parts.instances.instances;
  }

  /**
   * Whether the run has had a duty: a block-mode instance that did not accept at the start or
   * after some made call (and may accept now). A run that never had one was asked nothing the
   * policy knows, so ending it is allowed but no progress. Hypothetical steps (`after`) keep the
   * flag of the run they start from: only `next` on a run of made calls reads it.
   */
  get hadDuty(): boolean {
    return this.parts.hadDuty;
  }

  static start(policy: Policy, given: readonly TaskCall[]): Run {
    const task = newTaskCalls([], given);
    let run = new Run({
      policy,
      task,
      bindings: new BindingTable([]),
      instances: new InstanceTable([]),
      beliefs: [new Int32Array(0)],
      calls: undefined,
      histories: [],
      broken: [],
      outcomes: new OutcomeCatalog(policy),
      observations: new Map(),
      hadDuty: false,
    });
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
    run = run.withInstancesFor("all");
    return new Run({ ...run.parts, hadDuty: hasOpenDuty(run.instances, run.beliefs) });
  }

  /**
   * The run after the calls that were made. A call that breaks an instance for good (a warn rule,
   * a call made unshielded, a trace a client sends) is recorded in `broken`, and the instance
   * keeps its state from before that call: it is re-armed, so it judges each later call for
   * what that call newly breaks instead of staying lost.
   */
  static fromTrace(policy: Policy, trace: Trace): Run {
    let run = Run.start(policy, trace.task);
    for (const call of trace.calls) run = run.made(call);
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

  /** Instances permanently violated in every belief: nothing the agent does can repair them. */
  lostInstances(): ReadonlySet<number> {
    if (!this.lost) {
      const found = new Set<number>();
      this.instances.forEach((instance, index) => {
        const automaton = instance.rule.automaton;
        if (this.beliefs.every((belief) => automaton.colour(belief[index] as number) === "PERM_VIOL"))
          found.add(index);
      });
      this.lost = found;
    }
    return this.lost;
  }

  private lost: ReadonlySet<number> | undefined;

  /**
   * The run after a call that was made (its outcome as known), re-armed as `fromTrace` says:
   * one step, so a monitor extends its run by each new call instead of rebuilding it.
   */
  made(call: ToolCallEvent): Run {
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

  /**
   * The run as a call sees it: with the bindings the call introduces (and their instances), and
   * its history still without the call. Everything that judges a call reads it here — the rules'
   * letters, which bindings the call names, a constraint's `when` and `require` — so history
   * functions read the calls made before it. This run itself when the call introduces nothing.
   */
  atCall(call: ToolCallEvent): Run {
    let run = this.atCallCache.get(call);
    if (!run) {
      run = this;
      for (const binding of this.introducedBindings(call)) {
        run = run.withBinding(binding.entity, binding.values, false, undefined);
      }
      run = run.withInstancesFor(run.bindings.slice(this.bindings.length));
      this.atCallCache.set(call, run);
    }
    return run;
  }

  private readonly atCallCache = new WeakMap<ToolCallEvent, Run>();

  private stepped(call: ToolCallEvent, groups: readonly (readonly OutcomeCase[])[], rearm: boolean): Run[] {
    const run = this.atCall(call);
    const named = new Set(run.namedBindings(call).map((binding) => binding.id));
    const shared = this.policy.tools.get(call.name)?.shared === true;
    const histories = run.parts.histories.map((history, id) =>
      shared || named.has(id) ? withItem(history, call) : history,
    );
    const calls = withItem(run.parts.calls, call);
    const observations = rearm
      ? withObservation(run.parts.observations, call, this.policy)
      : run.parts.observations;
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
      const after = [...beliefs.values()];
      return new Run({
        ...run.parts,
        beliefs: after,
        calls,
        histories,
        observations,
        broken:
          broken.size === 0
            ? run.broken
            : [...run.broken, ...[...broken].map((instance) => ({ instance, call: run.callCount }))],
        hadDuty: run.hadDuty || (rearm && hasOpenDuty(run.instances, after)),
      });
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
    return this.parts.instances.of(binding);
  }

  /** Indices of the instances of rules without entities. */
  globalInstances(): number[] {
    return this.parts.instances.global();
  }

  /** Indices of the instances whose rule reads every call of the run (see `Instance`). */
  everyCallInstances(): number[] {
    return this.parts.instances.everyCall();
  }

  /**
   * Per outcome case, the rule's propositions a call makes true for an instance; undefined when
   * the call is not an event of the instance (it names none of the instance's bindings) and the
   * rule skips such calls, else the empty letter for such a call.
   */
  lettersFor(
    instance: Instance,
    call: ToolCallEvent,
    cases: readonly OutcomeCase[],
    given?: CallContext,
  ): string[][] | undefined {
    let context = given;
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
        {
          description: outcome.label ?? "no label",
          value: { label: outcome.label, ...outcome.fields },
          abstract: undefined,
        },
      ];
    }
    if (outcome.kind === "json")
      return [{ description: "result", value: outcome.value, abstract: undefined }];
    return this.parts.outcomes.casesOf(tool);
  }

  /**
   * The outcome cases a call not answered yet may have: what the latest made call it repeats
   * (`observed`) returned, where that is known and the tool is not volatile (an observation is a
   * fact: the same call returns it again), else every case of its tool.
   */
  expectedCases(call: ToolCallEvent): readonly OutcomeCase[] {
    if (call.outcome.kind !== "pending") return this.outcomeCases(call.name, call.outcome);
    const observed = this.observed(call.name, call.arguments);
    return observed ? this.observedCases(observed) : this.parts.outcomes.casesOf(call.name);
  }

  /**
   * The latest made call of `tool` whose outcome is known, of a tool that is not volatile, that
   * gave every argument of `args` the same value: the call `args` repeats. Values it leaves open
   * are taken as that call gave them (a login for the user, its password no entity's, is the
   * login the run made, not one with another password that might fail); a call without arguments
   * repeats only a call without arguments.
   */
  observed(tool: string, args: Record<string, Value>): ToolCallEvent | undefined {
    const given = Object.entries(args);
    for (let node = this.parts.observations.get(tool); node; node = node.before) {
      const made = node.item.arguments;
      if (
        given.length === 0
          ? Object.keys(made).length === 0
          : given.every(([name, value]) => valuesEqual(made[name] ?? null, value))
      )
        return node.item;
    }
    return undefined;
  }

  /** Whether some made call's outcome is an observation (see `observed`). */
  get observes(): boolean {
    return this.parts.observations.size > 0;
  }

  /** A made call's outcome as its one case, one array per call (moves are memoized by the array). */
  observedCases(call: ToolCallEvent): readonly OutcomeCase[] {
    const cases = observedCaseArrays.get(call) ?? this.outcomeCases(call.name, call.outcome);
    observedCaseArrays.set(call, cases);
    return cases;
  }

  /** Expression scope for a set of bindings: their variables, their task call, their history. */
  scopeFor(bindings: readonly Binding[], args: Record<string, Value>, before = this.callCount): Scope {
    const variables: Record<string, Value> = {};
    let task = this.taskFields();
    for (const binding of bindings) {
      Object.assign(variables, binding.values);
      // Copied only when the binding's own task call is not the one `task` already holds (a copy
      // costs as much as the task has calls).
      if (binding.taskCall && task[binding.taskCall.name] !== binding.taskCall.arguments)
        task = { ...task, [binding.taskCall.name]: binding.taskCall.arguments };
    }
    let calls: readonly ToolCallEvent[] | undefined;
    // The calls before `before` that named `bindings` (all calls for rules without entities), read on demand.
    const history = historyFunctions(this.policy, bindings, task, () => {
      calls ??= this.historyOf(bindings, before);
      return calls;
    });
    return { arguments: args, variables, task, history };
  }

  /**
   * The calls before position `before` that named any of `bindings`, and those of shared tools
   * (every call for none), in run order.
   */
  private historyOf(bindings: readonly Binding[], before: number): readonly ToolCallEvent[] {
    const whole = before === this.callCount;
    if (bindings.length === 0) return whole ? this.calls : this.calls.slice(0, before);
    if (bindings.length === 1 && whole) {
      const id = (bindings[0] as Binding).id;
      let history = this.historyArrays.get(id);
      if (!history) {
        history = listItems(this.parts.histories[id]);
        this.historyArrays.set(id, history);
      }
      return history;
    }
    const named = new Set(bindings.flatMap((binding) => listItems(this.parts.histories[binding.id])));
    return this.calls.slice(0, before).filter((call) => named.has(call));
  }

  /** Per binding id, its history listed (see `historyOf`). */
  private readonly historyArrays = new Map<number, readonly ToolCallEvent[]>();

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

  /** Whether a call names a binding: some proposition of its tool over the binding's entity holds for it. */
  names(binding: Binding, call: ToolCallEvent): boolean {
    return this.namedBindings(call).includes(binding);
  }

  /**
   * The bindings a call names: for each proposition of its tool, the bindings (one per entity of
   * the proposition) for which its `when` holds. Where the `when` pins every variable of an entity
   * (`a.origin == x && a.destination == y`), only the binding with those values can match, so it
   * is looked up instead of trying every binding.
   */
  namedBindings(call: ToolCallEvent): Binding[] {
    let named = this.namedByCall.get(call);
    if (named) return named;
    const found = new Set<Binding>();
    for (const proposition of this.policy.propositions.values()) {
      if (proposition.tool !== call.name || proposition.entities.length === 0) continue;
      const choices = proposition.entities.map((entityName) =>
        this.candidateBindings(proposition, entityName, call),
      );
      for (const combination of cartesian(choices)) {
        if (combination.every((binding) => found.has(binding))) continue;
        if (!proposition.when || holdsIn(proposition.when, this.scopeFor(combination, call.arguments)))
          for (const binding of combination) found.add(binding);
      }
    }
    named = [...found].sort((left, right) => left.id - right.id);
    this.namedByCall.set(call, named);
    return named;
  }

  /** The bindings of one of a proposition's entities a call may name (see `namedBindings`). */
  private candidateBindings(
    proposition: PropositionSpec,
    entityName: string,
    call: ToolCallEvent,
  ): Binding[] {
    const entity = this.policy.entities.get(entityName);
    if (!entity) return [];
    return pinsEntity(proposition, entity.variables)
      ? this.pinnedBindings(proposition, entityName, call.arguments)
      : this.bindings.filter((binding) => binding.entity === entityName);
  }

  /** The binding (at most one) of an entity a proposition pins that arguments name through its binding pattern. */
  pinnedBindings(proposition: PropositionSpec, entityName: string, args: Record<string, Value>): Binding[] {
    const variables = this.policy.entities.get(entityName)?.variables ?? [];
    return this.parts.bindings.withValues(entityName, patternValues(proposition, variables, args));
  }

  private readonly namedByCall = new WeakMap<ToolCallEvent, Binding[]>();

  /** Bindings a call names that do not exist yet, read through the propositions' binding patterns. */
  introducedBindings(call: ToolCallEvent): readonly NewBinding[] {
    const known = this.introducedByCall.get(call);
    if (known) return known;
    const found: NewBinding[] = [];
    const add = (binding: NewBinding): void => {
      const seen =
        this.parts.bindings.withValues(binding.entity, binding.values).length > 0 ||
        found.some((other) => other.entity === binding.entity && valuesEqual(other.values, binding.values));
      if (!seen) found.push(binding);
    };
    for (const proposition of this.policy.propositions.values()) {
      if (proposition.tool !== call.name) continue;
      for (const entityName of proposition.entities) {
        const entity = this.policy.entities.get(entityName);
        if (!entity || !pinsEntity(proposition, entity.variables)) continue;
        add({ entity: entity.name, values: patternValues(proposition, entity.variables, call.arguments) });
      }
    }
    for (const binding of outputBindings(this.policy, call)) add(binding);
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
    return new Run({
      ...this.parts,
      bindings: this.parts.bindings.with(binding),
      histories: [...this.parts.histories, this.sharedHistory()],
    });
  }

  /** The calls of shared tools made so far: where a binding's history starts. */
  private sharedHistory(): CallList | undefined {
    let history: CallList | undefined;
    for (const call of listItems(this.parts.calls))
      if (this.policy.tools.get(call.name)?.shared) history = withItem(history, call);
    return history;
  }

  /** Adds an instance per rule and binding combination that involves one of `fresh` (or all of them). */
  private withInstancesFor(fresh: readonly Binding[] | "all"): Run {
    if (fresh !== "all" && fresh.length === 0) return this;
    const added: Instance[] = [];
    const freshIds = new Set(fresh === "all" ? [] : fresh.map((binding) => binding.id));
    // By entity once: per rule, a scan of every binding would cost rules × bindings.
    const bindingsOf = groupBy(this.bindings, (binding) => binding.entity);
    for (const rule of this.policy.rules) {
      const choices = rule.entities.map((entity) => bindingsOf.get(entity) ?? []);
      for (const combination of cartesian(choices)) {
        if (
          (fresh === "all" || combination.some((binding) => freshIds.has(binding.id))) &&
          appliesTo(rule, combination, this.policy)
        ) {
          added.push({ rule, bindings: combination });
        }
      }
    }
    if (added.length === 0) return this;
    const broken: BrokenInstance[] = [];
    // Per added instance, the states it may be in after the calls so far.
    const starts = added.map((instance, index) => {
      if (!instance.bindings.some((binding) => (this.parts.histories[binding.id]?.length ?? 0) > 0))
        return [startState(instance.rule, this.callCount)];
      const replay = this.replay(instance);
      if (replay.brokenAt !== undefined)
        broken.push({ instance: this.instances.length + index, call: replay.brokenAt });
      return replay.states;
    });
    const beliefs = new Map<string, Int32Array>();
    for (const belief of this.beliefs) {
      for (const states of cartesian(starts)) {
        const next = new Int32Array(belief.length + added.length);
        next.set(belief);
        next.set(states, belief.length);
        beliefs.set(next.join(","), next);
      }
    }
    return new Run({
      ...this.parts,
      instances: new InstanceTable([...this.instances, ...added]),
      beliefs: [...beliefs.values()],
      broken: [...this.broken, ...broken],
    });
  }

  /**
   * The states an instance added now would be in had it been monitored from the start: it
   * combines a new binding with bindings that earlier calls named (a refund of a new order of a
   * customer verified before), so it reads the calls made so far as `fromTrace` does (re-armed
   * where one broke it). It does not know which belief each state goes with: every belief takes
   * each of them, which can only block more.
   */
  private replay(instance: Instance): { states: number[]; brokenAt?: number } {
    const automaton = instance.rule.automaton;
    let states = [startState(instance.rule, 0)];
    let brokenAt: number | undefined;
    this.calls.forEach((call, position) => {
      const context = { scope: this.scopeFor(instance.bindings, call.arguments, position), when: new Map() };
      const letters = this.lettersFor(instance, call, this.outcomeCases(call.name, call.outcome), context);
      if (!letters) return;
      const next = new Set<number>();
      for (const state of states) {
        for (const letter of letters) {
          const after = automaton.step(state, automaton.letterMask(letter));
          const breaks = automaton.colour(after) === "PERM_VIOL" && automaton.colour(state) !== "PERM_VIOL";
          if (breaks) brokenAt ??= position;
          next.add(breaks ? state : after);
        }
      }
      states = [...next];
    });
    return brokenAt === undefined ? { states } : { states, brokenAt };
  }
}

const observedCaseArrays = new WeakMap<ToolCallEvent, readonly OutcomeCase[]>();

/** The observations with a made call added, where its outcome is known and its tool not volatile. */
function withObservation(
  observations: ReadonlyMap<string, CallList>,
  call: ToolCallEvent,
  policy: Policy,
): ReadonlyMap<string, CallList> {
  // A text output none of the labels fit (an error, "no route") told nothing: asking again may tell.
  const known =
    (call.outcome.kind === "label" && call.outcome.label !== null) || call.outcome.kind === "json";
  const tool = policy.tools.get(call.name);
  if (!known || !tool || tool.volatile) return observations;
  return new Map([...observations, [call.name, withItem(observations.get(call.name), call)]]);
}

/** Whether a proposition's `when` pins every variable of an entity to an argument. */
function pinsEntity(proposition: PropositionSpec, variables: readonly string[]): boolean {
  return variables.every((variable) => variable in proposition.bindingPattern);
}

/** Whether some block-mode instance does not accept in some belief. */
function hasOpenDuty(instances: readonly Instance[], beliefs: readonly Int32Array[]): boolean {
  return instances.some(
    (instance, index) =>
      instance.rule.mode === "block" &&
      beliefs.some((belief) => !instance.rule.automaton.isAccepting(belief[index] as number)),
  );
}
