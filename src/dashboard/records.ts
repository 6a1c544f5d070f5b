import { closeSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import type { AttemptCall, TurnRecord } from "../agent/index.js";
import { depthProblem } from "../openai/index.js";

/** One line of a flight recorder file (`serve --recorder DIR`), as the chat route writes it. */
export interface FlightRecord {
  time: string;
  id: string;
  digest?: string;
  model?: string;
  mode?: string;
  policy?: string | null;
  stream?: boolean;
  /** The conversation the turn judged (recorded since the dashboard; absent in older files). */
  messages?: unknown[];
  status: number;
  error?: { message?: string; type?: string; code?: string | null };
  returned?: { message?: { content?: string | null; tool_calls?: unknown[] }; finish_reason?: string };
  usage?: unknown;
  mentor?: TurnRecord;
  ms?: number;
}

/** What a record is listed as on the Runs page (the filter's outcomes). */
export type Outcome = "blocked" | "broke" | "stopped" | "refused" | "exhausted" | "error" | "ok";

export const outcomeNames: readonly Outcome[] = [
  "blocked",
  "broke",
  "stopped",
  "refused",
  "exhausted",
  "error",
  "ok",
];

/** What the shield did in records (one request, or every request of a run). */
export interface RecordCounts {
  /** Calls refused (never returned). */
  blocked: number;
  /** Calls returned to the client (so made) although they broke a rule: `brokeRule`. */
  broke: number;
  /** Turns a `stop` rule stopped (the requests refused after it, 409, are errors). */
  stopped: number;
  doneRefusals: number;
  exhausted: number;
  errors: number;
}

export function countsOf(records: readonly FlightRecord[]): RecordCounts {
  const counts: RecordCounts = { blocked: 0, broke: 0, stopped: 0, doneRefusals: 0, exhausted: 0, errors: 0 };
  for (const record of records) {
    const mentor = record.mentor;
    counts.blocked += mentor?.blocked ?? 0;
    counts.doneRefusals += mentor?.doneRefusals ?? 0;
    if (mentor?.exhausted) counts.exhausted += 1;
    if (mentor?.stopped) counts.stopped += 1;
    if (record.status !== 200) counts.errors += 1;
    const approved = mentor?.approved !== undefined;
    counts.broke += returnedCalls(record).filter((call) => brokeRule(call, approved)).length;
  }
  return counts;
}

/**
 * The calls a request returned to its client: its last generation's, when the turn answered 200
 * with them (unshielded: whatever their verdicts; shielded: all allowed).
 */
export function returnedCalls(record: FlightRecord): AttemptCall[] {
  const mentor = record.mentor;
  const calls = mentor?.attempts.at(-1)?.calls ?? [];
  if (record.status !== 200 || calls.length === 0) return [];
  return mentor?.mode === "none" || calls.every((call) => call.verdict === "allow") ? calls : [];
}

/**
 * Whether a call that was made (returned to the client) broke a rule: returned although judged
 * `block` (no shield), allowed with a warning (a `warn` rule, an override), or approved by a
 * person (an `ask` rule). One definition for the run page's marks and the Runs list's counts.
 */
export function brokeRule(
  call: { verdict: string; warnings: readonly unknown[] },
  approved = false,
): boolean {
  return call.verdict === "block" || call.warnings.length > 0 || approved;
}

/** The outcomes of records: a turn can block calls, refuse an answer and run out of regenerations at once. */
export function outcomesOf(records: FlightRecord | readonly FlightRecord[]): Outcome[] {
  const counts = countsOf(Array.isArray(records) ? records : [records as FlightRecord]);
  const outcomes: Outcome[] = [];
  if (counts.errors > 0) outcomes.push("error");
  if (counts.blocked > 0) outcomes.push("blocked");
  if (counts.broke > 0) outcomes.push("broke");
  if (counts.stopped > 0) outcomes.push("stopped");
  if (counts.doneRefusals > 0) outcomes.push("refused");
  if (counts.exhausted > 0) outcomes.push("exhausted");
  if (outcomes.length === 0) outcomes.push("ok");
  return outcomes;
}

/** A record with where it was read (file and line), for links and error messages. */
export interface StoredRecord {
  record: FlightRecord;
  file: string;
  line: number;
}

interface FileState {
  /** Bytes read so far (up to the end of the last complete line). */
  offset: number;
  lines: number;
}

/**
 * The flight recorder's directory, read incrementally: each `refresh` reads what was appended
 * to the `.jsonl` files since the last one (a line still being written, without its newline,
 * waits for the next refresh). Lines that are not records are reported as problems naming the
 * file and line, and skipped.
 */
export class RecordStore {
  private readonly files = new Map<string, FileState>();
  private readonly records: StoredRecord[] = [];
  private readonly byId = new Map<string, StoredRecord>();
  readonly problems: string[] = [];

  constructor(readonly directory: string) {}

  /** Reads what is new; returns how many records were added. */
  refresh(): number {
    let names: string[];
    try {
      names = readdirSync(this.directory).filter((name) => name.endsWith(".jsonl"));
    } catch (error) {
      const problem = `${this.directory}: cannot read the recorder directory (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
      if (!this.problems.includes(problem)) this.problems.push(problem);
      return 0;
    }
    let added = 0;
    for (const name of names.sort()) added += this.readFile(join(this.directory, name));
    return added;
  }

  /** Every record read, newest first. */
  newestFirst(): StoredRecord[] {
    return [...this.records].sort((left, right) => right.record.time.localeCompare(left.record.time));
  }

  get(id: string): StoredRecord | undefined {
    return this.byId.get(id);
  }

  private readFile(file: string): number {
    const state = this.files.get(file) ?? { offset: 0, lines: 0 };
    this.files.set(file, state);
    const size = statSync(file).size;
    if (size <= state.offset) return 0;
    const buffer = Buffer.alloc(size - state.offset);
    const descriptor = openSync(file, "r");
    try {
      readSync(descriptor, buffer, 0, buffer.length, state.offset);
    } finally {
      closeSync(descriptor);
    }
    const end = buffer.lastIndexOf(0x0a);
    if (end < 0) return 0;
    state.offset += end + 1;
    let added = 0;
    for (const text of buffer.subarray(0, end).toString("utf8").split("\n")) {
      state.lines += 1;
      if (text.trim() === "") continue;
      const where = `${file}:${state.lines}`;
      const read = parseRecord(text);
      if (typeof read === "string") {
        this.problems.push(`${where}: ${read}`);
        continue;
      }
      if (this.byId.has(read.id)) {
        this.problems.push(`${where}: record ${read.id} appears twice (the first one is shown)`);
        continue;
      }
      const stored = { record: read, file, line: state.lines };
      this.records.push(stored);
      this.byId.set(read.id, stored);
      added += 1;
    }
    return added;
  }
}

/** A record, or what is wrong with the line. */
function parseRecord(text: string): FlightRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON (${(error as Error).message})`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const record = value as Record<string, unknown>;
  if (typeof record.id !== "string") return "field id: missing or not a string";
  if (typeof record.time !== "string") return "field time: missing or not a string";
  if (typeof record.status !== "number") return "field status: missing or not a number";
  if (record.messages !== undefined && !Array.isArray(record.messages)) return "field messages: not an array";
  // As deep as the server reads a body's messages (the run view copies them recursively); an older
  // server did not refuse deeper ones.
  const deep = depthProblem({ messages: record.messages });
  if (deep) return `field messages: ${deep.param} ${deep.message}`;
  if (record.mentor !== undefined) {
    const mentor = record.mentor as Record<string, unknown>;
    if (typeof mentor !== "object" || mentor === null || !Array.isArray(mentor.attempts))
      return "field mentor: not a turn record (no attempts array)";
  }
  return record as unknown as FlightRecord;
}

/** Where a record stands in its conversation: the requests of one agent run, each continuing the one before. */
export interface ConversationPlace {
  /** 1 for the conversation's first request. */
  position: number;
  count: number;
  /** The id of the conversation's last request. */
  latest: string;
  /** The ids of the conversation's requests, first to last. */
  requests: readonly string[];
}

/**
 * Groups records into conversations. A record continues an earlier one when that one's messages
 * begin its own and the message after them is what that one returned (the client appended the
 * answer, then the tool results); among several such, the latest earlier one (a benchmark repeats
 * the same task). Tool call ids are not compared: clients may write their own.
 */
export function conversations(records: readonly FlightRecord[]): Map<string, ConversationPlace> {
  const ordered = [...records].sort((left, right) => left.time.localeCompare(right.time));
  const shapes = new Map(ordered.map((record) => [record.id, (record.messages ?? []).map(messageShape)]));
  const previous = new Map<string, string>();
  const next = new Map<string, string>();
  ordered.forEach((record, index) => {
    const own = shapes.get(record.id) as string[];
    for (let earlier = index - 1; earlier >= 0; earlier--) {
      const candidate = ordered[earlier] as FlightRecord;
      if (next.has(candidate.id) || candidate.policy !== record.policy) continue;
      const before = shapes.get(candidate.id) as string[];
      const answer = candidate.returned?.message;
      if (before.length === 0 || before.length >= own.length || !answer) continue;
      if (!before.every((shape, position) => shape === own[position])) continue;
      if (messageShape({ role: "assistant", ...answer }) !== own[before.length]) continue;
      previous.set(record.id, candidate.id);
      next.set(candidate.id, record.id);
      break;
    }
  });
  const places = new Map<string, ConversationPlace>();
  for (const record of ordered) {
    if (previous.has(record.id)) continue;
    const chain = [record.id];
    while (next.has(chain.at(-1) as string)) chain.push(next.get(chain.at(-1) as string) as string);
    const latest = chain.at(-1) as string;
    chain.forEach((id, index) => {
      places.set(id, { position: index + 1, count: chain.length, latest, requests: chain });
    });
  }
  return places;
}

/** A message as compared between requests: role, text and calls (name and parsed arguments), no ids. */
function messageShape(raw: unknown): string {
  const message = (raw ?? {}) as { role?: unknown; content?: unknown; tool_calls?: unknown };
  const calls = Array.isArray(message.tool_calls)
    ? message.tool_calls.map((call: { function?: { name?: unknown; arguments?: unknown } }) => {
        let args = call?.function?.arguments;
        if (typeof args === "string") {
          try {
            args = JSON.parse(args);
          } catch {
            // Compared as written.
          }
        }
        return [call?.function?.name, args];
      })
    : [];
  const content = message.content === undefined || message.content === "" ? null : message.content;
  return JSON.stringify([message.role, calls.length > 0 ? null : content, calls]);
}
