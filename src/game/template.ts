import type { Instance, OutcomeCase, Run, ToolCallEvent } from "../run/index.js";
import type { CallClass, CandidateCall } from "./candidates.js";
import type { Component } from "./components.js";
import { Game } from "./game.js";
import { searchComponent } from "./search.js";
import { emptyCache, knownIn, type StateCache } from "./state-cache.js";

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
  /**
   * The game of the run's policy this template belongs to: templates of one game share candidate
   * calls, components and component distances. Default: a game of the template's own.
   */
  game?: Game;
}

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

  /** The game this template belongs to (see `TemplateOptions.game`). */
  readonly game: Game;

  /** Component states whose distance is known in this template's game (its templates' searches share them). */
  get knownStates(): number {
    return this.game.knownStates;
  }

  constructor(
    readonly run: Run,
    readonly options: TemplateOptions = {},
  ) {
    this.maxStates = options.maxStates ?? 20_000;
    this.game = options.game ?? new Game(run.policy);
    const structure = this.game.structure(run, options.exclude);
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

  /**
   * Whether no belief of the run has a compliant finish (what it observed rules out every way to
   * meet its duties). Every call then leaves none, so calls are told apart by the block rules they
   * break for good: a lookup after a failed login is no worse than the run it is made on.
   */
  noCompliantFinish(): boolean {
    this.lostRun ??=
      this.run.beliefs.length > 0 &&
      this.run.beliefs.every((belief) => this.distance(belief) === Number.POSITIVE_INFINITY);
    return this.lostRun;
  }

  private lostRun: boolean | undefined;

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

  /**
   * Per instance, the candidates that may act on it (those on its own bindings, and for candidates
   * without a binding, those it is an event of), in candidate order. Instances with the same
   * candidates share one array, and so do the templates of runs with the same instances and bindings
   * (`firstProgressing` memoizes its answers per array).
   */
  helpingCandidates(): readonly CandidateCall[][] {
    return this.game.helpers(this.run);
  }

  /**
   * Each candidate's class at each of the run's beliefs, and the candidates no belief makes
   * unsafe (or leaves undecided). Built on first use (advice asks on every blocked call).
   */
  classesAtBeliefs(): CandidateClasses {
    if (!this.beliefClasses) {
      const classes = new Map(
        this.candidates.map((candidate) => [
          candidate,
          this.run.beliefs.map((belief) => this.classifyCandidate(belief, candidate)),
        ]),
      );
      const safe = this.candidates.filter(
        (candidate) => !classes.get(candidate)?.some((entry) => entry === "unsafe" || entry === undefined),
      );
      this.beliefClasses = { classes, safe };
    }
    return this.beliefClasses;
  }

  private beliefClasses: CandidateClasses | undefined;

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
      bindings: [],
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
    const key = this.projection(component, state);
    const known = component.distances.get(key);
    if (known !== undefined) return known;
    const { distance, explored } = searchComponent(component, state, key, {
      automaton: (index) => (this.run.instances[index] as Instance).rule.automaton,
      successor: (current, candidate, caseIndex) => this.successor(current, candidate, caseIndex),
      maxStates: this.maxStates,
    });
    this.statesExplored += explored;
    if (distance === undefined) this.limitReached = true;
    // Only exact answers are shared: a search cut by one template's limit may finish under another's.
    else component.distances.set(key, distance);
    return distance;
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

  /** In a run with no compliant finish: unsafe where the call's outcomes break a block rule for good (`noCompliantFinish`). */
  private classifyWithoutFinish(state: Int32Array, candidate: CandidateCall): CallClass {
    const breaks = candidate.cases.map((_, caseIndex) =>
      this.lostAfterSteps(state, [{ move: candidate, caseIndex }]),
    );
    return (this.options.strict ? breaks.some(Boolean) : breaks.every(Boolean)) ? "unsafe" : "neutral";
  }

  /**
   * Whether calls made one after the other, each with one of its outcomes, leave no compliant
   * finish (undefined: a search gave up); in a run that has none (`noCompliantFinish`), whether
   * they break a block rule for good.
   */
  lostAfterSteps(state: Int32Array, steps: readonly Step[]): boolean | undefined {
    if (this.noCompliantFinish()) {
      const after = steps.reduce(
        (current, { move, caseIndex }) => this.successor(current, move, caseIndex),
        state,
      );
      return this.doomedInstances(after).length > 0;
    }
    const distance = this.distanceAfterSteps(state, steps);
    return distance === undefined ? undefined : distance === Number.POSITIVE_INFINITY;
  }

  /**
   * How a call (a candidate, or the move of a concrete call) is classed at `state`. While some
   * compliant finish exists, the class depends only on the states of the components the call
   * touches, so it is memoized by them.
   */
  classifyCandidate(state: Int32Array, candidate: CandidateCall): CallClass | undefined {
    const classify = (): CallClass | undefined =>
      this.noCompliantFinish()
        ? this.classifyWithoutFinish(state, candidate)
        : this.classify(
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

  /**
   * Whether two calls touch a common component: a call that touches none of another's components
   * cannot change whether that one is allowed while a compliant finish remains.
   */
  touchesSameComponent(left: CandidateCall, right: CandidateCall): boolean {
    const touched = this.touchedBy(right);
    return this.touchedBy(left).some((component) => touched.includes(component));
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

/** See `StrategyTemplate.classesAtBeliefs`. */
export interface CandidateClasses {
  classes: Map<CandidateCall, (CallClass | undefined)[]>;
  safe: CandidateCall[];
}

/** A call and the index of one of its outcome cases. */
export interface Step {
  move: CandidateCall;
  caseIndex: number;
}
