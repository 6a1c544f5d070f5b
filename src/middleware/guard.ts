import type { Decision, Monitor, ProposedCall } from "../evaluator/index.js";
import type { Value } from "../expression/index.js";
// The rules alone: the labeler's index also loads the endpoint model (the openai client).
import { labelByRules } from "../labeler/rules.js";
import { labelOutcome, type Outcome } from "../run/index.js";
import { blockedText, doneRefusedText, reminderText } from "../shield/index.js";

export interface GuardOptions {
  /**
   * Asked when a rule of severity `ask` holds a call: resolve true to approve it (the call then
   * runs if nothing else refuses it). Absent: the call is refused with the shield's feedback.
   */
  onAsk?: (decision: Decision) => boolean | Promise<boolean>;
  /** Called with every decision (for logs and tests). */
  onDecision?: (decision: Decision) => void;
  /** Add the shield's reminder (warnings, open duties) to an allowed call's text result. Default false. */
  reminders?: boolean;
}

/** A tool execution as the guard runs it: refused with feedback, or run and recorded. */
export type Guarded =
  | { refused: true; feedback: string; decision: Decision }
  | { refused: false; result: unknown };

/**
 * The prompt shield around an agent loop's own tool executions, for the framework adapters: each
 * call is checked by the monitor first; a refused one is not run, and its result is the shield's
 * feedback; an allowed one runs and is recorded with its outcome. Executions run one at a time
 * (a framework may start a step's calls together; each is judged after the ones before it ran).
 */
export class ToolGuard {
  private queue: Promise<unknown> = Promise.resolve();
  private doneRefusals = 0;

  constructor(
    readonly monitor: Monitor,
    private readonly options: GuardOptions = {},
  ) {}

  run(call: ProposedCall, execute: () => unknown): Promise<Guarded> {
    const next = this.queue.then(() => this.runNow(call, execute));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Why the run may not end yet (the shield's feedback for the model), or undefined when it may:
   * duties open, refused up to the policy's `done.max_refusals` in this guard's life. A stopped
   * run may end.
   */
  doneRefusal(): string | undefined {
    const done = this.monitor.checkDone();
    if (done.allowed || done.stopped) return undefined;
    if (this.doneRefusals >= this.monitor.run.policy.maxDoneRefusals) return undefined;
    this.doneRefusals++;
    return doneRefusedText(done.openDuties);
  }

  private async runNow(call: ProposedCall, execute: () => unknown): Promise<Guarded> {
    let decision = this.monitor.check(call);
    this.options.onDecision?.(decision);
    if (decision.action === "ask" && this.options.onAsk && (await this.options.onAsk(decision))) {
      this.monitor.approve(call);
      decision = this.monitor.check(call);
      this.options.onDecision?.(decision);
    }
    if (decision.verdict === "block") return { refused: true, feedback: blockedText(decision), decision };
    let result: unknown;
    try {
      result = await execute();
    } catch (error) {
      // It may have acted before it failed: recorded as made, every outcome possible.
      const reason = `${call.name} failed: ${(error as Error)?.message ?? String(error)}`;
      this.monitor.record(call, { kind: "unknown", reason });
      throw error;
    }
    this.monitor.record(call, outcomeOf(this.monitor, call.name, result));
    if (this.options.reminders && typeof result === "string") {
      // next(), not checkDone(): asking whether the run may end is a question the flight records keep.
      const reminder = reminderText({ ...decision, openDuties: this.monitor.next().openDuties });
      if (reminder) return { refused: false, result: `${result}\n\n${reminder}` };
    }
    return { refused: false, result };
  }
}

/**
 * A tool's result as the monitor reads it: a JSON tool's value (a string is parsed as JSON), a
 * text tool's label by the policy's rules. What cannot be read counts as every outcome (fail closed).
 */
export function outcomeOf(monitor: Monitor, name: string, result: unknown): Outcome {
  const tool = monitor.run.policy.tools.get(name);
  const text = typeof result === "string" ? result : JSON.stringify(result ?? null);
  if (tool?.output === "text") {
    const label = labelByRules(tool, text);
    return label === undefined
      ? { kind: "unknown", reason: `no rule labels the output of ${name}` }
      : labelOutcome(tool, label, text);
  }
  if (typeof result !== "string") return { kind: "json", value: (result ?? null) as Value };
  try {
    return { kind: "json", value: JSON.parse(result) as Value };
  } catch {
    return { kind: "unknown", reason: `the output of ${name} is not JSON` };
  }
}

/** A framework's tool arguments as a call's (an object; anything else is wrapped, never guessed). */
export function callOf(name: string, input: unknown): ProposedCall {
  const args = typeof input === "object" && input !== null && !Array.isArray(input) ? input : { input };
  return { name, arguments: args as Record<string, Value> };
}
