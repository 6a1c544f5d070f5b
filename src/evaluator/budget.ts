import { defaultSearchLimits } from "../base/defaults.js";
import { MentorError } from "../errors/index.js";

/** Bounds of the evaluator's searches for advice (repairs, prerequisites, the token shield's redirects). */
export interface SearchLimits {
  /**
   * Calls a search may judge on hypothetical runs. Default 500. This is the bound that shapes
   * answers: it does not depend on the machine, so the same run gets the same advice.
   */
  maxDecisions?: number;
  /**
   * Milliseconds a search may run: a backstop for policies whose single decisions are slow (the
   * event loop is held no longer). Default 1,000.
   */
  maxMs?: number;
}

/**
 * What one search may still spend. A search asks `spend()` before each hypothetical decision and
 * stops when it answers false: the advice it found so far stands, none is guessed, and
 * `exhausted` says why it stopped (the call it was for stays blocked: the search fails closed).
 * `deadline` (a `Date.now()` time, e.g. a request's timeout) ends it earlier.
 */
export class SearchBudget {
  private decisions = 0;
  private readonly maxDecisions: number;
  private readonly maxMs: number;
  private readonly ends: number;
  exhausted: string | undefined;
  /** Set when a part of the search stopped at its own bound (`part`) while the rest went on. */
  partStopped: string | undefined;

  constructor(limits: SearchLimits = {}, deadline = Number.POSITIVE_INFINITY) {
    this.maxDecisions = limits.maxDecisions ?? defaultSearchLimits.maxDecisions;
    this.maxMs = limits.maxMs ?? defaultSearchLimits.maxMs;
    this.ends = Math.min(Date.now() + this.maxMs, deadline);
  }

  spend(): boolean {
    if (this.exhausted !== undefined) return false;
    this.decisions++;
    if (this.decisions > this.maxDecisions)
      this.exhausted = `the advice search stopped after ${this.maxDecisions} hypothetical decisions (its budget)`;
    else if (Date.now() > this.ends)
      this.exhausted = `the advice search stopped at its time limit (${this.maxMs} ms, or the request's deadline)`;
    return this.exhausted === undefined;
  }

  /** Decisions this budget may still spend. */
  get remaining(): number {
    return this.exhausted !== undefined ? 0 : Math.max(0, this.maxDecisions - this.decisions);
  }

  /**
   * A budget for one of several searches that spends at most `maxDecisions` of this one, so the
   * searches after it keep theirs: where the share runs out, that search stops and this budget's
   * `partStopped` says so (`what` names the search); where this budget runs out, the share does too.
   */
  share(maxDecisions: number, what: string): SearchBudget {
    return new SharedBudget(this, maxDecisions, what);
  }

  /**
   * A check of a part of the search that may spend at most `maxDecisions` of this budget (the
   * rest is kept for the searches after it): it answers like `spend()` until its own bound is hit,
   * which `partStopped` then records (`what` names the part).
   */
  part(maxDecisions: number, what: string): () => boolean {
    let spent = 0;
    return () => {
      if (spent >= maxDecisions) {
        this.partStopped ??= `${what} stopped after ${maxDecisions} hypothetical decisions (its share of the budget)`;
        return false;
      }
      spent++;
      return this.spend();
    };
  }
}

class SharedBudget extends SearchBudget {
  constructor(
    private readonly whole: SearchBudget,
    private readonly limit: number,
    private readonly what: string,
  ) {
    super({ maxDecisions: limit, maxMs: Number.POSITIVE_INFINITY });
  }

  override spend(): boolean {
    if (!super.spend()) {
      if (this.whole.exhausted === undefined)
        this.whole.partStopped ??= `${this.what} stopped after ${this.limit} hypothetical decisions (its share of the budget)`;
      return false;
    }
    if (this.whole.spend()) return true;
    this.exhausted = this.whole.exhausted;
    return false;
  }
}

/**
 * Lets the event loop run (other requests, /health, timers such as a request's timeout) between
 * bounded pieces of synchronous work, then throws the signal's reason if it was aborted meanwhile.
 */
export async function yieldToEventLoop(signal?: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  throwIfAborted(signal);
}

/** Throws the signal's reason (a cancellation where it is not an error) once it is aborted. */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted)
    throw signal.reason instanceof Error
      ? signal.reason
      : new MentorError("MNT_ERR_CANCELLED", "the request was cancelled");
}
