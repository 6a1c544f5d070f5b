import { holdsIn, referencesOf, type Value } from "../expression/index.js";
import type { Automaton } from "../logic/index.js";
import {
  type Binding,
  type Instance,
  type OutcomeCase,
  outcomeCaseOf,
  type Run,
  type ToolCallEvent,
} from "../monitor/index.js";
import {
  type AbstractMove,
  abstractMoves,
  holdsForMove,
  matchesForMove,
  type PropositionSpec,
} from "../policy/index.js";

export interface GameOptions {
  /**
   * Strict mode: a call is unsafe if *some* outcome leaves the winning region (an adversarial
   * environment). Default: unsafe only if *every* outcome does.
   */
  strict?: boolean;
  /** Joint states a distance search may visit. Default 20,000. */
  maxStates?: number;
}

export interface TemplateOptions extends GameOptions {
  /** Instances left out of the game (already lost before the call being judged). */
  exclude?: ReadonlySet<number>;
  /**
   * Classify calls from the distances of the components they touch, memoized by those
   * components' states (default). `false` steps the whole state and sums every component: the
   * reference the incremental computation is tested against.
   */
  incremental?: boolean;
}

/**
 * A concrete call the game considers: one per tool and binding it can name (arguments filled
 * from the binding), plus one per tool whose propositions take no entity.
 */
export interface CandidateCall {
  tool: string;
  arguments: Record<string, Value>;
  binding: Binding | undefined;
  /** For the game's own candidates: the `when` texts of the tool's propositions that hold for the call. */
  whenTrue?: ReadonlySet<string>;
  cases: readonly OutcomeCase[];
  /** The instances the call is an event of (sorted). */
  affected: number[];
  /** Per outcome case: the letter mask for each instance in `affected`, in the same order. */
  effects: Int32Array[];
}

export type CallClass = "unsafe" | "progressing" | "neutral";

/**
 * The game between agent (chooses a call) and environment (chooses its outcome), played from
 * the run's current belief. Joint states are vectors of instance automaton states; the distance
 * of a state is the fewest calls to a state where every enforced rule instance accepts, with a
 * cooperative environment. Distances are computed lazily by breadth-first search and memoized.
 */
export class StrategyTemplate {
  readonly candidates: CandidateCall[];
  /** Indices of the instances the game is about: block-mode rules, minus `exclude`. */
  private readonly enforced: number[];
  private readonly components: Component[];
  private readonly componentOfInstance: Map<number, Component>;
  private readonly classes: WeakMap<CandidateCall, Map<string, CallClass>>;
  private readonly touched: WeakMap<CandidateCall, Component[]>;
  /** Per state object (states are never mutated once built): distances and projections. */
  private readonly stateCaches = new WeakMap<Int32Array, StateCache>();
  readonly maxStates: number;
  /** Component states visited by this template's own searches (others were already known). */
  statesExplored = 0;
  /** True when some search stopped at `maxStates`: its distances are unknown (reported as undefined). */
  limitReached = false;

  /** Component states whose distance is known for this policy (searches share them). */
  get knownStates(): number {
    let known = 0;
    for (const distances of distancesByPolicy.get(this.run.policy)?.values() ?? []) known += distances.size;
    return known;
  }

  constructor(
    readonly run: Run,
    readonly options: TemplateOptions = {},
  ) {
    this.maxStates = options.maxStates ?? 20_000;
    const structure = structureOf(run, options.exclude);
    this.candidates = structure.candidates;
    this.enforced = structure.enforced;
    this.components = structure.components;
    this.componentOfInstance = structure.componentOfInstance;
    this.classes = structure.classes;
    this.touched = structure.touched;
  }

  isAccepting(state: Int32Array): boolean {
    return this.enforced.every((index) =>
      this.run.instances[index]?.rule.automaton.isAccepting(state[index] as number),
    );
  }

  /** Enforced instances that are permanently violated in `state`. */
  doomedInstances(state: Int32Array): number[] {
    return this.enforced.filter(
      (index) => this.run.instances[index]?.rule.automaton.colour(state[index] as number) === "PERM_VIOL",
    );
  }

  /** Enforced instances with an open duty in `state`. */
  openInstances(state: Int32Array): number[] {
    return this.enforced.filter(
      (index) => !this.run.instances[index]?.rule.automaton.isAccepting(state[index] as number),
    );
  }

  successor(state: Int32Array, candidate: CandidateCall, caseIndex: number): Int32Array {
    const masks = candidate.effects[caseIndex] as Int32Array;
    const next = Int32Array.from(state);
    candidate.affected.forEach((index, position) => {
      const automaton = (this.run.instances[index] as Instance).rule.automaton;
      next[index] = automaton.step(state[index] as number, masks[position] as number);
    });
    return next;
  }

  /**
   * Fewest calls from `state` to a state with no open duty, or Infinity if none exists; undefined
   * if a search hit `maxStates` first (the shield then cannot decide and fails closed).
   *
   * Instances that no single call links (different bindings, unrelated rules) form independent
   * components: their distances add up, and each is searched in its own small game.
   */
  distance(state: Int32Array): number | undefined {
    const cache = this.cacheFor(state);
    if ("total" in cache) return cache.total;
    const parent = cache.parent;
    const before = parent && this.distance(parent.state);
    if (parent && before !== undefined && before !== Number.POSITIVE_INFINITY) {
      // Stepped from a state with a finite distance: only the touched components changed.
      let total: number | undefined = before;
      for (const component of parent.touched) {
        const own = this.componentDistance(component, parent.state) as number;
        const after = this.componentDistance(component, state);
        total = after === undefined ? undefined : total - own + after;
        if (total === undefined) break;
      }
      cache.total = total;
      return total;
    }
    let total: number | undefined = 0;
    for (const component of this.components) {
      const distance = this.componentDistance(component, state);
      if (distance === undefined) {
        total = undefined;
        break;
      }
      total += distance;
    }
    cache.total = total;
    return total;
  }

  /**
   * The state after a call and one of its outcomes, like `successor`, but remembering what it
   * shares with `state`: the components the call does not touch keep their distances.
   */
  step(state: Int32Array, move: CandidateCall, caseIndex: number): Int32Array {
    const next = this.successor(state, move, caseIndex);
    this.stateCaches.set(next, {
      ...emptyCache(),
      parent: { state, cache: this.cacheFor(state), touched: this.touchedBy(move) },
    });
    return next;
  }

  /**
   * The move of a concrete call: the instances it is an event of and their letters per outcome
   * case, read from the call's arguments (the call must introduce no binding).
   */
  moveOf(call: ToolCallEvent, cases: readonly OutcomeCase[]): CandidateCall {
    const known = this.moves.get(call);
    if (known?.cases === cases) return known;
    const affected: number[] = [];
    const effects: number[][] = cases.map(() => []);
    for (const index of this.run.instancesFor(call)) {
      const instance = this.run.instances[index] as Instance;
      const letters = this.run.lettersFor(instance, call, cases);
      if (letters === undefined) continue;
      affected.push(index);
      letters.forEach((letter, caseIndex) => {
        effects[caseIndex]?.push(instance.rule.automaton.letterMask(letter));
      });
    }
    const move = {
      tool: call.name,
      arguments: call.arguments,
      binding: undefined,
      cases,
      affected,
      effects: effects.map((masks) => Int32Array.from(masks)),
    };
    this.moves.set(call, move);
    return move;
  }

  /** The last move built per call (the evaluator asks again for a blocked call's advice). */
  private readonly moves = new WeakMap<ToolCallEvent, CandidateCall>();

  private cacheFor(state: Int32Array): StateCache {
    let cache = this.stateCaches.get(state);
    if (!cache) {
      cache = emptyCache();
      this.stateCaches.set(state, cache);
    }
    return cache;
  }

  /** The component's automaton states in `state`, as text. */
  private projection(component: Component, state: Int32Array): string {
    const known = knownIn(this.cacheFor(state), component, (cache) => cache.keys)?.get(component);
    if (known !== undefined) return known;
    const key = component.instances.map((index) => state[index]).join(",");
    this.cacheFor(state).keys.set(component, key);
    return key;
  }

  private componentDistance(component: Component, state: Int32Array): number | undefined {
    const known = knownIn(this.cacheFor(state), component, (cache) => cache.parts);
    if (known) return known.get(component);
    const distance = this.searchComponent(component, state);
    this.cacheFor(state).parts.set(component, distance);
    return distance;
  }

  /** The components with an enforced instance the move is an event of. */
  private touchedBy(move: CandidateCall): Component[] {
    let touched = this.touched.get(move);
    if (!touched) {
      const found = new Set<Component>();
      for (const index of move.affected) {
        const component = this.componentOfInstance.get(index);
        if (component) found.add(component);
      }
      touched = [...found];
      this.touched.set(move, touched);
    }
    return touched;
  }

  /**
   * A touched component's distance after the steps, looked up by its projected state; the full
   * state after the steps is built (once, through `full`) only when the lookup misses.
   */
  private componentDistanceAfter(
    component: Component,
    state: Int32Array,
    steps: readonly Step[],
    full: () => Int32Array,
  ): number | undefined {
    const values = component.instances.map((index) => state[index] as number);
    for (const { move, caseIndex } of steps) {
      const masks = move.effects[caseIndex] as Int32Array;
      move.affected.forEach((index, position) => {
        const slot = component.slot.get(index);
        if (slot === undefined) return;
        const automaton = (this.run.instances[index] as Instance).rule.automaton;
        values[slot] = automaton.step(values[slot] as number, masks[position] as number);
      });
    }
    const known = component.distances.get(values.join(","));
    if (known !== undefined) return known;
    return this.componentDistance(component, full());
  }

  private searchComponent(component: Component, state: Int32Array): number | undefined {
    const project = (full: Int32Array): string => component.instances.map((index) => full[index]).join(",");
    const key = this.projection(component, state);
    const known = component.distances.get(key);
    if (known !== undefined) return known;
    const automaton = (index: number): Automaton => (this.run.instances[index] as Instance).rule.automaton;
    const doomed = (full: Int32Array): boolean =>
      component.instances.some((index) => automaton(index).colour(full[index] as number) === "PERM_VIOL");
    const accepting = (full: Int32Array): boolean =>
      component.instances.every((index) => automaton(index).isAccepting(full[index] as number));
    let result: number | undefined = Number.POSITIVE_INFINITY;
    if (!doomed(state)) {
      const seen = new Set([key]);
      let layer = [state];
      let depth = 0;
      search: while (layer.length > 0) {
        const next: Int32Array[] = [];
        for (const current of layer) {
          if (accepting(current)) {
            result = depth;
            break search;
          }
          for (const candidate of component.candidates) {
            for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
              const successor = this.successor(current, candidate, caseIndex);
              const successorKey = project(successor);
              if (seen.has(successorKey) || doomed(successor)) continue;
              seen.add(successorKey);
              next.push(successor);
            }
          }
          if (seen.size > this.maxStates) {
            this.limitReached = true;
            result = undefined;
            break search;
          }
        }
        layer = next;
        depth++;
      }
      this.statesExplored += seen.size;
    }
    // Only exact answers are shared: a search cut by one template's limit may finish under another's.
    if (result !== undefined) component.distances.set(key, result);
    return result;
  }

  /**
   * How a call is classed at `state`, given the distance after each of its outcomes:
   * unsafe if no compliant finish remains (for every outcome, or for some outcome in strict
   * mode), progressing if some outcome brings an accepting state strictly closer.
   */
  classify(state: Int32Array, after: (number | undefined)[]): CallClass | undefined {
    if (after.some((distance) => distance === undefined)) return undefined;
    const lost = after.map((distance) => distance === Number.POSITIVE_INFINITY);
    if (this.options.strict ? lost.some(Boolean) : lost.every(Boolean)) return "unsafe";
    const now = this.distance(state);
    if (now === undefined) return undefined;
    return after.some((distance) => (distance as number) < now) ? "progressing" : "neutral";
  }

  /**
   * How a call (a candidate, or the move of a concrete call) is classed at `state`. While some
   * compliant finish exists, the class depends only on the states of the components the call
   * touches, so it is memoized by them.
   */
  classifyCandidate(state: Int32Array, candidate: CandidateCall): CallClass | undefined {
    const classify = (): CallClass | undefined =>
      this.classify(
        state,
        candidate.cases.map((_, caseIndex) => this.distanceAfter(state, candidate, caseIndex)),
      );
    const now = this.distance(state);
    if (this.options.incremental === false || now === undefined || now === Number.POSITIVE_INFINITY)
      return classify();
    const classes = this.cacheFor(state).classes;
    const seen = classes.get(candidate);
    if (seen !== undefined) return seen;
    let memo = this.classes.get(candidate);
    if (!memo) {
      memo = new Map();
      this.classes.set(candidate, memo);
    }
    const key = `${this.options.strict ? "strict" : "cooperative"}|${this.touchedBy(candidate)
      .map((component) => this.projection(component, state))
      .join("|")}`;
    const found = memo.get(key) ?? classify();
    if (found !== undefined) {
      memo.set(key, found);
      classes.set(candidate, found);
    }
    return found;
  }

  /**
   * The first of `candidates` that is progressing at `state`. A state stepped from another by a
   * call that touches none of the candidates' components has the same answer while both have a
   * compliant finish (classes then depend only on the touched components), so it is read through.
   */
  firstProgressing(state: Int32Array, candidates: readonly CandidateCall[]): CandidateCall | undefined {
    const cache = this.cacheFor(state);
    if (cache.firstProgressing.has(candidates)) return cache.firstProgressing.get(candidates);
    const parent = cache.parent;
    const finite = (distance: number | undefined): boolean =>
      distance !== undefined && distance !== Number.POSITIVE_INFINITY;
    const found =
      parent &&
      this.options.incremental !== false &&
      finite(this.distance(state)) &&
      finite(this.distance(parent.state)) &&
      !parent.touched.some((component) => this.touchedByAny(candidates).has(component))
        ? this.firstProgressing(parent.state, candidates)
        : candidates.find((candidate) => this.classifyCandidate(state, candidate) === "progressing");
    cache.firstProgressing.set(candidates, found);
    return found;
  }

  /** The components some of the candidates touch. */
  private touchedByAny(candidates: readonly CandidateCall[]): Set<Component> {
    let touched = this.touchedByList.get(candidates);
    if (!touched) {
      touched = new Set(candidates.flatMap((candidate) => this.touchedBy(candidate)));
      this.touchedByList.set(candidates, touched);
    }
    return touched;
  }

  private readonly touchedByList = new WeakMap<readonly CandidateCall[], Set<Component>>();

  /** The distance after a call and one of its outcomes (see `distanceAfterSteps`). */
  distanceAfter(state: Int32Array, candidate: CandidateCall, caseIndex: number): number | undefined {
    return this.distanceAfterSteps(state, [{ move: candidate, caseIndex }]);
  }

  /**
   * The distance after calls made one after the other, each with one of its outcomes: only the
   * components they touch change, so the others' distances (summed once per state) are reused,
   * and no joint state is built unless a touched component's distance is not known yet.
   */
  distanceAfterSteps(state: Int32Array, steps: readonly Step[]): number | undefined {
    let full: Int32Array | undefined;
    const stepped = (): Int32Array => {
      full ??= steps.reduce(
        (current, { move, caseIndex }) => this.successor(current, move, caseIndex),
        state,
      );
      return full;
    };
    if (this.options.incremental === false) return this.distance(stepped());
    const total = this.distance(state);
    if (total === undefined) return undefined;
    const touched =
      steps.length === 1 ? this.touchedBy(steps[0]?.move as CandidateCall) : this.touchedByAll(steps);
    let after = 0;
    for (const component of touched) {
      const distance = this.componentDistanceAfter(component, state, steps, stepped);
      if (distance === undefined) return undefined;
      after += distance;
    }
    if (total !== Number.POSITIVE_INFINITY) {
      let own = 0;
      for (const component of touched) own += this.componentDistance(component, state) as number;
      return total - own + after;
    }
    for (const component of this.components) {
      if (!touched.includes(component)) after += this.componentDistance(component, state) as number;
    }
    return after;
  }

  /** The components any of the steps touches. */
  private touchedByAll(steps: readonly Step[]): Component[] {
    const found = new Set<Component>();
    for (const { move } of steps) for (const component of this.touchedBy(move)) found.add(component);
    return [...found];
  }
}

/** A call and the index of one of its outcome cases. */
export interface Step {
  move: CandidateCall;
  caseIndex: number;
}

interface StateCache {
  total?: number | undefined;
  parts: Map<Component, number | undefined>;
  /** Projections of the state on components (see `projection`). */
  keys: Map<Component, string>;
  classes: Map<CandidateCall, CallClass>;
  /** `firstProgressing` per list of candidates. */
  firstProgressing: Map<readonly CandidateCall[], CandidateCall | undefined>;
  /** The state this one was stepped from, and the components the step touched: the others read through. */
  parent?: { state: Int32Array; cache: StateCache; touched: Component[] };
}

/** The table of a state's cache that knows `component`, looking through to the states it was stepped from. */
function knownIn<T>(
  start: StateCache,
  component: Component,
  table: (cache: StateCache) => Map<Component, T>,
): Map<Component, T> | undefined {
  let cache: StateCache | undefined = start;
  while (cache) {
    const entries = table(cache);
    if (entries.has(component)) return entries;
    if (!cache.parent || cache.parent.touched.includes(component)) return undefined;
    cache = cache.parent.cache;
  }
  return undefined;
}

function emptyCache(): StateCache {
  return { parts: new Map(), keys: new Map(), classes: new Map(), firstProgressing: new Map() };
}

/** Candidate calls depend only on the instances (and their bindings), which runs share until one is added. */
const candidatesByInstances = new WeakMap<readonly Instance[], CandidateCall[]>();

/**
 * Component distances by the component's shape (its rules and the effects of its calls), then
 * projected state: every binding of an entity under the same rules is the same small game.
 */
const distancesByPolicy = new WeakMap<object, Map<string, Map<string, number>>>();

/** What a template needs besides states: it depends only on the instances and on `exclude`. */
interface Structure {
  candidates: CandidateCall[];
  enforced: number[];
  components: Component[];
  componentOfInstance: Map<number, Component>;
  /** Call classes per candidate, by the projected states of the components it touches. */
  classes: WeakMap<CandidateCall, Map<string, CallClass>>;
  /** The components each move touches. */
  touched: WeakMap<CandidateCall, Component[]>;
}

const structures = new WeakMap<readonly Instance[], Map<string, Structure>>();

function structureOf(run: Run, exclude: ReadonlySet<number> | undefined): Structure {
  const byExclude = structures.get(run.instances) ?? new Map<string, Structure>();
  structures.set(run.instances, byExclude);
  const key = exclude ? [...exclude].sort((left, right) => left - right).join(",") : "";
  const known = byExclude.get(key);
  if (known) return known;
  const candidates = candidatesByInstances.get(run.instances) ?? candidateCalls(run);
  candidatesByInstances.set(run.instances, candidates);
  let distances = distancesByPolicy.get(run.policy);
  if (!distances) {
    distances = new Map();
    distancesByPolicy.set(run.policy, distances);
  }
  const enforced = run.instances.flatMap((instance, index) =>
    instance.rule.mode === "block" && !exclude?.has(index) ? [index] : [],
  );
  const components = componentsOf(run, enforced, candidates, distances);
  const componentOfInstance = new Map<number, Component>();
  for (const component of components) {
    for (const index of component.instances) componentOfInstance.set(index, component);
  }
  const structure = {
    candidates,
    enforced,
    components,
    componentOfInstance,
    classes: new WeakMap(),
    touched: new WeakMap(),
  };
  byExclude.set(key, structure);
  return structure;
}

/** Enforced instances linked by calls that affect them together, and the calls that affect them. */
interface Component {
  instances: number[];
  /** Position of each instance in `instances`. */
  slot: Map<number, number>;
  candidates: CandidateCall[];
  /** Distance by projected state, shared by the policy's components of the same shape (exact answers only). */
  distances: Map<string, number>;
}

function componentsOf(
  run: Run,
  enforced: readonly number[],
  candidates: readonly CandidateCall[],
  distances: Map<string, Map<string, number>>,
): Component[] {
  const parent = new Map(enforced.map((index) => [index, index]));
  const find = (index: number): number => {
    let root = index;
    while (parent.get(root) !== root) root = parent.get(root) as number;
    parent.set(index, root);
    return root;
  };
  const isEnforced = new Set(enforced);
  const affected = candidates.map((candidate) => candidate.affected.filter((index) => isEnforced.has(index)));
  for (const indices of affected) {
    for (const index of indices.slice(1)) parent.set(find(index), find(indices[0] as number));
  }
  const components = new Map<number, Component>();
  for (const index of enforced) {
    const root = find(index);
    const component: Component = components.get(root) ?? {
      instances: [],
      slot: new Map(),
      candidates: [],
      distances: new Map(),
    };
    component.instances.push(index);
    components.set(root, component);
  }
  candidates.forEach((candidate, position) => {
    const first = affected[position]?.[0];
    if (first !== undefined) components.get(find(first))?.candidates.push(candidate);
  });
  for (const component of components.values()) {
    const slot = component.slot;
    component.instances.forEach((index, position) => {
      slot.set(index, position);
    });
    const rules = component.instances.map((index) => run.instances[index]?.rule.id).join(",");
    const calls = component.candidates.map((candidate) => {
      const effects = candidate.effects.map((masks) =>
        candidate.affected.map((index, position) => `${slot.get(index) ?? "-"}:${masks[position]}`).join(" "),
      );
      return `${candidate.tool}[${effects.join("/")}]`;
    });
    // The rules of its instances and the effects of its calls, in instance order.
    const shape = `${rules}|${calls.sort().join(";")}`;
    const shared = distances.get(shape) ?? component.distances;
    distances.set(shape, shared);
    component.distances = shared;
  }
  return [...components.values()];
}

/**
 * The calls the game considers, per tool: for each binding the tool can name (and once for
 * propositions without entities), each choice of which `when` predicates hold, with the
 * tool's possible outcomes as the environment's cases. Arguments are filled from the binding.
 */
function candidateCalls(run: Run): CandidateCall[] {
  const candidates: CandidateCall[] = [];
  const propositions = [...run.policy.propositions.values()];
  const everyCallInstances = run.everyCallInstances();
  for (const tool of run.policy.tools.values()) {
    const own = propositions.filter((proposition) => proposition.tool === tool.name);
    if (own.length === 0) {
      // A tool no proposition mentions is still a position of the rules that read every call.
      if (everyCallInstances.length > 0)
        candidates.push({
          tool: tool.name,
          arguments: {},
          binding: undefined,
          cases: [{ description: "result", value: null, abstract: undefined }],
          affected: [...everyCallInstances],
          effects: [new Int32Array(everyCallInstances.length)],
        });
      continue;
    }
    const entities = new Set(own.flatMap((proposition) => proposition.entities));
    const targets: (Binding | undefined)[] = run.bindings.filter((binding) => entities.has(binding.entity));
    if (own.some((proposition) => proposition.entities.length === 0)) targets.push(undefined);
    const movesByChoice = new Map<string, AbstractMove[]>();
    for (const move of abstractMoves(tool, own)) {
      const key = [...move.whenTrue].sort().join("\u0000");
      movesByChoice.set(key, [...(movesByChoice.get(key) ?? []), move]);
    }
    const everyCall = new Set(run.everyCallInstances());
    for (const binding of targets) {
      const args = binding ? argumentsFor(own, binding) : {};
      const reachable = withEveryCall(run, binding ? run.instancesOf(binding) : run.globalInstances());
      const fixed = whenFixedBy(run, own, binding, args);
      for (const moves of movesByChoice.values()) {
        const whenTrue = (moves[0] as AbstractMove).whenTrue;
        if ([...fixed].some(([text, holds]) => whenTrue.has(text) !== holds)) continue;
        const letters = moves.map((move) =>
          reachable.map((index) => {
            const instance = run.instances[index] as Instance;
            const letter: string[] = [];
            let event = false;
            for (const proposition of instance.rule.propositions) {
              if (
                !matchesForMove(proposition, move) ||
                !namesInstance(proposition, instance.bindings, binding)
              )
                continue;
              event = true;
              if (holdsForMove(proposition, move)) letter.push(proposition.key);
            }
            if (event) return instance.rule.automaton.letterMask(letter);
            // Not an event: a rule that reads every call reads the empty letter.
            return everyCall.has(index) ? 0 : -1;
          }),
        );
        const affected = reachable.filter((_, position) =>
          letters.some((perCase) => (perCase[position] as number) >= 0),
        );
        if (affected.length === 0) continue;
        // An instance that is an event for one outcome is an event for all (events depend on `when` only).
        const effects = letters.map((perCase) =>
          Int32Array.from(
            reachable.flatMap((_, position) =>
              (letters[0]?.[position] as number) >= 0 ? [perCase[position] as number] : [],
            ),
          ),
        );
        const cases = moves.map(outcomeCaseOf);
        candidates.push({ tool: tool.name, arguments: args, binding, whenTrue, cases, affected, effects });
      }
    }
  }
  return candidates;
}

/** Instance indices with those of the rules that read every call added (sorted). */
function withEveryCall(run: Run, indices: readonly number[]): number[] {
  const everyCall = run.everyCallInstances();
  if (everyCall.length === 0) return [...indices];
  return [...new Set([...indices, ...everyCall])].sort((left, right) => left - right);
}

/**
 * The `when` predicates a call aimed at `binding` cannot choose: those that read only the
 * arguments naming the binding, its variables and the task (`task.request_travel.mode ==
 * 'flight'`). Their truth is the same for every such call, so the other choice is no candidate.
 */
function whenFixedBy(
  run: Run,
  propositions: readonly PropositionSpec[],
  binding: Binding | undefined,
  args: Record<string, Value>,
): Map<string, boolean> {
  const fixed = new Map<string, boolean>();
  for (const proposition of propositions) {
    const { when, whenText } = proposition;
    if (!when || whenText === undefined || fixed.has(whenText)) continue;
    const aimed = binding
      ? proposition.entities.length === 1 && proposition.entities[0] === binding.entity
      : proposition.entities.length === 0;
    if (!aimed) continue;
    const patternPaths = Object.values(proposition.bindingPattern).map((path) => path.join("."));
    const decided = referencesOf(when).every(
      (reference) =>
        reference.kind === "variable" ||
        reference.kind === "task" ||
        (reference.kind === "arguments" && patternPaths.includes(reference.path.join("."))),
    );
    if (decided) fixed.set(whenText, holdsIn(when, run.scopeFor(binding ? [binding] : [], args)));
  }
  // A `when` only propositions over other entities read is no event of the instances a call
  // aimed at `binding` can reach: its choice would only repeat the same candidate.
  const read = new Set(
    propositions.flatMap((proposition) =>
      proposition.whenText !== undefined &&
      (proposition.entities.length === 0 || (binding && proposition.entities.includes(binding.entity)))
        ? [proposition.whenText]
        : [],
    ),
  );
  for (const { whenText } of propositions)
    if (whenText !== undefined && !read.has(whenText)) fixed.set(whenText, false);
  return fixed;
}

/** Whether a call aimed at `target` is an event for a proposition of an instance with `bindings`. */
function namesInstance(
  proposition: PropositionSpec,
  bindings: readonly Binding[],
  target: Binding | undefined,
): boolean {
  if (proposition.entities.length === 0) return true;
  return (
    target !== undefined &&
    bindings.some((binding) => binding.id === target.id && proposition.entities.includes(binding.entity))
  );
}

/** The arguments that name a binding, read backwards through a binding pattern. */
function argumentsFor(propositions: readonly PropositionSpec[], binding: Binding): Record<string, Value> {
  const pattern = propositions.find(
    (proposition) =>
      proposition.entities.includes(binding.entity) && Object.keys(proposition.bindingPattern).length > 0,
  )?.bindingPattern;
  const args: Record<string, Value> = {};
  for (const [variable, path] of Object.entries(pattern ?? {}))
    setPath(args, path, binding.values[variable] ?? null);
  return args;
}

function setPath(target: Record<string, Value>, path: readonly (string | number)[], value: Value): void {
  let current: Record<string, Value> = target;
  path.forEach((segment, index) => {
    const key = String(segment);
    if (index === path.length - 1) {
      current[key] = value;
      return;
    }
    current[key] ??= {};
    current = current[key] as Record<string, Value>;
  });
}
