import PQueue from "p-queue";
import { MentorError } from "../errors/index.js";

/**
 * A bounded request queue: `concurrency` requests at once, at most `maxWaiting` more waiting in
 * arrival order; beyond that a request is refused (429).
 */
export class Admission {
  private readonly queue: PQueue;

  constructor(
    readonly concurrency: number,
    readonly maxWaiting: number,
  ) {
    this.queue = new PQueue({ concurrency });
  }

  get waiting(): number {
    return this.queue.size;
  }

  get running(): number {
    return this.queue.pending;
  }

  /**
   * Runs `task` once a slot is free. Rejects at once when the queue is full, and with the
   * signal's reason when it aborts: a waiting task leaves the queue; a running one frees its slot
   * at once (p-queue races it against the signal) and must stop on the signal itself, as a turn
   * does at its next token.
   */
  async run<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    if (this.queue.pending >= this.concurrency && this.queue.size >= this.maxWaiting)
      throw new MentorError(
        "MNT_ERR_QUEUE_FULL",
        `${this.queue.pending} requests are running and ${this.queue.size} waiting (the limit)`,
      );
    return (await this.queue.add(task, { signal })) as T;
  }
}
