import type { Value } from "../expression/index.js";
import type { Binding, OutcomeCase, Run, ToolCallEvent } from "../monitor/index.js";

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
}

/**
 * A concrete call the game considers: one per tool and binding it can name (arguments filled
 * from the binding), plus one per tool whose propositions take no entity.
 */
export interface CandidateCall {
  tool: string;
  arguments: Record<string, Value>;
  binding: Binding | undefined;
  cases: OutcomeCase[];
  /** Per outcome case, per instance: the letter mask the call produces, or -1 if not an event. */
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
  private readonly distances = new Map<string, number>();
  readonly maxStates: number;
  /** Joint states visited by all searches so far. */
  statesExplored = 0;
  /** True when some search stopped at `maxStates`: its distances are unknown (reported as undefined). */
  limitReached = false;

  constructor(
    readonly run: Run,
    readonly options: TemplateOptions = {},
  ) {
    this.maxStates = options.maxStates ?? 20_000;
    this.enforced = run.instances.flatMap((instance, index) =>
      instance.rule.mode === "block" && !options.exclude?.has(index) ? [index] : [],
    );
    this.candidates = candidateCalls(run);
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
    const effects = candidate.effects[caseIndex] as Int32Array;
    const next = Int32Array.from(state);
    for (let index = 0; index < effects.length; index++) {
      const mask = effects[index] as number;
      if (mask >= 0)
        next[index] = this.run.instances[index]?.rule.automaton.step(state[index] as number, mask) as number;
    }
    return next;
  }

  /**
   * Fewest calls from `state` to a state with no open duty, or Infinity if none exists; undefined
   * if the search hit `maxStates` first (the shield then cannot decide and fails closed).
   */
  distance(state: Int32Array): number | undefined {
    const key = state.join(",");
    const known = this.distances.get(key);
    if (known !== undefined) return Number.isNaN(known) ? undefined : known;
    let result: number | undefined = Number.POSITIVE_INFINITY;
    if (this.doomedInstances(state).length === 0) {
      const seen = new Set([key]);
      let layer = [state];
      let depth = 0;
      search: while (layer.length > 0) {
        const next: Int32Array[] = [];
        for (const current of layer) {
          if (this.isAccepting(current)) {
            result = depth;
            break search;
          }
          for (const candidate of this.candidates) {
            for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
              const successor = this.successor(current, candidate, caseIndex);
              const successorKey = successor.join(",");
              if (seen.has(successorKey) || this.doomedInstances(successor).length > 0) continue;
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
    this.distances.set(key, result ?? Number.NaN);
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

  classifyCandidate(state: Int32Array, candidate: CandidateCall): CallClass | undefined {
    return this.classify(
      state,
      candidate.cases.map((_, caseIndex) => this.distance(this.successor(state, candidate, caseIndex))),
    );
  }
}

function candidateCalls(run: Run): CandidateCall[] {
  const candidates: CandidateCall[] = [];
  const propositions = [...run.policy.propositions.values()];
  for (const tool of run.policy.tools.values()) {
    const own = propositions.filter((proposition) => proposition.tool === tool.name);
    if (own.length === 0) continue;
    const targets: { binding: Binding | undefined; arguments: Record<string, Value> }[] = [];
    if (own.some((proposition) => proposition.entities.length === 0))
      targets.push({ binding: undefined, arguments: {} });
    for (const binding of run.bindings) {
      const pattern = own.find(
        (proposition) =>
          proposition.entities.includes(binding.entity) && Object.keys(proposition.bindingPattern).length > 0,
      )?.bindingPattern;
      if (!pattern) continue;
      const args: Record<string, Value> = {};
      for (const [variable, path] of Object.entries(pattern))
        setPath(args, path, binding.values[variable] ?? null);
      targets.push({ binding, arguments: args });
    }
    for (const target of targets) {
      const call: ToolCallEvent = {
        id: "candidate",
        name: tool.name,
        arguments: target.arguments,
        outcome: { kind: "pending" },
      };
      const cases = run.outcomeCases(tool.name, call.outcome);
      const effects = cases.map((outcomeCase) =>
        Int32Array.from(run.instances, (instance) => {
          const letter = run.letterFor(instance, call, outcomeCase);
          return letter ? instance.rule.automaton.letterMask(letter) : -1;
        }),
      );
      candidates.push({
        tool: tool.name,
        arguments: target.arguments,
        binding: target.binding,
        cases,
        effects,
      });
    }
  }
  return candidates;
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
