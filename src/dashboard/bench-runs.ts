import type { TurnRecord } from "../agent/index.js";
import type { FlightRecord } from "./records.js";

/**
 * What `npm run bench` and `npm run bench:sopbench` keep of a run's conversation (`runs[].conversation` in results.json):
 * enough to open the run in the same run view as a flight-recorded one.
 */
export interface BenchConversation {
  /**
   * The run's messages, as its last request sent them, then its answer and the tool outputs
   * after it; the system message's manual is left out (`manualLeftOut`).
   */
  messages: unknown[];
  /** Each request in order: when it was answered, how many of `messages` it sent, and the server's `mentor` field of its answer. */
  requests: { time: string; messages: number; mentor: unknown }[];
}

/** The parts of a results.json run that name it and rebuild its run view. */
export interface BenchRun {
  domain: string;
  task: string;
  condition: string;
  run: number;
  conversation?: BenchConversation;
}

/** The messages as results.json keeps them: a system message's manual left out (the same in every run of the domain). */
export function manualLeftOut(messages: readonly unknown[], domain: string): unknown[] {
  return messages.map((message) =>
    (message as { role?: unknown } | null)?.role === "system"
      ? { role: "system", content: `(the manual of ${domain}, left out of results.json)` }
      : message,
  );
}

/** A run's id, which is also its page under /dashboard/: `results/FILE/run/DOMAIN/TASK/CONDITION/RUN` (FILE: its index in `--results`). */
export function benchRunId(
  file: number,
  run: Pick<BenchRun, "domain" | "task" | "condition" | "run">,
): string {
  return `results/${file}/run/${[run.domain, run.task, run.condition, String(run.run)].map(encodeURIComponent).join("/")}`;
}

/** The parts of a `benchRunId`; undefined for any other id (a flight record's). */
export function parseBenchRunId(
  id: string,
): { file: number; domain: string; task: string; condition: string; run: number } | undefined {
  const parts = id.split("/");
  if (parts.length !== 7 || parts[0] !== "results" || parts[2] !== "run") return undefined;
  const [file, domain, task, condition, run] = [parts[1], ...parts.slice(3)].map((part) =>
    decodeURIComponent(part as string),
  ) as [string, string, string, string, string];
  return { file: Number(file), domain, task, condition, run: Number(run) };
}

/**
 * A results.json run's requests as the flight records the run view reads (each request's messages
 * the prefix it sent, its answer the message after them), or why there are none: a run saved
 * without its conversation (a results file written before the benchmarks kept them, the oracle
 * agent), or a conversation that does not hold together (named by field).
 */
export function benchRecords(run: BenchRun, id: string, command: string): FlightRecord[] | string {
  const conversation = run.conversation;
  if (conversation === undefined)
    return `this run has no conversation (runs[].conversation): the results file was written before the benchmarks (\`npm run bench\`, \`npm run bench:sopbench\`) kept each run's messages and the server's verdicts, or by the oracle agent, which keeps none; rerun it with this build to open its runs here${command ? `: ${command}` : ""}`;
  const { messages, requests } = conversation;
  if (!Array.isArray(messages) || !Array.isArray(requests))
    return "runs[].conversation: messages and requests must be arrays";
  const records: FlightRecord[] = [];
  let sent = 0;
  for (const [index, request] of requests.entries()) {
    const where = `runs[].conversation.requests[${index}]`;
    const count = request?.messages;
    if (!Number.isInteger(count) || count <= sent || count >= messages.length)
      return `${where}.messages: ${JSON.stringify(count)} is not a count of messages after the request before (${sent}) and before the answer (the conversation has ${messages.length})`;
    const mentor = request.mentor as TurnRecord | null;
    if (typeof mentor !== "object" || mentor === null || !Array.isArray(mentor.attempts))
      return `${where}.mentor: not the server's mentor field (no attempts array): was the server a mentor server?`;
    sent = count;
    const answer = messages[count] as NonNullable<FlightRecord["returned"]>["message"];
    records.push({
      id: `${id}#request-${index + 1}`,
      time: String(request.time ?? ""),
      policy: mentor.policy ?? run.domain,
      mode: mentor.mode,
      messages: messages.slice(0, count),
      status: 200,
      returned: { message: answer },
      mentor,
    });
  }
  if (records.length === 0) return "runs[].conversation.requests is empty: the run sent no request";
  return records;
}
