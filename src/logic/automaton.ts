import { LRUCache } from "lru-cache";
import { MentorError, type SourceLocation } from "../errors/index.js";
import {
  type Atom,
  atomsOf,
  type Formula,
  formatFormula,
  isPastOperator,
  toNegationNormalForm,
} from "./formula.js";
import { parseFormula } from "./parser.js";
import { PastEvaluator } from "./past.js";
import { acceptsEmpty, progress, toDisjunctiveNormalForm } from "./progression.js";

/**
 * The verdict of a monitor after a trace prefix (RV-LTL's four colours):
 * - PERM_SAT: satisfied now and by every continuation;
 * - CURR_SAT: satisfied if the trace ends now, but some continuation violates;
 * - CURR_VIOL: violated if the trace ends now (an open duty), but some continuation repairs it;
 * - PERM_VIOL: no continuation satisfies the formula.
 */
export type Colour = "PERM_SAT" | "CURR_SAT" | "CURR_VIOL" | "PERM_VIOL";

/** A letter: the atoms (by key, e.g. `checked(route)`) true at one position of a trace. */
export type Letter = Iterable<string>;

export interface AutomatonOptions {
  /**
   * Letters over which continuations are explored for colours and `compile()`. Default:
   * every subset of the formula's atoms (allowed up to `maxPowersetAtoms` atoms).
   */
  alphabet?: readonly Letter[];
  /** Default 100,000. Exceeding it throws MNT_ERR_AUTOMATON_LIMIT. */
  maxStates?: number;
  /** What the formula is (`rule R1`) and where it was written: named in a limit error instead of the formula. */
  source?: { name: string; location?: SourceLocation };
  /** Default 16 (65,536 letters). */
  maxPowersetAtoms?: number;
}

/** Atoms and past subformulas are addressed by bit masks held in 32-bit integers. */
const MAX_ATOMS = 30;

/**
 * A DFA built lazily by progression. A state is a residual formula (in negation normal
 * form) plus the memory of the past evaluator. Letters are bit masks over `atoms`.
 * Transitions, acceptance and colours are computed on demand and memoized.
 */
export class Automaton {
  readonly formula: Formula;
  /** The formula's atoms; bit i of a letter mask stands for `atoms[i]`. */
  readonly atoms: readonly Atom[];
  readonly initial = 0;
  private readonly atomBit: Map<string, number>;
  private readonly pastRootBit: Map<number, number>;
  private readonly past: PastEvaluator;
  private readonly maxStates: number;
  private readonly alphabetMasks: readonly number[];
  private readonly source: AutomatonOptions["source"];

  private readonly residuals: Formula[] = [];
  private readonly memories: number[] = [];
  private readonly accepting: boolean[] = [];
  private readonly transitions: Map<number, number>[] = [];
  private readonly colours: (Colour | undefined)[] = [];
  private readonly stateIndex = new Map<string, number>();

  constructor(formula: Formula, options: AutomatonOptions = {}) {
    this.formula = formula;
    this.atoms = atomsOf(formula);
    if (this.atoms.length > MAX_ATOMS) {
      throw new MentorError(
        "MNT_ERR_FORMULA_TOO_LARGE",
        `the formula has ${this.atoms.length} atoms; at most ${MAX_ATOMS} are supported`,
      );
    }
    this.atomBit = new Map(this.atoms.map((atom, index) => [atom.key, index]));
    const normalized = toNegationNormalForm(formula);
    const roots = pastRootsOf(normalized);
    if (roots.length > MAX_ATOMS) {
      throw new MentorError(
        "MNT_ERR_FORMULA_TOO_LARGE",
        `the formula has ${roots.length} past subformulas; at most ${MAX_ATOMS} are supported`,
      );
    }
    this.past = new PastEvaluator(roots);
    this.pastRootBit = new Map(roots.map((root, index) => [root.id, index]));
    this.maxStates = options.maxStates ?? 100_000;
    this.source = options.source;
    this.alphabetMasks = options.alphabet
      ? [...new Set(options.alphabet.map((letter) => this.letterMask(letter)))]
      : powersetMasks(this.atoms.length, options.maxPowersetAtoms ?? 16);
    this.addState(normalized, this.past.initialMemory);
  }

  /** The number of states built so far (all reachable ones after `compile()`). */
  get stateCount(): number {
    return this.residuals.length;
  }

  /** The letters over which colours are computed, as masks. */
  get alphabet(): readonly number[] {
    return this.alphabetMasks;
  }

  /** The mask of a letter; atoms the formula does not mention are ignored. */
  letterMask(letter: Letter): number {
    let mask = 0;
    for (const key of letter) {
      const bit = this.atomBit.get(key);
      if (bit !== undefined) mask |= 1 << bit;
    }
    return mask;
  }

  step(state: number, letterMask: number): number {
    const known = this.transitions[state]?.get(letterMask);
    if (known !== undefined) return known;
    const { residual, memory } = this.successor(
      this.residuals[state] as Formula,
      this.memories[state] as number,
      letterMask,
    );
    const target = this.addState(residual, memory);
    (this.transitions[state] as Map<number, number>).set(letterMask, target);
    return target;
  }

  /**
   * One progression step without the automaton's memo: the residual and past memory after
   * reading `letterMask` from (`residual`, `memory`). `step` is this plus memoization.
   */
  successor(residual: Formula, memory: number, letterMask: number): { residual: Formula; memory: number } {
    const atomHolds = (atom: Formula): boolean =>
      ((letterMask >>> (this.atomBit.get((atom as Atom).key) as number)) & 1) === 1;
    const past = this.past.step(memory, atomHolds);
    const progressed = progress(residual, (literal) =>
      literal.kind === "atom"
        ? atomHolds(literal)
        : ((past.rootValues >>> (this.pastRootBit.get(literal.id) as number)) & 1) === 1,
    );
    return { residual: toDisjunctiveNormalForm(progressed), memory: past.memory };
  }

  /** The state reached from `from` (default: the initial state) after reading `trace`. */
  run(trace: Iterable<Letter>, from = this.initial): number {
    let state = from;
    for (const letter of trace) state = this.step(state, this.letterMask(letter));
    return state;
  }

  /** Whether a trace that ends in `state` satisfies the formula. */
  isAccepting(state: number): boolean {
    return this.accepting[state] as boolean;
  }

  /** What remains to be satisfied in `state` (in negation normal form; `END` = the trace ends). */
  residual(state: number): Formula {
    return this.residuals[state] as Formula;
  }

  colour(state: number): Colour {
    const known = this.colours[state];
    if (known) return known;
    this.colourReachable(state);
    return this.colours[state] as Colour;
  }

  /**
   * Whether the empty letter (a position where no atom holds) never changes what is accepted:
   * from every state reachable over the alphabet and the empty letter, reading it leads to a
   * state that accepts exactly the same continuations. Then every trace gets the verdict of the
   * same trace with its empty positions removed — the condition under which a monitor may skip
   * the positions that concern none of a formula's atoms. `G(a -> O b)` and `F a` ignore it;
   * `G(a -> X b)` and `a` (at the first position) do not. False also when the comparison
   * would exceed `maxStates`.
   */
  ignoresEmptyLetter(): boolean {
    if (this.emptyLetterIgnored === undefined) {
      try {
        this.emptyLetterIgnored = this.checkEmptyLetterIgnored();
      } catch (error) {
        if (!(error instanceof MentorError)) throw error;
        this.emptyLetterIgnored = false;
      }
    }
    return this.emptyLetterIgnored;
  }

  private emptyLetterIgnored: boolean | undefined;

  private checkEmptyLetterIgnored(): boolean {
    const letters = [...new Set([0, ...this.alphabetMasks])];
    const seen = new Set([this.initial]);
    const queue = [this.initial];
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head] as number;
      const after = this.step(state, 0);
      if (after !== state && !this.equivalentStates(state, after, letters)) return false;
      for (const letter of letters) {
        const next = this.step(state, letter);
        if (seen.has(next)) continue;
        if (seen.size >= this.maxStates) return false;
        seen.add(next);
        queue.push(next);
      }
    }
    return true;
  }

  /** Whether two states accept the same continuations over `letters` (a search for a word that tells them apart). */
  private equivalentStates(left: number, right: number, letters: readonly number[]): boolean {
    const seen = new Set([`${left},${right}`]);
    const queue: [number, number][] = [[left, right]];
    for (let head = 0; head < queue.length; head++) {
      const [one, other] = queue[head] as [number, number];
      if (this.isAccepting(one) !== this.isAccepting(other)) return false;
      for (const letter of letters) {
        const pair: [number, number] = [this.step(one, letter), this.step(other, letter)];
        const key = `${pair[0]},${pair[1]}`;
        if (pair[0] === pair[1] || seen.has(key)) continue;
        if (seen.size >= this.maxStates) return false;
        seen.add(key);
        queue.push(pair);
      }
    }
    return true;
  }

  /** Builds every state reachable over the alphabet and returns dense transition tables. */
  compile(): CompiledAutomaton {
    this.colourReachable(this.initial);
    const letters = this.alphabetMasks;
    const stateCount = this.stateCount;
    const transitions = new Int32Array(stateCount * letters.length);
    const accepting = new Uint8Array(stateCount);
    const colours: Colour[] = [];
    for (let state = 0; state < stateCount; state++) {
      letters.forEach((mask, index) => {
        transitions[state * letters.length + index] = this.step(state, mask);
      });
      accepting[state] = this.accepting[state] ? 1 : 0;
      colours.push(this.colour(state));
    }
    return new CompiledAutomaton(this.atoms, letters, transitions, accepting, colours);
  }

  describeState(state: number): string {
    return `${formatFormula(this.residual(state))}${this.memories[state] ? ` [past ${this.memories[state]}]` : ""}`;
  }

  private addState(residual: Formula, memory: number): number {
    const key = `${residual.id}:${memory}`;
    const known = this.stateIndex.get(key);
    if (known !== undefined) return known;
    if (this.residuals.length >= this.maxStates) {
      const what = this.source?.name ?? formatFormula(this.formula);
      throw new MentorError(
        "MNT_ERR_AUTOMATON_LIMIT",
        `the automaton of ${what} exceeds ${this.maxStates} states`,
        this.source?.location,
      );
    }
    const state = this.residuals.length;
    this.stateIndex.set(key, state);
    this.residuals.push(residual);
    this.memories.push(memory);
    this.accepting.push(acceptsEmpty(residual));
    this.transitions.push(new Map());
    this.colours.push(undefined);
    return state;
  }

  /** Explores every state reachable from `from` over the alphabet and colours them all. */
  private colourReachable(from: number): void {
    const reachable = [from];
    const seen = new Set<number>(reachable);
    const predecessors = new Map<number, number[]>();
    for (let index = 0; index < reachable.length; index++) {
      const state = reachable[index] as number;
      for (const mask of this.alphabetMasks) {
        const target = this.step(state, mask);
        const list = predecessors.get(target);
        if (list) list.push(state);
        else predecessors.set(target, [state]);
        if (!seen.has(target)) {
          seen.add(target);
          reachable.push(target);
        }
      }
    }
    const canReach = (accepting: boolean): Set<number> => {
      const found = new Set(reachable.filter((state) => this.accepting[state] === accepting));
      const queue = [...found];
      while (queue.length > 0) {
        for (const predecessor of predecessors.get(queue.pop() as number) ?? []) {
          if (!found.has(predecessor)) {
            found.add(predecessor);
            queue.push(predecessor);
          }
        }
      }
      return found;
    };
    const toAccepting = canReach(true);
    const toRejecting = canReach(false);
    for (const state of reachable) {
      this.colours[state] = colourOf(
        this.accepting[state] as boolean,
        toAccepting.has(state),
        toRejecting.has(state),
      );
    }
  }
}

function colourOf(accepting: boolean, canAccept: boolean, canReject: boolean): Colour {
  if (!canReject) return "PERM_SAT";
  if (!canAccept) return "PERM_VIOL";
  return accepting ? "CURR_SAT" : "CURR_VIOL";
}

/** A fully built automaton as dense tables: one step is one array read. */
export class CompiledAutomaton {
  readonly stateCount: number;
  readonly initial = 0;

  constructor(
    readonly atoms: readonly Atom[],
    /** Letter masks; a letter's index in this list is its column in `transitions`. */
    readonly letters: readonly number[],
    readonly transitions: Int32Array,
    readonly accepting: Uint8Array,
    readonly colours: readonly Colour[],
  ) {
    this.stateCount = accepting.length;
  }

  step(state: number, letterIndex: number): number {
    return this.transitions[state * this.letters.length + letterIndex] as number;
  }
}

function pastRootsOf(formula: Formula): Formula[] {
  const roots = new Map<number, Formula>();
  const walk = (node: Formula): void => {
    if (isPastOperator(node)) {
      roots.set(node.id, node);
      return;
    }
    if ("operand" in node) walk(node.operand);
    else if ("left" in node) {
      walk(node.left);
      walk(node.right);
    } else if ("operands" in node) node.operands.forEach(walk);
  };
  walk(formula);
  return [...roots.values()];
}

function powersetMasks(atomCount: number, maxPowersetAtoms: number): number[] {
  if (atomCount > maxPowersetAtoms) {
    throw new MentorError(
      "MNT_ERR_FORMULA_TOO_LARGE",
      `the formula has ${atomCount} atoms; exploring every subset needs at most ${maxPowersetAtoms} (pass an explicit alphabet)`,
    );
  }
  return Array.from({ length: 2 ** atomCount }, (_, mask) => mask);
}

/** Automata by formula, for callers that evaluate many traces of few formulas (bounded LRU). */
export class AutomatonCache {
  private readonly entries: LRUCache<string, Automaton>;

  constructor(capacity = 1000) {
    this.entries = new LRUCache({ max: capacity });
  }

  get(formulaText: string): Automaton {
    const cached = this.entries.get(formulaText);
    if (cached) return cached;
    const automaton = new Automaton(parseFormula(formulaText));
    this.entries.set(formulaText, automaton);
    return automaton;
  }
}
