import { holdsIn, type Scope, type Value } from "../expression/index.js";
import { type AbstractMove, abstractMoves, type Policy, type PropositionSpec } from "../policy/index.js";

/** How a call's observation propositions resolve: one possible outcome. */
export interface OutcomeCase {
  /** `short`, `status confirmed`, … for explanations. */
  description: string;
  /** `o` for expressions (null when only the abstract outcome is known). */
  value: Value;
  /** For abstract outcomes: the outcome texts that hold. */
  abstract: AbstractMove | undefined;
}

/**
 * Each tool's outcome cases while its outcome is not known (they depend only on the policy),
 * built on first use. The runs derived from one `Run.start` share one catalog, so a tool's
 * cases are one array for all of them (templates memoize moves by that array).
 */
export class OutcomeCatalog {
  private readonly byTool = new Map<string, OutcomeCase[]>();

  constructor(private readonly policy: Policy) {}

  casesOf(tool: string): OutcomeCase[] {
    let known = this.byTool.get(tool);
    if (!known) {
      const spec = this.policy.tools.get(tool);
      const cases = new Map<string, OutcomeCase>();
      for (const move of spec ? abstractMoves(spec, [...this.policy.propositions.values()]) : []) {
        const outcomeCase = outcomeCaseOf(move);
        if (!cases.has(outcomeCase.description)) cases.set(outcomeCase.description, outcomeCase);
      }
      known = spec ? [...cases.values()] : [{ description: "result", value: null, abstract: undefined }];
      this.byTool.set(tool, known);
    }
    return known;
  }
}

/**
 * The outcome an abstract move stands for: a text tool's label (exact), or which of the tool's
 * outcome predicates hold (abstract, for JSON tools).
 */
export function outcomeCaseOf(move: AbstractMove): OutcomeCase {
  if (move.label !== undefined) {
    return { description: move.label ?? "no label", value: { label: move.label }, abstract: undefined };
  }
  const description = [...move.outcomeTrue].sort().join(" && ") || "no outcome condition holds";
  return { description, value: null, abstract: move };
}

export function outcomeHolds(proposition: PropositionSpec, outcomeCase: OutcomeCase, scope: Scope): boolean {
  if (!proposition.outcome) return true;
  if (outcomeCase.abstract) return outcomeCase.abstract.outcomeTrue.has(proposition.outcomeText as string);
  return holdsIn(proposition.outcome, { ...scope, outcome: outcomeCase.value });
}
