import type { Policy } from "../policy/index.js";
import {
  changedTask,
  contentText,
  type MessageFields,
  messagesError,
  readCall,
  readOutcome,
  readTaskCalls,
  readToolCall,
  refusedPrefix,
  stoppedPrefix,
  type TaskCall,
  type ToolCallEvent,
  type TraceEntry,
} from "./trace.js";

/** A call read from an assistant message, until it settles: whether a tool message answered it, and how. */
interface OpenCall {
  kind: "call";
  event: ToolCallEvent;
  answered: boolean;
  /** A tool message answered it with the shield's refusal (it stays refused, as `traceFromMessages` has it). */
  refused: boolean;
}

type OpenEntry = OpenCall | Exclude<TraceEntry, { kind: "made" | "refused" }>;

/** What one more message does to a reader (see `MessageReader.read`). */
export type ReadStep =
  | {
      reader: MessageReader;
      /** Entries the message settles, in order: from now on no later message changes them. */
      settled: TraceEntry[];
      /** Whether the message changes the task (a run starts from its task: the caller starts again). */
      taskChanged: boolean;
    }
  /** The message rewrites an entry already settled, or answers no call: read the whole history (`traceFromMessages`). */
  | { reread: string };

/**
 * `traceFromMessages` one message at a time, for a run cache that extends the run of a prefix
 * by the messages after it. Immutable: `read` returns a new reader and shares this one's parts.
 *
 * An entry settles once no later message can change it: a note at once, a call when a tool
 * message answers it and every entry before it has settled. Until then it is open; `unsettled`
 * gives the open entries as the trace of the messages read so far has them (a call without an
 * answer is made, with its outcome pending). A tool message that answers a settled call again
 * (which `traceFromMessages` applies to that call) or no call is left to `traceFromMessages`.
 */
export class MessageReader {
  private constructor(
    private readonly policy: Policy,
    /** The grounded task so far (every user message's `mentor.task`). */
    readonly task: readonly TaskCall[],
    /** From the first unsettled call on, in message order. */
    private readonly open: readonly OpenEntry[],
  ) {}

  static start(policy: Policy): MessageReader {
    return new MessageReader(policy, [], []);
  }

  /** Whether every entry read has settled (the run of the messages so far is the settled run). */
  get settled(): boolean {
    return this.open.length === 0;
  }

  /** The reader after `messages[index]`. Throws what `traceFromMessages` throws on a malformed message. */
  read(raw: unknown, index: number): ReadStep {
    const where = `messages[${index}]`;
    if (typeof raw !== "object" || raw === null) throw messagesError(`${where} must be an object`);
    const message = raw as MessageFields;
    const open = [...this.open];
    const task =
      message.role === "user" && message.mentor?.task !== undefined
        ? changedTask(this.task, readTaskCalls(message.mentor.task, `${where}.mentor.task`, this.policy))
        : this.task;
    const taskChanged = task !== this.task;
    if (message.role === "user" && message.mentor?.approve !== undefined) {
      const call = readCall(message.mentor.approve, `${where}.mentor.approve`, this.policy.tools, "tool");
      open.push({ kind: "approved", call });
    }
    if (message.role === "user" && message.mentor?.resume === true) open.push({ kind: "resumed" });
    if (message.role === "assistant" && contentText(message.content).startsWith(stoppedPrefix))
      open.push({ kind: "stopped", reason: contentText(message.content) });
    if (message.role === "assistant" && message.tool_calls !== undefined && message.tool_calls !== null) {
      if (!Array.isArray(message.tool_calls)) throw messagesError(`${where}.tool_calls must be an array`);
      message.tool_calls.forEach((call, callIndex) => {
        const event = readToolCall(call, `${where}.tool_calls[${callIndex}]`);
        open.push({ kind: "call", event, answered: false, refused: false });
      });
    }
    if (message.role === "tool") {
      if (typeof message.tool_call_id !== "string")
        throw messagesError(`${where}.tool_call_id must be a string`);
      const id = message.tool_call_id;
      // The latest call with the id answers, as in traceFromMessages: settled calls come before open ones.
      const at = open.findLastIndex((entry) => entry.kind === "call" && entry.event.id === id);
      if (at < 0) return { reread: `${where} answers a settled call or none` };
      const entry = open[at] as OpenCall;
      const refusal = contentText(message.content).startsWith(refusedPrefix);
      open[at] = {
        kind: "call",
        event: refusal
          ? entry.event
          : { ...entry.event, outcome: readOutcome(entry.event, message, this.policy, where) },
        answered: true,
        refused: entry.refused || refusal,
      };
    }
    const settled: TraceEntry[] = [];
    let first = 0;
    for (; first < open.length; first++) {
      const entry = open[first] as OpenEntry;
      if (entry.kind !== "call") settled.push(entry);
      else if (!entry.answered) break;
      else settled.push({ kind: entry.refused ? "refused" : "made", call: entry.event });
    }
    const reader =
      !taskChanged && first === 0 && open.length === this.open.length && !changed(this.open, open)
        ? this
        : new MessageReader(this.policy, task, open.slice(first));
    return { reader, settled, taskChanged };
  }

  /** The open entries as the trace of the messages read so far has them. */
  unsettled(): TraceEntry[] {
    return this.open.map((entry) =>
      entry.kind !== "call"
        ? entry
        : { kind: entry.answered && entry.refused ? "refused" : "made", call: entry.event },
    );
  }
}

function changed(before: readonly OpenEntry[], after: readonly OpenEntry[]): boolean {
  return before.some((entry, index) => entry !== after[index]);
}

/**
 * The fields of a message that reading it looks at (`traceFromMessages`, `MessageReader.read`):
 * role, content, tool_calls (id, function name and arguments), tool_call_id and mentor. Two
 * messages with the same read fields read the same; the other fields (`name`, `refusal`, a
 * call's `type`) are not compared.
 */
export interface ReadFields {
  role: unknown;
  content: unknown;
  tool_call_id: unknown;
  tool_calls: unknown;
  mentor: unknown;
}

/** A copy of a message's read fields (kept by a run cache to know the message again), or undefined. */
export function readFields(message: unknown): ReadFields | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const fields = message as Record<string, unknown>;
  const copy = {
    role: copyPlain(fields.role),
    content: copyPlain(fields.content),
    tool_call_id: copyPlain(fields.tool_call_id),
    tool_calls: copyPlain(fields.tool_calls),
    mentor: copyPlain(fields.mentor),
  };
  return Object.values(copy).includes(notPlain) ? undefined : copy;
}

const notPlain = Symbol("not plain data");

/** A deep copy of plain data (primitives, arrays, plain objects), or `notPlain` (a date, a map, a function…). */
function copyPlain(value: unknown): unknown {
  if (typeof value === "function" || typeof value === "symbol") return notPlain;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) {
      const item = copyPlain(value[index]);
      if (item === notPlain) return notPlain;
      copy[index] = item;
    }
    return copy;
  }
  if (!isPlainObject(value)) return notPlain;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copyPlain(value[key]);
    if (item === notPlain) return notPlain;
    // Defined, not assigned: a `__proto__` key (JSON.parse makes one) stays a plain member.
    if (key === "__proto__")
      Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true });
    else copy[key] = item;
  }
  return copy;
}

/**
 * Whether a message reads as the one whose fields were kept: the same read fields, as plain data
 * (a value that is an object of another kind than plain objects and arrays never compares equal;
 * key order counts, as it does in the arguments a run keeps). Reading looks at the message and
 * its calls through their properties only, so those are compared property by property.
 */
export function readsAs(message: unknown, kept: ReadFields): boolean {
  if (typeof message !== "object" || message === null) return false;
  const fields = message as Record<string, unknown>;
  return (
    fields.role === kept.role &&
    fields.tool_call_id === kept.tool_call_id &&
    samePlain(fields.content, kept.content) &&
    sameCalls(fields.tool_calls, kept.tool_calls) &&
    samePlain(fields.mentor, kept.mentor)
  );
}

/** Tool calls compared on what reading them looks at: each call's id, and its function's name and arguments. */
function sameCalls(calls: unknown, kept: unknown): boolean {
  if (calls === kept) return true;
  if (!Array.isArray(calls) || !Array.isArray(kept)) return samePlain(calls, kept);
  if (calls.length !== kept.length) return false;
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index] as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
    const other = kept[index] as typeof call;
    if (typeof call !== "object" || call === null || typeof other !== "object" || other === null) {
      if (!samePlain(call, other)) return false;
      continue;
    }
    if (call.id !== other.id) return false;
    const fn = call.function;
    const otherFn = other.function;
    if (typeof fn !== "object" || fn === null || typeof otherFn !== "object" || otherFn === null) {
      if (!samePlain(fn, otherFn)) return false;
      continue;
    }
    if (fn.name !== otherFn.name || !samePlain(fn.arguments, otherFn.arguments)) return false;
  }
  return true;
}

/**
 * Equality with kept plain data: primitives by `===`, arrays and plain objects member by member,
 * keys in order. `kept` is the cache's own copy, so an object is never `kept` itself.
 */
function samePlain(value: unknown, kept: unknown): boolean {
  if (value === kept) return true;
  if (typeof value !== "object" || typeof kept !== "object" || value === null || kept === null) return false;
  if (Array.isArray(value)) {
    if (!Array.isArray(kept) || value.length !== kept.length) return false;
    for (let index = 0; index < value.length; index++)
      if (!samePlain(value[index], kept[index])) return false;
    return true;
  }
  if (Array.isArray(kept) || !isPlainObject(value)) return false;
  const keys = Object.keys(value);
  const keptKeys = Object.keys(kept);
  if (keys.length !== keptKeys.length) return false;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    if (key !== keptKeys[index] || !samePlain(value[key], (kept as Record<string, unknown>)[key]))
      return false;
  }
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
