import type { CallClass, CandidateCall, StrategyTemplate } from "../game/index.js";
import type { CallVerdict } from "./types.js";

const rank: Record<CallClass, number> = { unsafe: 0, neutral: 1, progressing: 2 };

/**
 * The game's candidates as the calls `next` lists, each with its class. A candidate's arguments
 * are a call the run reads as the candidate's move where some arguments do
 * (`realizedArguments`); where none do, one listed call can stand for several candidates, and it
 * gets the worst of their classes: `decide` judges it as one of them. So a call `next` lists as
 * neutral or progressing is one `decide` does not block for its rules.
 */
export function listedCalls(
  template: StrategyTemplate,
  classOf: (candidate: CandidateCall) => CallClass,
): CallVerdict[] {
  const keyOf = (candidate: CandidateCall) => JSON.stringify([candidate.tool, candidate.arguments]);
  const worst = new Map<string, CallClass>();
  const classes = template.candidates.map((candidate) => {
    const own = classOf(candidate);
    const known = worst.get(keyOf(candidate));
    worst.set(keyOf(candidate), known === undefined || rank[own] < rank[known] ? own : known);
    return own;
  });
  return template.candidates.map((candidate, position) => ({
    call: { name: candidate.tool, arguments: candidate.arguments },
    class: worst.get(keyOf(candidate)) ?? (classes[position] as CallClass),
  }));
}
