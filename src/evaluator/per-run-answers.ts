import type { Run } from "../run/index.js";

/**
 * Yes/no answers about calls on a run, kept per run and by key. Keyed by run because each answer
 * reads the whole run (a run with no compliant finish left blocks every call), so no part of it is
 * a key for another run's answer.
 */
export class PerRunAnswers {
  private readonly byRun = new WeakMap<Run, Map<string, boolean>>();

  answer(run: Run, key: string, compute: () => boolean): boolean {
    let known = this.byRun.get(run);
    if (!known) {
      known = new Map();
      this.byRun.set(run, known);
    }
    let answer = known.get(key);
    if (answer === undefined) {
      answer = compute();
      known.set(key, answer);
    }
    return answer;
  }
}
