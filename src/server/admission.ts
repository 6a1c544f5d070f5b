import { MentorError } from "../errors/index.js";

/**
 * A bounded request queue: `running` requests at once, at most `maxWaiting` more waiting in
 * arrival order; beyond that a request is refused (429).
 */
export class Admission {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly concurrency: number,
    readonly maxWaiting: number,
  ) {}

  get depth(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  /** Resolves with a release function once the request may run; rejects when the queue is full or the signal aborts. */
  async enter(signal: AbortSignal): Promise<() => void> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxWaiting)
        throw new MentorError(
          "MNT_ERR_QUEUE_FULL",
          `${this.running} requests are running and ${this.waiting.length} waiting (the limit)`,
        );
      await new Promise<void>((resolve, reject) => {
        const wake = (): void => {
          signal.removeEventListener("abort", leave);
          resolve();
        };
        const leave = (): void => {
          this.waiting.splice(this.waiting.indexOf(wake), 1);
          reject(new MentorError("MNT_ERR_CANCELLED", "the request was cancelled while it waited"));
        };
        signal.addEventListener("abort", leave, { once: true });
        this.waiting.push(wake);
      });
    } else {
      this.running++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiting request.
      if (next) next();
      else this.running--;
    };
  }
}
