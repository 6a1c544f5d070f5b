import { holdsIn, referencesOf, type Value } from "../expression/index.js";
import {
  type AbstractMove,
  abstractMoves,
  holdsForMove,
  matchesForMove,
  type PropositionSpec,
} from "../policy/index.js";
import {
  type Binding,
  cartesian,
  groupBy,
  type Instance,
  type OutcomeCase,
  outcomeCaseOf,
  type Run,
} from "../run/index.js";
import { realizedArguments } from "./realize.js";

/** What a call is at a state: it rules out a compliant finish, brings one closer, or neither. */
export type CallClass = "unsafe" | "progressing" | "neutral";

/**
 * A concrete call the game considers: one per tool and bindings it can name (one binding per
 * entity one of its propositions pins, arguments filled from them and, where its choice of
 * `when` predicates needs more, as `realizedArguments` finds), plus one per tool whose
 * propositions take no entity.
 */
export interface CandidateCall {
  tool: string;
  arguments: Record<string, Value>;
  /** The bindings the call is aimed at: one per entity of a proposition of its tool, none for propositions without entities. */
  bindings: readonly Binding[];
  /**
   * Those and every other binding its arguments name through another proposition's binding
   * pattern (the order a request to change its items is about); absent: just `bindings`.
   */
  named?: readonly Binding[];
  /** For the game's own candidates: the `when` texts of the tool's propositions that hold for the call. */
  whenTrue?: ReadonlySet<string>;
  cases: readonly OutcomeCase[];
  /** The instances the call is an event of (sorted, each once: a move steps each of them once). */
  affected: number[];
  /** Per outcome case: the letter mask for each instance in `affected`, in the same order. */
  effects: Int32Array[];
}

/**
 * The calls the game considers, per tool: for each binding the tool can name (and once for
 * propositions without entities), each choice of which `when` predicates hold, with the
 * tool's possible outcomes as the environment's cases. Arguments are filled from the binding.
 */
export function candidateCalls(run: Run): CandidateCall[] {
  const candidates: CandidateCall[] = [];
  // By tool and by entity, once: per tool and per proposition they would cost as much as the policy.
  const propositionsOf = groupBy([...run.policy.propositions.values()], (proposition) => proposition.tool);
  const bindingsOf = groupBy(run.bindings, (binding) => binding.entity);
  const everyCallInstances = run.everyCallInstances();
  const everyCall = new Set(everyCallInstances);
  for (const tool of run.policy.tools.values()) {
    const own = propositionsOf.get(tool.name) ?? [];
    if (own.length === 0) {
      // A tool no proposition mentions is still a position of the rules that read every call.
      if (everyCallInstances.length > 0)
        candidates.push({
          tool: tool.name,
          arguments: {},
          bindings: [],
          cases: [{ description: "result", value: null, abstract: undefined }],
          affected: [...everyCallInstances],
          effects: [new Int32Array(everyCallInstances.length)],
        });
      continue;
    }
    const pinned = pinnedEntities(run, own);
    const targets = namedTargets(run, own, pinned, targetsOf(own, pinned, bindingsOf));
    // A proposition that does not pin an entity names every binding of it (as the run reads a
    // call: `Run.namedBindings`), whatever binding the call is aimed at.
    const everywhere = [...new Set(own.flatMap((proposition) => unpinnedOf(proposition, pinned)))].flatMap(
      (entity) => (bindingsOf.get(entity) ?? []).flatMap((binding) => run.instancesOf(binding)),
    );
    const movesByChoice = new Map<string, AbstractMove[]>();
    for (const move of abstractMoves(tool, own)) {
      const key = [...move.whenTrue].sort().join("\u0000");
      movesByChoice.set(key, [...(movesByChoice.get(key) ?? []), move]);
    }
    // A call aimed at a binding is still an event of the rules over the tool's propositions
    // without entities (`G(any_dispense -> O looked_up)`), as every call of the tool is.
    const global = own.some((proposition) => proposition.entities.length === 0) ? run.globalInstances() : [];
    for (const { aimed, target, args } of targets) {
      const reachable = withEveryCall(run, [
        ...(target.length === 0 ? run.globalInstances() : global),
        ...target.flatMap((binding) => run.instancesOf(binding)),
        ...everywhere,
      ]);
      const fixed = whenFixedBy(run, own, pinned, target, args);
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
                !namesInstance(proposition, pinned, instance.bindings, target)
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
        candidates.push({
          tool: tool.name,
          arguments: realizedArguments(run, tool.name, args, cases, affected, effects) ?? args,
          bindings: aimed,
          named: target,
          whenTrue,
          cases,
          affected,
          effects,
        });
      }
    }
  }
  return candidates;
}

/** Per proposition, the entities its `when` pins (a binding pattern for each of their variables). */
type Pinned = ReadonlyMap<PropositionSpec, ReadonlySet<string>>;

function pinnedEntities(run: Run, propositions: readonly PropositionSpec[]): Pinned {
  return new Map(
    propositions.map((proposition) => [
      proposition,
      new Set(
        proposition.entities.filter((name) =>
          (run.policy.entities.get(name)?.variables ?? []).every(
            (variable) => variable in proposition.bindingPattern,
          ),
        ),
      ),
    ]),
  );
}

function unpinnedOf(proposition: PropositionSpec, pinned: Pinned): string[] {
  return proposition.entities.filter((entity) => !pinned.get(proposition)?.has(entity));
}

/**
 * The binding combinations a tool's calls can be aimed at: for each of its propositions, one
 * binding per entity it pins (none for a proposition that pins none, which comes last). Single
 * bindings come in run order.
 */
function targetsOf(
  propositions: readonly PropositionSpec[],
  pinned: Pinned,
  bindingsOf: ReadonlyMap<string, readonly Binding[]>,
): Binding[][] {
  const targets = new Map<string, Binding[]>();
  for (const proposition of propositions) {
    const choices = [...(pinned.get(proposition) ?? [])].map((entity) => [...(bindingsOf.get(entity) ?? [])]);
    for (const target of cartesian(choices))
      targets.set(target.map((binding) => binding.id).join(","), target);
  }
  const order = (target: readonly Binding[]): number[] =>
    target.length === 0 ? [Number.POSITIVE_INFINITY] : target.map((binding) => binding.id);
  return [...targets.values()].sort((left, right) => compareLists(order(left), order(right)));
}

function compareLists(left: readonly number[], right: readonly number[]): number {
  for (let index = 0; index < Math.min(left.length, right.length); index++)
    if (left[index] !== right[index]) return (left[index] as number) - (right[index] as number);
  return left.length - right.length;
}

/**
 * Each target with the arguments that name it, and with every other binding those arguments
 * name through the binding pattern of another of the tool's propositions (the order a request to
 * change its items is about), as `decide` reads the call (`Run.namedBindings`): a call aimed at
 * the request is still an event of the order's rules. Targets that come to name the same
 * bindings with the same arguments are one, aimed where the first was (its arguments are filled
 * from those bindings: a transfer aimed at the user's request must not take the user's account as
 * its new owner).
 */
function namedTargets(
  run: Run,
  propositions: readonly PropositionSpec[],
  pinned: Pinned,
  targets: readonly Binding[][],
): { aimed: Binding[]; target: Binding[]; args: Record<string, Value> }[] {
  const found = new Map<string, { aimed: Binding[]; target: Binding[]; args: Record<string, Value> }>();
  for (const aimed of targets) {
    const args = argumentsFor(propositions, pinned, aimed);
    const target = [...aimed];
    for (const proposition of propositions)
      for (const entity of pinned.get(proposition) ?? []) {
        if (target.some((binding) => binding.entity === entity)) continue;
        target.push(...run.pinnedBindings(proposition, entity, args));
      }
    target.sort((left, right) => left.id - right.id);
    const key = `${target.map((binding) => binding.id).join(",")}\u0000${JSON.stringify(args)}`;
    if (!found.has(key)) found.set(key, { aimed, target, args });
  }
  return [...found.values()];
}

/** Whether the entities a proposition pins are exactly those of a target. */
function aimedAt(proposition: PropositionSpec, pinned: Pinned, target: readonly Binding[]): boolean {
  const entities = pinned.get(proposition) ?? new Set();
  return (
    entities.size === target.length &&
    [...entities].every((entity) => target.some((binding) => binding.entity === entity))
  );
}

/** Whether a target holds a binding of each entity a proposition pins (or both are empty). */
function within(proposition: PropositionSpec, pinned: Pinned, target: readonly Binding[]): boolean {
  const entities = pinned.get(proposition) ?? new Set();
  return entities.size === 0
    ? target.length === 0
    : [...entities].every((entity) => target.some((binding) => binding.entity === entity));
}

/**
 * Instance indices with those of the rules that read every call added: sorted, each once. A target
 * of several bindings lists the instances over all of them once per binding (a refund of a
 * customer's order reaches the instances of that pair through the customer and through the
 * order); a move that listed one twice would step it twice where a move is stepped slot by slot
 * (`StrategyTemplate.distanceAfterSteps`).
 */
function withEveryCall(run: Run, indices: readonly number[]): number[] {
  return [...new Set([...indices, ...run.everyCallInstances()])].sort((left, right) => left - right);
}

/**
 * The `when` predicates a call aimed at `binding` cannot choose: those that read only the
 * arguments naming the binding, its variables and the task (`task.request_travel.mode ==
 * 'flight'`). Their truth is the same for every such call, so the other choice is no candidate.
 */
function whenFixedBy(
  run: Run,
  propositions: readonly PropositionSpec[],
  pinned: Pinned,
  target: readonly Binding[],
  args: Record<string, Value>,
): Map<string, boolean> {
  const fixed = new Map<string, boolean>();
  for (const proposition of propositions) {
    const { when, whenText } = proposition;
    if (!when || whenText === undefined || fixed.has(whenText)) continue;
    if (unpinnedOf(proposition, pinned).length > 0 || !within(proposition, pinned, target)) continue;
    const patternPaths = Object.values(proposition.bindingPattern).map((path) => path.join("."));
    const decided = referencesOf(when).every(
      (reference) =>
        reference.kind === "variable" ||
        reference.kind === "task" ||
        (reference.kind === "arguments" && patternPaths.includes(reference.path.join("."))),
    );
    if (decided) fixed.set(whenText, holdsIn(when, run.scopeFor(target, args)));
  }
  // A `when` only propositions over other entities read is no event of the instances a call
  // aimed at `target` can reach: its choice would only repeat the same candidate. A proposition
  // that does not pin an entity reaches every binding of it, whatever the target.
  const read = new Set(
    propositions.flatMap((proposition) =>
      proposition.whenText !== undefined &&
      (unpinnedOf(proposition, pinned).length > 0 ||
        proposition.entities.length === 0 ||
        proposition.entities.some((entity) => target.some((binding) => binding.entity === entity)))
        ? [proposition.whenText]
        : [],
    ),
  );
  for (const { whenText } of propositions)
    if (whenText !== undefined && !read.has(whenText)) fixed.set(whenText, false);
  return fixed;
}

/**
 * Whether a call aimed at `target` is an event for a proposition of an instance with `bindings`:
 * for each of the proposition's entities, the instance has the target's binding of it, or any
 * binding of it where the proposition does not pin it (it names them all).
 */
function namesInstance(
  proposition: PropositionSpec,
  pinned: Pinned,
  bindings: readonly Binding[],
  target: readonly Binding[],
): boolean {
  return proposition.entities.every((entity) => {
    if (!pinned.get(proposition)?.has(entity)) return bindings.some((binding) => binding.entity === entity);
    const aimed = target.find((binding) => binding.entity === entity);
    return aimed !== undefined && bindings.some((binding) => binding.id === aimed.id);
  });
}

/** The arguments that name a target's bindings, read backwards through a binding pattern. */
function argumentsFor(
  propositions: readonly PropositionSpec[],
  pinned: Pinned,
  target: readonly Binding[],
): Record<string, Value> {
  const args: Record<string, Value> = {};
  if (target.length === 0) return args;
  const pattern = propositions.find(
    (proposition) =>
      aimedAt(proposition, pinned, target) && Object.keys(proposition.bindingPattern).length > 0,
  )?.bindingPattern;
  const values = Object.assign({}, ...target.map((binding) => binding.values));
  for (const [variable, path] of Object.entries(pattern ?? {})) setPath(args, path, values[variable] ?? null);
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

/**
 * Whether a candidate is aimed among some bindings: it names one of them, and for each entity
 * they bind, it names no other binding of it (a call on an order and the request about it is
 * aimed among the request's bindings and among the order's, not among another order's). A
 * candidate without bindings is aimed among any.
 */
export function aimedAmong(bindings: Iterable<Binding>): (candidate: CandidateCall) => boolean {
  const ids = new Set<number>();
  const entities = new Set<string>();
  for (const binding of bindings) {
    ids.add(binding.id);
    entities.add(binding.entity);
  }
  return ({ bindings: aimed, named = aimed }) =>
    aimed.length === 0 ||
    (named.some((binding) => ids.has(binding.id)) &&
      named.every((binding) => ids.has(binding.id) || !entities.has(binding.entity)));
}

/**
 * Per instance, the candidates that may act on it: those aimed among its bindings (`aimedAmong`)
 * and, for candidates without a binding, those it is an event of, in candidate order; then those
 * aimed among the bindings its own events name. Instances with the
 * same candidates share one array.
 */
export function helpingCandidates(run: Run, candidates: readonly CandidateCall[]): CandidateCall[][] {
  const shared = new Map<string, CandidateCall[]>();
  return run.instances.map((instance, index) => {
    const among = aimedAmong(instance.bindings);
    const own = candidates.flatMap((candidate, position) =>
      (candidate.bindings.length === 0 ? candidate.affected.includes(index) : among(candidate))
        ? [position]
        : [],
    );
    // Then the calls on the other bindings the instance's own events name (the lookup of the order
    // a request to change its items is about: the order's rules gate the change).
    const near = aimedAmong(
      own.flatMap((position) => {
        const candidate = candidates[position] as CandidateCall;
        return candidate.affected.includes(index) ? (candidate.named ?? candidate.bindings) : [];
      }),
    );
    const positions = [
      ...own,
      ...candidates.flatMap((candidate, position) =>
        candidate.bindings.length > 0 && !own.includes(position) && near(candidate) ? [position] : [],
      ),
    ];
    const key = positions.join(",");
    const list = shared.get(key) ?? positions.map((position) => candidates[position] as CandidateCall);
    shared.set(key, list);
    return list;
  });
}

/**
 * Per candidate (by position) that repeats a call whose outcome the run observed, the positions of
 * its outcome cases consistent with that observation: those that give every instance it affects
 * the letter the observed outcome gives it. An observation is a fact (docs/policy.md, "The
 * game"): the environment answers the same call (same tool, same arguments, no other) the same
 * way again. A candidate that leaves some arguments open stands for the call the run made with
 * its arguments (`Run.observed`: a login for the user is the login made, not one with another
 * password that might fail). A candidate without arguments stands for calls of any arguments, so
 * no single observation restricts it.
 */
export function observedCases(run: Run, candidates: readonly CandidateCall[]): Map<number, number[]> {
  const restricted = new Map<number, number[]>();
  if (!run.observes) return restricted;
  candidates.forEach((candidate, position) => {
    if (candidate.cases.length < 2 || Object.keys(candidate.arguments).length === 0) return;
    const observed = run.observed(candidate.tool, candidate.arguments);
    if (!observed) return;
    const outcome = run.observedCases(observed);
    const masks: number[] = [];
    for (const index of candidate.affected) {
      const instance = run.instances[index] as Instance;
      const letters = run.lettersFor(instance, observed, outcome);
      // Not an event of the instance: the observed call made another choice of `when` predicates.
      if (letters === undefined) return;
      masks.push(instance.rule.automaton.letterMask(letters[0] as string[]));
    }
    const kept = candidate.effects.flatMap((effects, caseIndex) =>
      masks.every((mask, at) => effects[at] === mask) ? [caseIndex] : [],
    );
    if (kept.length > 0 && kept.length < candidate.cases.length) restricted.set(position, kept);
  });
  return restricted;
}

/** A candidate with only some of its outcome cases (their positions). */
export function withCases(candidate: CandidateCall, kept: readonly number[]): CandidateCall {
  return {
    ...candidate,
    cases: kept.map((caseIndex) => candidate.cases[caseIndex] as OutcomeCase),
    effects: kept.map((caseIndex) => candidate.effects[caseIndex] as Int32Array),
  };
}
