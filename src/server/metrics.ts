import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ShieldMode, TurnResult } from "../agent/index.js";

const latencyBuckets = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The server's Prometheus metrics, in a registry of its own (two servers in one process do not mix). */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = this.counter("mentor_requests_total", "HTTP requests by route and status", [
    "route",
    "status",
  ]);
  private readonly promptTokens = this.counter(
    "mentor_prompt_tokens_total",
    "Prompt tokens evaluated (all generations of a turn)",
  );
  private readonly completionTokens = this.counter(
    "mentor_completion_tokens_total",
    "Tokens generated (all generations of a turn)",
  );
  private readonly proposed = this.counter(
    "mentor_calls_proposed_total",
    "Tool calls the model proposed, by shield mode",
    ["mode"],
  );
  private readonly blocked = this.counter(
    "mentor_calls_blocked_total",
    "Proposed calls the evaluator blocked, by shield mode",
    ["mode"],
  );
  private readonly repaired = this.counter(
    "mentor_calls_repaired_total",
    "Blocked calls whose advice repaired the arguments",
    ["mode"],
  );
  private readonly refusals = this.counter(
    "mentor_done_refusals_total",
    "Answers refused because duties were open",
    ["mode"],
  );
  private readonly exhausted = this.counter(
    "mentor_turns_exhausted_total",
    "Turns that ran out of regenerations",
    ["mode"],
  );
  private readonly recorderFailures = this.counter(
    "mentor_recorder_failures_total",
    "Flight records that could not be written (disk full, I/O error)",
  );
  private readonly decision = this.histogram(
    "mentor_decision_seconds",
    "Evaluator time per generation of a turn",
  );
  private readonly turn = this.histogram(
    "mentor_turn_seconds",
    "Wall time of a turn (grounding, generations, decisions)",
  );

  /** `queue` is read when the metrics are scraped. */
  constructor(queue: () => { waiting: number; running: number }) {
    new Gauge({
      name: "mentor_queue_depth",
      help: "Requests waiting for a free slot",
      registers: [this.registry],
      collect() {
        this.set(queue().waiting);
      },
    });
    new Gauge({
      name: "mentor_requests_running",
      help: "Requests being answered",
      registers: [this.registry],
      collect() {
        this.set(queue().running);
      },
    });
  }

  request(route: string, status: number): void {
    this.requests.inc({ route, status: String(status) });
  }

  turnDone(result: TurnResult, mode: ShieldMode): void {
    this.promptTokens.inc(result.mentor.usage.promptTokens);
    this.completionTokens.inc(result.mentor.usage.completionTokens);
    for (const attempt of result.mentor.attempts) {
      this.proposed.inc({ mode }, attempt.calls.length);
      this.decision.observe(attempt.decideMs / 1000);
    }
    this.blocked.inc({ mode }, result.mentor.blocked);
    this.repaired.inc({ mode }, result.mentor.repairs.length);
    this.refusals.inc({ mode }, result.mentor.doneRefusals);
    if (result.mentor.exhausted) this.exhausted.inc({ mode });
    this.turn.observe(result.mentor.timings.totalMs / 1000);
  }

  recorderFailed(): void {
    this.recorderFailures.inc();
  }

  private counter<Label extends string>(
    name: string,
    help: string,
    labelNames: Label[] = [],
  ): Counter<Label> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram(name: string, help: string): Histogram {
    return new Histogram({ name, help, buckets: latencyBuckets, registers: [this.registry] });
  }
}
