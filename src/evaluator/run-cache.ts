import { LRUCache } from "lru-cache";
import { type Trace, traceFromMessages } from "../monitor/index.js";
import type { Policy } from "../policy/index.js";
import { Monitor, type MonitorParts } from "./monitor.js";

/** Runs kept by conversation content (see `RunCache`). */
const RUN_CACHE_SIZE = 32;

/**
 * The monitors of recent conversations. The server rebuilds the run on every request and asks
 * several questions about the same conversation (next, then decide on each attempt), so the
 * most recently asked runs are kept by content. A cached monitor is only asked, never changed.
 */
export class RunCache {
  private readonly runs = new LRUCache<string, Monitor>({ max: RUN_CACHE_SIZE });

  constructor(
    private readonly policy: Policy,
    private readonly parts: MonitorParts,
  ) {}

  /** The monitor after a conversation (an OpenAI `messages` array or a trace). */
  get(history: unknown): Monitor {
    // Keyed by the history as given: reading the trace from messages costs more than the key.
    const key = historyKey(history);
    const cached = key === undefined ? undefined : this.runs.get(key);
    if (cached) return cached;
    const trace = isTrace(history) ? history : traceFromMessages(history, this.policy);
    const run = Monitor.fromTrace(this.parts, trace);
    if (key !== undefined) this.runs.set(key, run);
    return run;
  }
}

/** The cache key of a history: its JSON, or undefined when it has none (reading it then reports what is wrong). */
function historyKey(history: unknown): string | undefined {
  try {
    return JSON.stringify(history);
  } catch {
    return undefined;
  }
}

function isTrace(value: unknown): value is Trace {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    "calls" in value &&
    "task" in value
  );
}
