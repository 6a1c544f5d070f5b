import type { CandidateCall } from "../game/index.js";
import type { Instance, Run } from "../run/index.js";

/**
 * Whether a move's outcome case breaks a block rule's instance for good whatever calls come first:
 * from every state the instance's automaton can reach (over any letters, so more than the calls
 * can reach), the case's letter leads to a permanent violation (a flight on a route asked for by
 * train; a flight after the route was found short). No sequence of steps can allow it then.
 */
export function blockedForGood(run: Run, move: CandidateCall, caseIndex: number): boolean {
  const lost = run.lostInstances();
  const masks = move.effects[caseIndex] as Int32Array;
  return move.affected.some((index, position) => {
    const instance = run.instances[index] as Instance;
    if (instance.rule.mode !== "block" || lost.has(index)) return false;
    const automaton = instance.rule.automaton;
    const mask = masks[position] as number;
    return run.beliefs.every((belief) => {
      const seen = new Set([belief[index] as number]);
      const open = [...seen];
      for (let state = open.pop(); state !== undefined; state = open.pop()) {
        if (automaton.colour(automaton.step(state, mask)) !== "PERM_VIOL") return false;
        for (const letter of automaton.alphabet) {
          const next = automaton.step(state, letter);
          if (seen.has(next) || automaton.colour(next) === "PERM_VIOL") continue;
          seen.add(next);
          open.push(next);
        }
      }
      return true;
    });
  });
}
