import { LRUCache } from "lru-cache";
import { defaultRunCacheLimits } from "../base/defaults.js";
import { listItems, type PersistentList, withItem } from "../base/persistent-list.js";
import type { Policy } from "../policy/index.js";
import {
  MessageReader,
  type ReadFields,
  readFields,
  readsAs,
  type Trace,
  type TraceEntry,
  traceFromMessages,
} from "../run/index.js";
import { Monitor, type MonitorParts, type MonitorSnapshot } from "./monitor.js";

/** Bounds of a run cache (`EvaluatorOptions.runCache`). */
export interface RunCacheLimits {
  /**
   * Message prefixes kept (one per message of each conversation seen, shared by conversations
   * with a common start). Default 20,000. 0 keeps none: every question rebuilds the run from the
   * whole history (the reference the prefix cache is tested against).
   */
  maxMessages?: number;
  /**
   * Characters of the kept messages' read fields (their content, calls and `mentor` fields), in
   * all. Default 16,000,000 (about 32 MB of strings).
   */
  maxCharacters?: number;
}

/** Traces (not messages) kept by their JSON: only an exact repeat finds one. */
const TRACE_CACHE_SIZE = 32;

/** The state of reading a conversation up to one of its messages. */
interface PrefixState {
  reader: MessageReader;
  /** The monitor after the entries settled so far (those no later message changes). */
  settled: MonitorSnapshot;
  /** Every settled entry, newest first (replayed when a later message adds to the task). */
  entries: PersistentList<TraceEntry> | undefined;
}

/**
 * One message of a conversation in the prefix tree: its read fields, and the state of reading
 * up to it. `state` is undefined past a message `MessageReader` leaves to `traceFromMessages`
 * (it rewrites a settled call): the run of such a prefix is rebuilt from its whole history.
 */
class PrefixNode {
  /** The first child (most prefixes have one: the conversation went on one way). */
  private first: PrefixNode | undefined;
  /** The other children, by the message's first key (`firstKey`), then compared in full (`readsAs`). */
  private others: Map<unknown, PrefixNode[]> | undefined;
  /** The monitor after this prefix, unsettled entries included; computed when first asked. */
  answer: MonitorSnapshot | undefined;

  constructor(
    readonly parent: PrefixNode | undefined,
    readonly fields: ReadFields | undefined,
    readonly size: number,
    readonly state: PrefixState | undefined,
  ) {}

  child(message: unknown): PrefixNode | undefined {
    const first = this.first;
    if (!first) return undefined;
    if (readsAs(message, first.fields as ReadFields)) return first;
    return this.others
      ?.get(firstKey(message))
      ?.find((candidate) => readsAs(message, candidate.fields as ReadFields));
  }

  add(child: PrefixNode, message: unknown): void {
    if (!this.first) {
      this.first = child;
      return;
    }
    this.others ??= new Map();
    const key = firstKey(message);
    const siblings = this.others.get(key);
    if (siblings) siblings.push(child);
    else this.others.set(key, [child]);
  }

  remove(child: PrefixNode): void {
    if (this.first === child) {
      // The first of the others takes its place.
      this.first = undefined;
      for (const [key, siblings] of this.others ?? []) {
        this.first = siblings.shift();
        if (siblings.length === 0) this.others?.delete(key);
        break;
      }
      return;
    }
    for (const [key, siblings] of this.others ?? []) {
      const at = siblings.indexOf(child);
      if (at < 0) continue;
      siblings.splice(at, 1);
      if (siblings.length === 0) this.others?.delete(key);
      return;
    }
  }

  get leaf(): boolean {
    return this.first === undefined;
  }
}

/**
 * The monitors of the conversations an evaluator is asked about. The server is stateless (every
 * request carries the whole conversation), but each request shares all but its last messages
 * with an earlier one; so the run after each message prefix is kept in a tree of messages, and a
 * request walks the tree as far as its messages are known, then reads only the messages after
 * that point, stepping a copy of the monitor found there (`Monitor.fromSnapshot`; a kept state is
 * never changed). The walk compares each message's read fields (`readsAs`): a known prefix costs
 * a few property comparisons per message, a new message its reading and one step of the run.
 *
 * Bounded: at most `maxMessages` prefixes and `maxCharacters` of kept message fields. The least
 * recently asked conversations go first; a prefix that a kept conversation continues stays.
 */
export class RunCache {
  private readonly limits: Required<RunCacheLimits>;
  private rootNode: PrefixNode | undefined;
  /** Prefixes asked about (the ends of requests), least recently asked first. */
  private readonly ends = new Map<PrefixNode, true>();
  private nodeCount = 0;
  private characterCount = 0;
  private readonly traces = new LRUCache<string, Monitor>({ max: TRACE_CACHE_SIZE });

  constructor(
    private readonly policy: Policy,
    private readonly parts: MonitorParts,
    limits: RunCacheLimits = {},
  ) {
    this.limits = { ...defaultRunCacheLimits, ...limits };
  }

  /** The empty conversation (made when first asked: starting a run compiles the policy's automata). */
  private get root(): PrefixNode {
    if (!this.rootNode) {
      const start = new Monitor(this.parts, []).snapshot();
      this.rootNode = new PrefixNode(undefined, undefined, 0, {
        reader: MessageReader.start(this.policy),
        settled: start,
        entries: undefined,
      });
      this.rootNode.answer = start;
    }
    return this.rootNode;
  }

  /** Message prefixes kept now (for tests and benchmarks). */
  get size(): number {
    return this.nodeCount;
  }

  /**
   * The monitor after a conversation (an OpenAI `messages` array or a trace). A new monitor each
   * time, made from the kept state: asking or stepping it changes nothing kept.
   */
  get(history: unknown): Monitor {
    if (!Array.isArray(history)) return this.traceMonitor(history);
    if (this.limits.maxMessages <= 0) return this.rebuild(history);
    let node = this.root;
    let index = 0;
    for (; index < history.length; index++) {
      const child = node.child(history[index]);
      if (!child) break;
      node = child;
    }
    let kept = true;
    for (; index < history.length && kept; index++) {
      const next = this.extend(node, history, index);
      if (next) node = next;
      else kept = false;
    }
    if (node !== this.root) {
      this.ends.delete(node);
      this.ends.set(node, true);
      this.evict();
    }
    if (!kept) return this.rebuild(history);
    return Monitor.fromSnapshot(this.parts, this.answer(node, history));
  }

  /** The child of `node` for `history[index]`: read and stepped; undefined when the message cannot be kept. */
  private extend(node: PrefixNode, history: readonly unknown[], index: number): PrefixNode | undefined {
    const message = history[index];
    const fields = readFields(message);
    if (fields === undefined) return undefined;
    let state: PrefixState | undefined;
    if (node.state) {
      let step: ReturnType<MessageReader["read"]>;
      try {
        step = node.state.reader.read(message, index);
      } catch {
        // A malformed message: rebuilding from the whole history reports it as traceFromMessages does.
        return undefined;
      }
      if (!("reread" in step)) state = this.stepped(node.state, step.reader, step.settled, step.taskChanged);
    }
    const size = fieldSize(fields);
    const child = new PrefixNode(node, fields, size, state);
    node.add(child, message);
    this.nodeCount++;
    this.characterCount += size;
    return child;
  }

  /** The state after a message: the settled monitor stepped by what the message settled (from the start if it grew the task). */
  private stepped(
    state: PrefixState,
    reader: MessageReader,
    settled: readonly TraceEntry[],
    taskGrew: boolean,
  ): PrefixState {
    if (settled.length === 0 && !taskGrew) return { ...state, reader };
    let entries = state.entries;
    for (const entry of settled) entries = withItem(entries, entry);
    let monitor: Monitor;
    if (taskGrew) {
      monitor = new Monitor(this.parts, reader.task);
      for (const entry of listItems(entries)) monitor.apply(entry);
    } else {
      monitor = Monitor.fromSnapshot(this.parts, state.settled);
      for (const entry of settled) monitor.apply(entry);
    }
    return { reader, settled: monitor.snapshot(), entries };
  }

  /** The monitor after a prefix: the settled one stepped by the entries still open. */
  private answer(node: PrefixNode, history: readonly unknown[]): MonitorSnapshot {
    if (!node.answer) {
      if (!node.state) node.answer = this.rebuild(history).snapshot();
      else if (node.state.reader.settled) node.answer = node.state.settled;
      else {
        const monitor = Monitor.fromSnapshot(this.parts, node.state.settled);
        for (const entry of node.state.reader.unsettled()) monitor.apply(entry);
        node.answer = monitor.snapshot();
      }
    }
    return node.answer;
  }

  /** Drops the least recently asked conversations until the cache is within its limits. */
  private evict(): void {
    const { maxMessages, maxCharacters } = this.limits;
    for (const end of this.ends.keys()) {
      if (this.nodeCount <= maxMessages && this.characterCount <= maxCharacters) return;
      this.ends.delete(end);
      // A prefix that a kept conversation continues stays (it is no longer an end of its own).
      for (let node = end; node.leaf && node.parent && !this.ends.has(node); node = node.parent)
        this.remove(node);
    }
  }

  private remove(node: PrefixNode): void {
    (node.parent as PrefixNode).remove(node);
    this.nodeCount--;
    this.characterCount -= node.size;
  }

  /** The monitor rebuilt from the whole history (the reference; it reports malformed messages). */
  private rebuild(history: unknown): Monitor {
    return Monitor.fromTrace(this.parts, traceFromMessages(history, this.policy));
  }

  /** A trace's monitor, kept by the trace's JSON. */
  private traceMonitor(history: unknown): Monitor {
    let key: string | undefined;
    try {
      key = JSON.stringify(history);
    } catch {
      key = undefined;
    }
    const cached = key === undefined ? undefined : this.traces.get(key);
    if (cached) return Monitor.fromSnapshot(this.parts, cached.snapshot());
    const run = isTrace(history)
      ? Monitor.fromTrace(this.parts, history)
      : Monitor.fromTrace(this.parts, traceFromMessages(history, this.policy));
    if (key !== undefined) this.traces.set(key, run);
    return Monitor.fromSnapshot(this.parts, run.snapshot());
  }
}

/**
 * The key a message's siblings are told apart by first (then in full by `readsAs`): a tool
 * message's `tool_call_id`, an assistant message's first call id, else its content when a string.
 */
function firstKey(message: unknown): unknown {
  const fields = message as { tool_call_id?: unknown; tool_calls?: unknown; content?: unknown } | null;
  if (typeof fields?.tool_call_id === "string") return fields.tool_call_id;
  const calls = fields?.tool_calls;
  if (Array.isArray(calls) && typeof calls[0]?.id === "string") return calls[0].id;
  return typeof fields?.content === "string" ? fields.content : undefined;
}

/** About how many characters a message's kept fields hold. */
function fieldSize(fields: ReadFields): number {
  let size = 64;
  const visit = (value: unknown): void => {
    if (typeof value === "string") size += value.length;
    else if (Array.isArray(value)) for (const item of value) visit(item);
    else if (typeof value === "object" && value !== null)
      for (const [key, item] of Object.entries(value)) {
        size += key.length;
        visit(item);
      }
  };
  visit(fields);
  return size;
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
