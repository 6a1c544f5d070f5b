import { type Expression, holdsIn } from "../expression/index.js";
import type { PropositionSpec, ToolSpec } from "./types.js";

/**
 * Abstract calls of one tool, as the game sees them: which of the tool's `when` predicates hold
 * (an agent choice) and which outcome came back (the environment's choice). For text tools the
 * outcome is one of the labels or none; for JSON tools every combination of the outcome
 * predicates is considered possible.
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
    for (const subset of subsets([...outcomes.keys()])) outcomeCases.push({ outcomeTrue: new Set(subset) });
  }
  const moves: AbstractMove[] = [];
  for (const whenSubset of subsets(whenTexts)) {
    for (const outcomeCase of outcomeCases)
      moves.push({ tool: tool.name, whenTrue: new Set(whenSubset), ...outcomeCase });
  }
  return moves;
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
 * The letters a rule can see: for every abstract call of every tool that names a binding of
 * one of the rule's propositions, the set of the rule's propositions it makes true.
 */
export function ruleAlphabet(
  tools: readonly ToolSpec[],
  propositions: readonly PropositionSpec[],
): string[][] {
  // The empty letter: a call of another tool, or one that names another binding.
  const letters = new Map<string, string[]>([["", []]]);
  for (const tool of tools) {
    for (const move of abstractMoves(tool, propositions)) {
      if (!propositions.some((proposition) => matchesForMove(proposition, move))) continue;
      const letter = propositions
        .filter((proposition) => holdsForMove(proposition, move))
        .map((proposition) => proposition.key);
      letters.set(letter.join(" "), letter);
    }
  }
  return [...letters.values()];
}
