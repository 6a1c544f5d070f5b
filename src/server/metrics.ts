/** Prometheus text exposition of the server's counters, gauges and histograms (no dependency). */

type Labels = Record<string, string>;

const latencyBuckets = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60];

class Histogram {
  readonly counts = latencyBuckets.map(() => 0);
  sum = 0;
  count = 0;

  observe(value: number): void {
    latencyBuckets.forEach((bound, index) => {
      if (value <= bound) this.counts[index] = (this.counts[index] as number) + 1;
    });
    this.sum += value;
    this.count++;
  }
}

export class Metrics {
  private readonly counters = new Map<string, Map<string, number>>();
  private readonly histograms = new Map<string, Histogram>();
  private readonly help = new Map<string, [type: string, text: string]>();
  /** Read when the metrics are rendered. */
  private readonly gauges = new Map<string, () => number>();

  constructor() {
    this.describe("mentor_requests_total", "counter", "HTTP requests by route and status");
    this.describe(
      "mentor_prompt_tokens_total",
      "counter",
      "Prompt tokens evaluated (all generations of a turn)",
    );
    this.describe(
      "mentor_completion_tokens_total",
      "counter",
      "Tokens generated (all generations of a turn)",
    );
    this.describe("mentor_calls_proposed_total", "counter", "Tool calls the model proposed, by shield mode");
    this.describe(
      "mentor_calls_blocked_total",
      "counter",
      "Proposed calls the evaluator blocked, by shield mode",
    );
    this.describe(
      "mentor_calls_repaired_total",
      "counter",
      "Blocked calls whose advice repaired the arguments",
    );
    this.describe("mentor_done_refusals_total", "counter", "Answers refused because duties were open");
    this.describe("mentor_turns_exhausted_total", "counter", "Turns that ran out of regenerations");
    this.describe("mentor_decision_seconds", "histogram", "Evaluator time per generation of a turn");
    this.describe(
      "mentor_turn_seconds",
      "histogram",
      "Wall time of a turn (grounding, generations, decisions)",
    );
    this.describe("mentor_queue_depth", "gauge", "Requests waiting for a free slot");
    this.describe("mentor_requests_running", "gauge", "Requests being answered");
  }

  private describe(name: string, type: string, text: string): void {
    this.help.set(name, [type, text]);
  }

  increment(name: string, labels: Labels = {}, by = 1): void {
    const series = this.counters.get(name) ?? new Map<string, number>();
    this.counters.set(name, series);
    const key = labelText(labels);
    series.set(key, (series.get(key) ?? 0) + by);
  }

  observe(name: string, seconds: number): void {
    const histogram = this.histograms.get(name) ?? new Histogram();
    this.histograms.set(name, histogram);
    histogram.observe(seconds);
  }

  gauge(name: string, read: () => number): void {
    this.gauges.set(name, read);
  }

  render(): string {
    const lines: string[] = [];
    for (const [name, [type, text]] of this.help) {
      lines.push(`# HELP ${name} ${text}`, `# TYPE ${name} ${type}`);
      if (type === "counter") {
        const series = this.counters.get(name) ?? new Map([["", 0]]);
        for (const [labels, value] of series) lines.push(`${name}${labels} ${value}`);
      } else if (type === "gauge") {
        lines.push(`${name} ${this.gauges.get(name)?.() ?? 0}`);
      } else {
        const histogram = this.histograms.get(name) ?? new Histogram();
        latencyBuckets.forEach((bound, index) => {
          lines.push(`${name}_bucket{le="${bound}"} ${histogram.counts[index]}`);
        });
        lines.push(`${name}_bucket{le="+Inf"} ${histogram.count}`);
        lines.push(`${name}_sum ${histogram.sum}`, `${name}_count ${histogram.count}`);
      }
    }
    return `${lines.join("\n")}\n`;
  }
}

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  return `{${entries.map(([key, value]) => `${key}="${value.replace(/["\\\n]/g, "_")}"`).join(",")}}`;
}
