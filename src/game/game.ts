import { MentorError } from "../errors/index.js";
import type { Policy } from "../policy/index.js";
import type { Binding, Instance, Run } from "../run/index.js";
import { type CallClass, type CandidateCall, candidateCalls, helpingCandidates } from "./candidates.js";
import { type Component, componentsOf } from "./components.js";

/** What a template needs besides states: it depends only on the instances and on `exclude`. */
export interface Structure {
  candidates: CandidateCall[];
  enforced: number[];
  components: Component[];
  componentOfInstance: Map<number, Component>;
  /** Call classes per candidate, by the projected states of the components it touches. */
  classes: WeakMap<CandidateCall, Map<string, CallClass>>;
  /** The components each move touches. */
  touched: WeakMap<CandidateCall, Component[]>;
}

/** What the templates of runs with the same instances and bindings share. */
interface InstancesGame {
  /** Candidate calls depend only on the instances and the bindings (and the task, which their runs share). */
  candidates: CandidateCall[];
  /** See `helpingCandidates`, built on first use. */
  helpers: CandidateCall[][] | undefined;
  /** Structures by the excluded instances. */
  structures: Map<string, Structure>;
}

/**
 * The game of one policy: what its strategy templates share, and the memory they fill. Component
 * distances are kept by the component's shape (its rules and the effects of its calls), then
 * projected state: every binding of an entity under the same rules is the same small game.
 * Candidate calls and components are kept per instance array and binding array. An evaluator owns one game; a
 * template made without one gets a game of its own.
 */
export class Game {
  private readonly distances = new Map<string, Map<string, number>>();
  // Keyed by a run's instance array, then its binding array: runs share each until an instance
  // (a binding) is added, and an entry goes with the last run that holds it. Both: a binding that
  // adds no instance (a call names an entity whose rules apply only to requested bindings) keeps
  // the instance array, and candidates are aimed at every binding (one that reaches only rules
  // reading every call), so candidates kept by instances alone were those of whichever run asked first.
  private readonly byInstances = new WeakMap<
    readonly Instance[],
    WeakMap<readonly Binding[], InstancesGame>
  >();

  constructor(readonly policy: Policy) {}

  /** Component states whose distance is known (exact answers of every search so far). */
  get knownStates(): number {
    let known = 0;
    for (const distances of this.distances.values()) known += distances.size;
    return known;
  }

  /** The structure of the templates of `run` that leave `exclude` out. */
  structure(run: Run, exclude: ReadonlySet<number> | undefined): Structure {
    const shared = this.shared(run);
    const key = exclude ? [...exclude].sort((left, right) => left - right).join(",") : "";
    const known = shared.structures.get(key);
    if (known) return known;
    const candidates = shared.candidates;
    const enforced = run.instances.flatMap((instance, index) =>
      instance.rule.mode === "block" && !exclude?.has(index) ? [index] : [],
    );
    const components = componentsOf(run, enforced, candidates, this.distances);
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
    shared.structures.set(key, structure);
    return structure;
  }

  /** `helpingCandidates` of the run's instances and candidates, one list per instance and binding array. */
  helpers(run: Run): CandidateCall[][] {
    const shared = this.shared(run);
    shared.helpers ??= helpingCandidates(run, shared.candidates);
    return shared.helpers;
  }

  private shared(run: Run): InstancesGame {
    if (run.policy !== this.policy)
      throw new MentorError(
        "MNT_ERR_BAD_INPUT",
        `a run of policy ${run.policy.name} cannot use the game of policy ${this.policy.name}`,
      );
    let byBindings = this.byInstances.get(run.instances);
    if (!byBindings) {
      byBindings = new WeakMap();
      this.byInstances.set(run.instances, byBindings);
    }
    let shared = byBindings.get(run.bindings);
    if (!shared) {
      shared = { candidates: candidateCalls(run), helpers: undefined, structures: new Map() };
      byBindings.set(run.bindings, shared);
    }
    return shared;
  }
}
