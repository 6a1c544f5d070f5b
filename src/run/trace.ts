import { MentorError } from "../errors/index.js";
import { type Value, valuesEqual } from "../expression/index.js";
import { argumentProblems, outputFieldValues, type Parameter, type Policy } from "../policy/index.js";

/** A pseudo call grounded from the task (`request_travel(origin, destination, urgent)`). */
export interface TaskCall {
  name: string;
  arguments: Record<string, Value>;
}

/** What came back from a tool call, as far as the evaluator can tell. */
export type Outcome =
  /** Not answered yet (the call is the last thing in the conversation). */
  | { kind: "pending" }
  /**
   * A text tool's output placed under one of its labels, or under none (label null), with the
   * values its declared fields read from the text (null where a field's pattern does not match).
   */
  | { kind: "label"; label: string | null; fields?: Record<string, Value> }
  /** A JSON tool's output. */
  | { kind: "json"; value: Value }
  /** The output could not be read or placed: every outcome counts as possible. */
  | { kind: "unknown"; reason: string };

export interface ToolCallEvent {
  id: string;
  name: string;
  arguments: Record<string, Value>;
  outcome: Outcome;
}

/**
 * What happened in a run besides its made calls, for severities (docs/policy.md, "Severities"):
 * a call the shield refused (its tool result is the shield's `[SHIELD] Blocked` feedback), a
 * person's approval of a call (`mentor.approve` on a user message), a stop (an assistant message
 * that begins `[SHIELD] Stopped`) and a resume (`mentor.resume: true` on a user message).
 * `position` is the number of made calls before it.
 */
export type TraceNote =
  | { kind: "refused"; position: number; call: ToolCallEvent }
  | { kind: "approved"; position: number; call: TaskCall }
  | { kind: "stopped"; position: number; reason: string }
  | { kind: "resumed"; position: number };

/** The run so far: the grounded task and every tool call with its outcome, in order. */
export interface Trace {
  task: TaskCall[];
  calls: ToolCallEvent[];
  /** In order; absent means none. */
  notes?: TraceNote[];
  /**
   * Per task call, the number of made calls before the user message that gave it (a request made
   * later in the conversation); absent means every task call came before the first made call.
   */
  taskAt?: number[];
}

/**
 * One thing a run is made of, in the order its messages say: a made call (with its outcome), a
 * call the shield refused, and the notes (`TraceNote`) without their positions. A monitor steps by
 * each in turn (`Monitor.apply`).
 */
export type TraceEntry = { kind: "made"; call: ToolCallEvent } | UnplacedNote;

/** A trace's calls and notes as entries, in order (a note at position p comes before call p). */
export function traceEntries(trace: Trace): TraceEntry[] {
  const entries: TraceEntry[] = [];
  const notes = trace.notes ?? [];
  let next = 0;
  const notesUpTo = (position: number): void => {
    for (; next < notes.length && (notes[next]?.position ?? 0) <= position; next++) {
      const { position: _, ...note } = notes[next] as TraceNote;
      entries.push(note as UnplacedNote);
    }
  };
  trace.calls.forEach((call, position) => {
    notesUpTo(position);
    entries.push({ kind: "made", call });
  });
  notesUpTo(trace.calls.length);
  return entries;
}

/** A note before its position is known. */
export type UnplacedNote = {
  [K in TraceNote["kind"]]: Omit<Extract<TraceNote, { kind: K }>, "position">;
}[TraceNote["kind"]];

/** The start of the shield's feedback for a refused call, and of its message for a stopped run. */
export const refusedPrefix = "[SHIELD] Blocked";
export const stoppedPrefix = "[SHIELD] Stopped";

/** The parts of an OpenAI chat message the evaluator reads; `mentor` carries grounded facts. */
export interface MessageFields {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
  /**
   * User message: `{task: [{name, arguments}]}`, `{approve: {name, arguments}}`, `{resume: true}`.
   * Tool message: `{label: "short"}`, and `{fields: {…}}` where the values read from the text
   * are given instead (a flight record's outcome, whose text is not kept).
   */
  mentor?: { task?: unknown; label?: unknown; fields?: unknown; approve?: unknown; resume?: unknown };
}

/**
 * Rebuilds the trace from an OpenAI `messages` array. Task pseudo calls come from the
 * `mentor.task` field of user messages (until the labeler grounds them from text); a text
 * tool's label from the `mentor.label` field of its tool message; a JSON tool's outcome from
 * its content. Structural problems are errors that name the message and field.
 */
export function traceFromMessages(messages: unknown, policy: Policy): Trace {
  if (!Array.isArray(messages)) throw messagesError("messages must be an array");
  // Calls, notes and the task calls each user message gave, in message order; a call is refused
  // once its tool message says so.
  const order: (ToolCallEvent | UnplacedNote | { kind: "task"; changes: TaskChange[] })[] = [];
  const refused = new Set<ToolCallEvent>();
  const byId = new Map<string, ToolCallEvent>();
  messages.forEach((raw, index) => {
    const where = `messages[${index}]`;
    if (typeof raw !== "object" || raw === null) throw messagesError(`${where} must be an object`);
    const message = raw as MessageFields;
    if (message.role === "user" && message.mentor?.task !== undefined) {
      order.push({
        kind: "task",
        changes: readTaskCalls(message.mentor.task, `${where}.mentor.task`, policy),
      });
    }
    if (message.role === "user" && message.mentor?.approve !== undefined) {
      const call = readCall(message.mentor.approve, `${where}.mentor.approve`, policy.tools, "tool");
      order.push({ kind: "approved", call });
    }
    if (message.role === "user" && message.mentor?.resume === true) order.push({ kind: "resumed" });
    if (message.role === "assistant" && contentText(message.content).startsWith(stoppedPrefix))
      order.push({ kind: "stopped", reason: contentText(message.content) });
    if (message.role === "assistant" && message.tool_calls !== undefined && message.tool_calls !== null) {
      if (!Array.isArray(message.tool_calls)) throw messagesError(`${where}.tool_calls must be an array`);
      message.tool_calls.forEach((call, callIndex) => {
        const event = readToolCall(call, `${where}.tool_calls[${callIndex}]`);
        order.push(event);
        byId.set(event.id, event);
      });
    }
    if (message.role === "tool") {
      if (typeof message.tool_call_id !== "string")
        throw messagesError(`${where}.tool_call_id must be a string`);
      const event = byId.get(message.tool_call_id);
      if (!event) {
        throw messagesError(
          `${where}.tool_call_id ${JSON.stringify(message.tool_call_id)} answers no earlier tool call`,
        );
      }
      if (contentText(message.content).startsWith(refusedPrefix)) refused.add(event);
      else event.outcome = readOutcome(event, message, policy, where);
    }
  });
  const calls: ToolCallEvent[] = [];
  const notes: TraceNote[] = [];
  // The standing task, and where each of its calls arrived (the calls made before its message).
  let task: readonly TaskCall[] = [];
  const arrivedAt = new Map<TaskCall, number>();
  for (const entry of order) {
    if (!("kind" in entry)) {
      if (refused.has(entry)) notes.push({ kind: "refused", position: calls.length, call: entry });
      else calls.push(entry);
    } else if (entry.kind === "task") {
      task = changedTask(task, entry.changes);
      for (const call of task) if (!arrivedAt.has(call)) arrivedAt.set(call, calls.length);
    } else notes.push({ ...entry, position: calls.length } as TraceNote);
  }
  const taskAt = task.map((call) => arrivedAt.get(call) ?? 0);
  return {
    task: [...task],
    calls,
    ...(notes.length > 0 ? { notes } : {}),
    ...(taskAt.some((position) => position > 0) ? { taskAt } : {}),
  };
}

/**
 * A task call as a user message gives it: a request (added unless it stands already), one that
 * `amends` the standing call of its name (replaces the latest), or one that `withdraws` it.
 */
export interface TaskChange extends TaskCall {
  change?: "amends" | "withdraws";
}

export function readTaskCalls(raw: unknown, where: string, policy: Policy): TaskChange[] {
  if (!Array.isArray(raw)) throw messagesError(`${where} must be an array of {name, arguments}`);
  return raw.map((item, index) => {
    const call = readCall(item, `${where}[${index}]`, policy.taskCalls, "task call");
    const { amends, withdraws } = item as { amends?: unknown; withdraws?: unknown };
    for (const [key, flag] of Object.entries({ amends, withdraws }))
      if (flag !== undefined && typeof flag !== "boolean")
        throw messagesError(`${where}[${index}].${key} must be true or false`);
    if (amends === true && withdraws === true)
      throw messagesError(`${where}[${index}] cannot both amend and withdraw a request`);
    return amends === true
      ? { ...call, change: "amends" }
      : withdraws === true
        ? { ...call, change: "withdraws" }
        : call;
  });
}

/**
 * The standing task after a message's task calls (docs/policy.md, "Amended requests"): a request
 * is added unless it stands already; one that amends replaces the latest standing call of its
 * name (or is added when there is none); one that withdraws removes the latest standing call of
 * its name whose arguments include the given ones. The same array when nothing changes.
 */
export function changedTask(
  standing: readonly TaskCall[],
  changes: readonly TaskChange[],
): readonly TaskCall[] {
  let task = standing;
  for (const { change, ...call } of changes) {
    const ofName = (other: TaskCall): boolean => other.name === call.name;
    if (change === "withdraws") {
      const at = task.findLastIndex(
        (other) =>
          ofName(other) &&
          Object.entries(call.arguments).every(([field, value]) =>
            valuesEqual(other.arguments[field] ?? null, value),
          ),
      );
      if (at >= 0) task = task.filter((_, index) => index !== at);
      continue;
    }
    if (task.some((other) => ofName(other) && valuesEqual(other.arguments, call.arguments))) continue;
    const replaced = change === "amends" ? task.findLastIndex(ofName) : -1;
    task = replaced >= 0 ? task.with(replaced, call) : [...task, call];
  }
  return task;
}

/**
 * The calls of `added` that are not already in `known` (nor earlier in `added`): a request
 * repeated, in one message or in several, is one task call, so it makes one binding and one duty.
 */
export function newTaskCalls(known: readonly TaskCall[], added: readonly TaskCall[]): TaskCall[] {
  const fresh: TaskCall[] = [];
  for (const call of added) {
    const same = (other: TaskCall): boolean =>
      other.name === call.name && valuesEqual(other.arguments, call.arguments);
    if (!known.some(same) && !fresh.some(same)) fresh.push(call);
  }
  return fresh;
}

/**
 * A `{name, arguments}` object naming one of `known` (a task call, or a tool for an approval),
 * whose arguments are its declared parameters with values of their declared types: a field the
 * declaration does not have would otherwise ground a duty on nothing.
 */
export function readCall(
  raw: unknown,
  where: string,
  known: Map<string, { parameters: readonly Parameter[] }>,
  what: string,
): TaskCall {
  const call = raw as { name?: unknown; arguments?: unknown };
  const declared = typeof call?.name === "string" ? known.get(call.name) : undefined;
  if (declared === undefined) {
    throw messagesError(`${where}.name must be a ${what} of the policy (${[...known.keys()].join(", ")})`);
  }
  if (!isRecord(call.arguments)) throw messagesError(`${where}.arguments must be an object`);
  const problems = argumentProblems(declared.parameters, call.arguments, `${where}.arguments`);
  if (problems.length > 0) throw messagesError(`${problems.join("; ")} (${what} ${call.name as string})`);
  return { name: call.name as string, arguments: call.arguments };
}

export function readToolCall(raw: unknown, where: string): ToolCallEvent {
  const call = raw as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
  if (typeof call?.id !== "string") throw messagesError(`${where}.id must be a string`);
  if (typeof call.function?.name !== "string") throw messagesError(`${where}.function.name must be a string`);
  return {
    id: call.id,
    name: call.function.name,
    arguments: parseArguments(call.function.arguments, `${where}.function.arguments`),
    outcome: { kind: "pending" },
  };
}

/** Arguments as OpenAI sends them (a JSON string) or already parsed. */
export function parseArguments(raw: unknown, where: string): Record<string, Value> {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = raw.trim() === "" ? {} : JSON.parse(raw);
    } catch (error) {
      throw messagesError(`${where} is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (!isRecord(value)) throw messagesError(`${where} must be a JSON object`);
  return value;
}

export function readOutcome(
  event: ToolCallEvent,
  message: MessageFields,
  policy: Policy,
  where: string,
): Outcome {
  const tool = policy.tools.get(event.name);
  const content = contentText(message.content);
  if (tool?.output === "text") {
    const label = message.mentor?.label;
    if (label === undefined)
      return { kind: "unknown", reason: `the output of ${event.name} has no label yet` };
    if (label !== null && (typeof label !== "string" || !(label in tool.labels))) {
      const labels = Object.keys(tool.labels).join(", ");
      throw messagesError(
        `${where}.mentor.label ${JSON.stringify(label)} is not a label of ${event.name} (its labels: ${labels}, or null for none)`,
      );
    }
    const given = message.mentor?.fields;
    if (given === undefined) return labelOutcome(tool, label, content);
    const declared = Object.keys(tool.fields ?? {});
    if (!isRecord(given) || Object.keys(given).some((name) => !declared.includes(name)))
      throw messagesError(
        `${where}.mentor.fields must be an object of ${event.name}'s fields (${declared.join(", ") || "it declares none"})`,
      );
    return { kind: "label", label, fields: given };
  }
  try {
    return { kind: "json", value: JSON.parse(content) as Value };
  } catch {
    return { kind: "unknown", reason: `the output of ${event.name} is not JSON` };
  }
}

/** A text tool's outcome: its label and the values its fields read from the output. */
export function labelOutcome(
  tool: Parameters<typeof outputFieldValues>[0],
  label: string | null,
  text: string,
): Outcome {
  const fields = outputFieldValues(tool, text);
  return Object.keys(fields).length > 0 ? { kind: "label", label, fields } : { kind: "label", label };
}

/** The text of an OpenAI message's content (a string, or the text parts of an array). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  }
  return "";
}

function isRecord(value: unknown): value is Record<string, Value> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function messagesError(message: string): MentorError {
  return new MentorError("MNT_ERR_MESSAGES", message);
}
