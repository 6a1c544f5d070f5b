import { type Expression, holdsIn } from "../expression/index.js";
import { Automaton, type AutomatonOptions, type Formula } from "../logic/index.js";
import { possibleOutcomeSets } from "./outcome-choices.js";
import type { PropositionSpec, ToolSpec } from "./types.js";

/**
 * Abstract calls of one tool, as the game sees them: which of the tool's `when` predicates hold
 * (an agent choice) and which outcome came back (the environment's choice). For text tools the
 * outcome is one of the labels or none; for JSON tools each combination of the outcome
 * predicates that one output can make true (`possibleOutcomeSets`).
 */
export interface AbstractMove {
  tool: string;
  /** The `when` texts that hold; a proposition without `when` holds whenever its tool is called. */
  whenTrue: ReadonlySet<string>;
  /** Outcome texts that hold. */
  outcomeTrue: ReadonlySet<string>;
  /** For text tools: the label (null = none of them). */
  label?: string | null;
}

export function abstractMoves(tool: ToolSpec, propositions: readonly PropositionSpec[]): AbstractMove[] {
  const own = propositions.filter((proposition) => proposition.tool === tool.name);
  const whenTexts = unique(
    own.flatMap((proposition) => (proposition.whenText ? [proposition.whenText] : [])),
  );
  const outcomes = new Map<string, Expression>();
  for (const proposition of own) {
    if (proposition.outcome && proposition.outcomeText)
      outcomes.set(proposition.outcomeText, proposition.outcome);
  }
  const outcomeCases: { outcomeTrue: Set<string>; label?: string | null }[] = [];
  if (tool.output === "text") {
    for (const label of [...Object.keys(tool.labels), null]) {
      const outcomeTrue = new Set(
        [...outcomes]
          .filter(([, expression]) => holdsIn(expression, { outcome: { label } }))
          .map(([text]) => text),
      );
      outcomeCases.push({ outcomeTrue, label });
    }
  } else {
    for (const combination of outcomeSetsOf(tool, outcomes))
      outcomeCases.push({ outcomeTrue: new Set(combination) });
  }
  const moves: AbstractMove[] = [];
  for (const whenSubset of subsets(whenTexts)) {
    for (const outcomeCase of outcomeCases)
      moves.push({ tool: tool.name, whenTrue: new Set(whenSubset), ...outcomeCase });
  }
  return moves;
}

/** Per tool and set of outcome predicates, the combinations one output can make true (solved once). */
const outcomeSets = new WeakMap<ToolSpec, Map<string, string[][]>>();

function outcomeSetsOf(tool: ToolSpec, outcomes: ReadonlyMap<string, Expression>): string[][] {
  let known = outcomeSets.get(tool);
  if (!known) {
    known = new Map();
    outcomeSets.set(tool, known);
  }
  const key = [...outcomes.keys()].join("\u0000");
  let sets = known.get(key);
  if (!sets) {
    sets = possibleOutcomeSets(outcomes);
    known.set(key, sets);
  }
  return sets;
}

/** Whether a proposition holds for an abstract move of its tool. */
export function holdsForMove(proposition: PropositionSpec, move: AbstractMove): boolean {
  if (proposition.tool !== move.tool) return false;
  if (proposition.whenText !== undefined && !move.whenTrue.has(proposition.whenText)) return false;
  return proposition.outcomeText === undefined || move.outcomeTrue.has(proposition.outcomeText);
}

/** Whether the move names a binding of the proposition at all (its `when` holds), whatever the outcome. */
export function matchesForMove(proposition: PropositionSpec, move: AbstractMove): boolean {
  return (
    proposition.tool === move.tool &&
    (proposition.whenText === undefined || move.whenTrue.has(proposition.whenText))
  );
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function subsets<T>(values: readonly T[]): T[][] {
  return Array.from({ length: 2 ** values.length }, (_, mask) =>
    values.filter((_, bit) => (mask >>> bit) & 1),
  );
}

/**
 * The letters a rule can see: for every abstract call of every tool that is an event of the
 * rule, the set of the rule's propositions it makes true. With `naming` (the policy's
 * propositions over the rule's entities), a call is an event only where it names a binding of
 * one of them (some proposition of `naming` on its tool holds), as a rule's instance reads only
 * the calls that name one of its bindings: a proposition without entities (`any_dispense`) in a
 * rule over an entity is seen only together with one that names it. Without `naming` (a rule
 * without entities, or one that reads every call), every call of the tools is an event.
 */
export function ruleAlphabet(
  tools: readonly ToolSpec[],
  propositions: readonly PropositionSpec[],
  naming?: readonly PropositionSpec[],
): string[][] {
  // The empty letter: a call of another tool, or one that names another binding.
  const letters = new Map<string, string[]>([["", []]]);
  const considered = naming ? [...new Set([...propositions, ...naming])] : propositions;
  for (const tool of tools) {
    for (const move of abstractMoves(tool, considered)) {
      if (!(naming ?? propositions).some((proposition) => matchesForMove(proposition, move))) continue;
      const letter = propositions
        .filter((proposition) => holdsForMove(proposition, move))
        .map((proposition) => proposition.key);
      letters.set(letter.join(" "), letter);
    }
  }
  return [...letters.values()];
}

/**
 * A rule's automaton over the letters its instances can read (`ruleAlphabet` with `naming`). A
 * rule whose verdicts change with the empty letter (`G(a -> X b)`, `init`) reads every call of
 * the run, where its propositions without entities hold whatever the call names: it gets the
 * letters of every call of its tools.
 */
export function ruleAutomaton(
  formula: Formula,
  source: AutomatonOptions["source"],
  tools: readonly ToolSpec[],
  propositions: readonly PropositionSpec[],
  naming: readonly PropositionSpec[],
): Automaton {
  if (naming.length > 0) {
    const automaton = new Automaton(formula, { alphabet: ruleAlphabet(tools, propositions, naming), source });
    if (automaton.ignoresEmptyLetter()) return automaton;
  }
  return new Automaton(formula, { alphabet: ruleAlphabet(tools, propositions), source });
}
