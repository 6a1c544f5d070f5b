import type { Automaton } from "../logic/index.js";
import type { Run } from "../run/index.js";
import type { CandidateCall } from "./candidates.js";
import { type Component, componentsOf } from "./components.js";

/** A state an exploration reached: how (the step from its parent) and where its calls lead. */
export interface ExploredState {
  state: Int32Array;
  /** Index of the state it was first reached from; -1 for the start. */
  parent: number;
  step?: { candidate: CandidateCall; caseIndex: number };
  /** Indices of the states its calls lead to (each call and outcome, known states only). */
  next: number[];
}

/** The states reachable from the start, breadth-first; `complete` unless `maxStates` cut it. */
export interface Exploration {
  states: ExploredState[];
  complete: boolean;
}

/**
 * The game of one group of rule instances on its own: the instances some call steps together
 * (a component, `componentsOf`) and the calls that step them. Groups that no call links evolve
 * independently, so a policy's joint game is their product: it has a compliant finish when each
 * group has one, and a state of it is lost exactly when the state of some group is. A group's
 * states hold only its own instances, so what lint spends on a group grows with the group, not
 * with the policy. Each search visits at most `maxStates` states.
 */
export class GroupGame {
  private readonly automata: Automaton[];
  /** Positions (in the group) of the block-mode instances: those a compliant finish must satisfy. */
  readonly blocks: number[];

  constructor(
    readonly run: Run,
    readonly group: Component,
    readonly maxStates: number,
  ) {
    this.automata = group.instances.map((index) => run.instances[index]?.rule.automaton as Automaton);
    this.blocks = group.instances.flatMap((index, position) =>
      run.instances[index]?.rule.mode === "block" ? [position] : [],
    );
  }

  /** The group's part of the run's (first) belief. */
  start(): Int32Array {
    const belief = this.run.beliefs[0] as Int32Array;
    return Int32Array.from(this.group.instances, (index) => belief[index] as number);
  }

  /** The run's instance at a position of the group. */
  instance(position: number): number {
    return this.group.instances[position] as number;
  }

  successor(state: Int32Array, candidate: CandidateCall, caseIndex: number): Int32Array {
    const masks = candidate.effects[caseIndex] as Int32Array;
    const next = Int32Array.from(state);
    candidate.affected.forEach((index, at) => {
      const position = this.group.slot.get(index);
      if (position === undefined) return;
      next[position] = (this.automata[position] as Automaton).step(
        state[position] as number,
        masks[at] as number,
      );
    });
    return next;
  }

  /** Whether one of the positions (default: the block instances) is permanently violated. */
  doomed(state: Int32Array, positions: readonly number[] = this.blocks): boolean {
    return positions.some((position) => this.lost(state, position));
  }

  lost(state: Int32Array, position: number): boolean {
    return (this.automata[position] as Automaton).colour(state[position] as number) === "PERM_VIOL";
  }

  /** Whether every one of the positions (default: the block instances) accepts. */
  accepting(state: Int32Array, positions: readonly number[] = this.blocks): boolean {
    return positions.every((position) =>
      (this.automata[position] as Automaton).isAccepting(state[position] as number),
    );
  }

  /**
   * Breadth-first from the start over the group's calls (default: all of them), each state once;
   * with `skipDoomed`, a call that dooms a block instance leads nowhere.
   */
  explore(options: { skipDoomed: boolean; candidates?: readonly CandidateCall[] }): Exploration {
    const candidates = options.candidates ?? this.group.candidates;
    const states: ExploredState[] = [{ state: this.start(), parent: -1, next: [] }];
    const known = new Map([[(states[0] as ExploredState).state.join(","), 0]]);
    let complete = true;
    for (let at = 0; at < states.length; at++) {
      const node = states[at] as ExploredState;
      for (const candidate of candidates) {
        for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
          const successor = this.successor(node.state, candidate, caseIndex);
          if (options.skipDoomed && this.doomed(successor)) continue;
          const key = successor.join(",");
          let target = known.get(key);
          if (target === undefined) {
            if (states.length >= this.maxStates) {
              complete = false;
              continue;
            }
            target = states.length;
            known.set(key, target);
            states.push({ state: successor, parent: at, step: { candidate, caseIndex }, next: [] });
          }
          node.next.push(target);
        }
      }
    }
    return { states, complete };
  }

  /**
   * Per explored state, whether it reaches a state where the block instances all accept (through
   * explored states: exact for a complete exploration, a lower bound for a cut one).
   */
  finishing(exploration: Exploration): boolean[] {
    const { states } = exploration;
    const before: number[][] = states.map(() => []);
    states.forEach((node, at) => {
      for (const target of node.next) before[target]?.push(at);
    });
    const finishing = states.map((node) => this.accepting(node.state));
    const queue = finishing.flatMap((finishes, at) => (finishes ? [at] : []));
    for (let at = 0; at < queue.length; at++) {
      for (const previous of before[queue[at] as number] ?? []) {
        if (finishing[previous]) continue;
        finishing[previous] = true;
        queue.push(previous);
      }
    }
    return finishing;
  }

  /**
   * Fewest calls from `state` to a state where the positions all accept, none of them permanently
   * violated on the way; Infinity if there is none, undefined past `maxStates` states.
   */
  distance(
    state: Int32Array,
    options: { positions?: readonly number[]; candidates?: readonly CandidateCall[] } = {},
  ): number | undefined {
    const positions = options.positions ?? this.blocks;
    const candidates = options.candidates ?? this.group.candidates;
    if (this.doomed(state, positions)) return Number.POSITIVE_INFINITY;
    const key = (current: Int32Array): string => positions.map((position) => current[position]).join(",");
    const seen = new Set([key(state)]);
    let layer = [state];
    for (let depth = 0; layer.length > 0; depth++) {
      const next: Int32Array[] = [];
      for (const current of layer) {
        if (this.accepting(current, positions)) return depth;
        for (const candidate of candidates) {
          for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
            const successor = this.successor(current, candidate, caseIndex);
            const successorKey = key(successor);
            if (seen.has(successorKey) || this.doomed(successor, positions)) continue;
            if (seen.size >= this.maxStates) return undefined;
            seen.add(successorKey);
            next.push(successor);
          }
        }
      }
      layer = next;
    }
    return Number.POSITIVE_INFINITY;
  }

  /** The calls that lead from the start to an explored state, described. */
  path(exploration: Exploration, at: number): string[] {
    const path: string[] = [];
    for (let node = exploration.states[at]; node?.step; node = exploration.states[node.parent])
      path.push(describeCandidate(node.step.candidate, node.step.caseIndex));
    return path.reverse();
  }
}

/**
 * The games of the groups the candidates link among a run's instances: its block-mode instances
 * (what contradictions and traps are about), or all of them (shadowing reads warn and record
 * rules too).
 */
export function groupGames(
  run: Run,
  candidates: readonly CandidateCall[],
  options: { instances: "block" | "all"; maxStates: number },
): GroupGame[] {
  const instances = run.instances.flatMap((instance, index) =>
    options.instances === "all" || instance.rule.mode === "block" ? [index] : [],
  );
  return componentsOf(run, instances, candidates, new Map()).map(
    (group) => new GroupGame(run, group, options.maxStates),
  );
}

function describeCandidate(candidate: CandidateCall, caseIndex: number): string {
  const args = Object.entries(candidate.arguments).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  const outcome = candidate.cases.length > 1 ? ` → ${candidate.cases[caseIndex]?.description}` : "";
  return `${candidate.tool}(${args.join(", ")})${outcome}`;
}
