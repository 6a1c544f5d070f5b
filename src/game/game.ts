import { MentorError } from "../errors/index.js";
import type { Policy } from "../policy/index.js";
import type { Binding, Instance, Run } from "../run/index.js";
import {
  type CallClass,
  type CandidateCall,
  candidateCalls,
  helpingCandidates,
  observedCases,
  withCases,
} from "./candidates.js";
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
  /**
   * By the run's observations (which candidates repeat an observed call, and the outcome cases
   * left to them): the candidates with those cases, and what is built from them.
   */
  observed: Map<string, CandidateSet>;
}

/** The candidates of runs with the same instances, bindings and observations. */
interface CandidateSet {
  candidates: CandidateCall[];
  /** See `helpingCandidates`, built on first use. */
  helpers: CandidateCall[][] | undefined;
  /** Structures by the excluded instances. */
  structures: Map<string, Structure>;
}

/**
 * The game of one policy: what its strategy templates share, and the memory they fill. Component
 * distances are kept by the component's shape (its rules and the effects of its calls), then
 * projected state: every binding of an entity under the same rules is the same small game (a
 * candidate restricted to an observed outcome has other effects, so its component another shape).
 * Candidate calls and components are kept per instance array, binding array and observed
 * outcomes. An evaluator owns one game; a template made without one gets a game of its own.
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
    const shared = this.candidateSet(run);
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

  /** `helpingCandidates` of the run's instances and candidates, one list per candidate set. */
  helpers(run: Run): CandidateCall[][] {
    const shared = this.candidateSet(run);
    shared.helpers ??= helpingCandidates(run, shared.candidates);
    return shared.helpers;
  }

  /** The run's candidates, those that repeat an observed call left only the observed outcome. */
  private candidateSet(run: Run): CandidateSet {
    const known = this.setOfRun.get(run);
    if (known) return known;
    const shared = this.shared(run);
    const restricted = observedCases(run, shared.candidates);
    const key = [...restricted].map(([position, kept]) => `${position}:${kept.join(".")}`).join(",");
    let set = shared.observed.get(key);
    if (!set) {
      const candidates = shared.candidates.map((candidate, position) => {
        const kept = restricted.get(position);
        return kept ? withCases(candidate, kept) : candidate;
      });
      set = { candidates, helpers: undefined, structures: new Map() };
      shared.observed.set(key, set);
    }
    this.setOfRun.set(run, set);
    return set;
  }

  private readonly setOfRun = new WeakMap<Run, CandidateSet>();

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
      shared = { candidates: candidateCalls(run), observed: new Map() };
      byBindings.set(run.bindings, shared);
    }
    return shared;
  }
}
