import { randomBytes } from "node:crypto";
import { MentorError } from "../errors/index.js";
import {
  type Outcome,
  refusedPrefix,
  stoppedPrefix,
  type TaskCall,
  type ToolCallEvent,
} from "../run/index.js";
import type { DoneCheck } from "./monitor.js";
import { FlightRecorder, type RecordWriter } from "./recorder.js";
import type { Decision, ProposedCall } from "./types.js";

/**
 * A flight record of one question asked of a monitor (docs/operations.md, "Flight recorder"): the
 * shape of the server's records, so the dashboard lists and draws it, with `mode: "monitor"` and
 * one attempt: the proposed calls and their decisions, or an answer (the run's end asked).
 * `messages` is the conversation before the question.
 */
export function monitorRecord(question: {
  id: string;
  run?: string;
  policy: string;
  messages: readonly unknown[];
  decisions?: readonly Decision[];
  done?: DoneCheck;
  ms: number;
}): Record<string, unknown> {
  const decisions = question.decisions ?? [];
  const calls = decisions.map((decision, index) => ({
    id: `${question.id}-${index}`,
    type: "function",
    function: { name: decision.call.name, arguments: JSON.stringify(decision.call.arguments) },
  }));
  const done = question.done;
  const finishReason = done ? "stop" : "tool_calls";
  return {
    time: new Date().toISOString(),
    id: question.id,
    ...(question.run !== undefined ? { run: question.run } : {}),
    policy: question.policy,
    mode: "monitor",
    status: 200,
    messages: question.messages,
    returned: {
      message: { role: "assistant", content: null, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
      finish_reason: finishReason,
    },
    mentor: {
      mode: "monitor",
      policy: question.policy,
      attempts: [
        {
          content: null,
          calls: decisions.map(attemptCall),
          finishReason,
          ...(done ? { done: { allowed: done.allowed, refused: !done.allowed } } : {}),
        },
      ],
      blocked: decisions.filter((decision) => decision.verdict === "block").length,
      repairs: decisions.flatMap((decision) =>
        decision.verdict === "block" && decision.advice?.kind === "repair" ? [decision.advice] : [],
      ),
      doneRefusals: done && !done.allowed ? 1 : 0,
      exhausted: false,
      openDuties: done ? done.openDuties : (decisions.at(-1)?.openDuties ?? []),
      ...(done?.stopped ? { stopped: done.stopped } : {}),
      grounding: [],
    },
    ms: question.ms,
  };
}

/** A decision as a turn record's attempt call (`AttemptCall` in src/agent). */
function attemptCall(decision: Decision): Record<string, unknown> {
  return {
    call: decision.call,
    verdict: decision.verdict,
    action: decision.action,
    rules: decision.violations.map((finding) => finding.rule),
    warnings: decision.warnings.map((finding) => finding.rule),
    ...(decision.advice ? { advice: decision.advice } : {}),
    ...(decision.failClosed !== undefined ? { failClosed: decision.failClosed } : {}),
    ...(decision.searchStopped !== undefined ? { searchStopped: decision.searchStopped } : {}),
  };
}

/** Where a monitor's records go: a directory (one file per run, `run-<id>.jsonl`) or a writer. */
export type RecordsOption = string | RecordWriter;

/** A run id as a file name may carry it. */
const runIdPattern = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * The flight records of one monitored run: a record at each question asked (`check`,
 * `checkChain`, `checkDone`), with the run so far as OpenAI messages (the task on a user message,
 * each made call with its outcome, each refusal with the `[SHIELD] Blocked` text that reads back
 * as one), so the dashboard rebuilds the run as it rebuilds a server's. A write that fails is
 * counted (`failures`, `lastError`) and the monitor goes on.
 */
export class RunRecords {
  readonly run: string;
  readonly writer: RecordWriter;
  failures = 0;
  lastError: Error | undefined;
  private readonly messages: Record<string, unknown>[] = [];
  private questions = 0;
  /** Tells this writer's records from those of another monitor resumed under the same run id. */
  private readonly tag = randomBytes(3).toString("hex");

  constructor(
    records: RecordsOption,
    private readonly policy: string,
    task: readonly TaskCall[],
    run?: string,
  ) {
    this.run =
      run ?? `run-${new Date().toISOString().replace(/[:.]/g, "-")}-${randomBytes(4).toString("hex")}`;
    if (!runIdPattern.test(this.run))
      throw new MentorError(
        "MNT_ERR_BAD_INPUT",
        `options.runId ${JSON.stringify(this.run)} must be 1–128 letters, digits, _, . or - (it names the run's file)`,
      );
    this.writer =
      typeof records === "string"
        ? new FlightRecorder(records, { name: `${this.run}.jsonl`, openPerRecord: true })
        : records;
    if (task.length > 0)
      this.messages.push({ role: "user", content: task.map(taskText).join("\n"), mentor: { task } });
  }

  decided(decisions: readonly Decision[], ms: number): void {
    this.write({ decisions, ms });
  }

  /** The record, then the answer it stands for and, if the end was refused, the refusal (as the middleware's model sees them). */
  doneAsked(done: DoneCheck, ms: number): void {
    this.write({ done, ms });
    this.messages.push({ role: "assistant", content: null });
    if (!done.allowed)
      this.messages.push({
        role: "user",
        content: `[SHIELD] The run may not end yet: ${done.openDuties.map((duty) => duty.rule).join(", ") || "stopped"}.`,
      });
  }

  made(event: ToolCallEvent): void {
    this.messages.push(callMessage(event.id, event));
    if (event.outcome.kind !== "pending")
      this.messages.push({ role: "tool", tool_call_id: event.id, ...outcomeContent(event.outcome) });
  }

  refused(call: ProposedCall, rules: readonly string[]): void {
    const id = `refused_${this.messages.length}`;
    this.messages.push(callMessage(id, call), {
      role: "tool",
      tool_call_id: id,
      content: `${refusedPrefix} ${call.name}: ${rules.join(", ") || "refused"}`,
    });
  }

  approved(call: ProposedCall): void {
    this.messages.push({ role: "user", content: `Approved: ${call.name}`, mentor: { approve: call } });
  }

  stopped(reason: string): void {
    const content = reason.startsWith(stoppedPrefix) ? reason : `${stoppedPrefix}: ${reason}`;
    this.messages.push({ role: "assistant", content });
  }

  resumed(): void {
    this.messages.push({ role: "user", content: "Resume.", mentor: { resume: true } });
  }

  private write(question: { decisions?: readonly Decision[]; done?: DoneCheck; ms: number }): void {
    this.questions++;
    const failure = this.writer.write(
      monitorRecord({
        id: `${this.run}-${this.tag}-${this.questions}`,
        run: this.run,
        policy: this.policy,
        messages: [...this.messages],
        ...question,
      }),
    );
    if (failure) {
      this.failures++;
      this.lastError = failure;
    }
  }
}

function taskText(call: TaskCall): string {
  return `${call.name}(${JSON.stringify(call.arguments)})`;
}

function callMessage(id: string, call: ProposedCall): Record<string, unknown> {
  return {
    role: "assistant",
    content: null,
    tool_calls: [
      { id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } },
    ],
  };
}

/** A tool message's content (and label) that reads back as the outcome (`readOutcome`). */
function outcomeContent(outcome: Exclude<Outcome, { kind: "pending" }>): Record<string, unknown> {
  switch (outcome.kind) {
    case "json":
      return { content: JSON.stringify(outcome.value) };
    case "label":
      return {
        content: `label: ${outcome.label ?? "none"}`,
        mentor: { label: outcome.label, ...(outcome.fields ? { fields: outcome.fields } : {}) },
      };
    case "unknown":
      return { content: outcome.reason };
  }
}
