import type { CallClass, CandidateCall, StrategyTemplate } from "../game/index.js";
import type { CallVerdict, ProposedCall } from "./types.js";

const rank: Record<CallClass, number> = { unsafe: 0, neutral: 1, progressing: 2 };

/**
 * The game's candidates as the calls `next` lists, each with its class. A candidate's arguments
 * are a call the run reads as the candidate's move where some arguments do
 * (`realizedArguments`); where none do, one listed call can stand for several candidates, and it
 * gets the worst of their classes: `decide` judges it as one of them. So a call `next` lists as
 * neutral or progressing is one `decide` does not block for its rules. Where several candidates
 * are one concrete call (the game aims a call at each binding it names, but a lookup of a student
 * steps the student's instances and the aid request's at once), `moveClass` classes the call as
 * `decide` judges it, by its whole move: one binding's neutral must not hide the other's progress.
 * So is a call whose arguments also name bindings its candidate is not aimed at (a declaration of
 * the minor asked for names the student too, whose rules may refuse it): `moveClass` is asked
 * with the candidate, and answers where the call's move reaches instances the candidate does not.
 */
export function listedCalls(
  template: StrategyTemplate,
  classOf: (candidate: CandidateCall) => CallClass,
  moveClass?: (call: ProposedCall, candidate?: CandidateCall) => CallClass | undefined,
): CallVerdict[] {
  const keyOf = (candidate: CandidateCall) => JSON.stringify([candidate.tool, candidate.arguments]);
  const worst = new Map<string, CallClass>();
  const several = new Set<string>();
  const classes = template.candidates.map((candidate) => {
    const own = classOf(candidate);
    const key = keyOf(candidate);
    const known = worst.get(key);
    if (known !== undefined && known !== own) several.add(key);
    worst.set(key, known === undefined || rank[own] < rank[known] ? own : known);
    return own;
  });
  const joint = new Map<string, CallClass | undefined>();
  return template.candidates.map((candidate, position) => {
    const key = keyOf(candidate);
    const call = { name: candidate.tool, arguments: candidate.arguments };
    if (moveClass && several.has(key) && !joint.has(key)) joint.set(key, moveClass(call));
    const whole = joint.has(key) ? joint.get(key) : moveClass?.(call, candidate);
    return { call, class: whole ?? worst.get(key) ?? (classes[position] as CallClass) };
  });
}
