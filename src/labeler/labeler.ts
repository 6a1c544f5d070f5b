import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { MentorError } from "../errors/index.js";
import { throwIfAborted, yieldToEventLoop } from "../evaluator/index.js";
import type { Value } from "../expression/index.js";
import type { Policy, ToolSpec } from "../policy/index.js";
import { contentText, type TaskCall } from "../run/index.js";
import { type Parsed, parseCalls, parseLabel } from "./answer.js";
import type { LabelModel, ModelRequest } from "./model.js";
import { labelRequest, taskRequest } from "./prompt.js";
import { applyFieldRules, distinct, groundByRules, labelByRules, withChanges } from "./rules.js";

/** Grounds a conversation: task calls on user messages, labels on text tool outputs. */
export interface Grounder {
  ground(messages: readonly unknown[], signal?: AbortSignal): Promise<Grounding>;
}

export interface Grounding {
  /** A copy of the messages with `mentor.task` / `mentor.label` added where they could be grounded. */
  messages: unknown[];
  notes: GroundingNote[];
}

export interface GroundingNote {
  /** Index of the message in `messages`. */
  message: number;
  kind: "task" | "label";
  source: "client" | "rule" | "llm" | "cache";
  /** The task calls, or the label (null: none of the labels). Absent when grounding failed. */
  value?: unknown;
  /** Why nothing was grounded (the output then counts as every outcome; the task stays ungrounded). */
  error?: string;
  ms: number;
}

export interface LabelerOptions {
  /** Asked where the policy allows the LLM labeler and no rule decides. Without one, such cases fail closed. */
  model?: LabelModel;
  /** Per model request. Default 30 000 ms. */
  timeoutMs?: number;
  /** Model answers kept (least recently used dropped first); 0 keeps none. Default 1000. */
  cacheSize?: number;
  /**
   * What grounding one conversation may spend: requests sent to the model (answers from the
   * cache are free), default 16, and characters of message text read, default 1 MiB. Messages
   * past either bound are not grounded (a note says why): the shield fails closed on them.
   */
  limits?: { maxModelRequests?: number; maxCharacters?: number };
  /**
   * For measuring one side alone (bench): `rules` never asks the model; `llm` skips the rules and
   * asks the model wherever one is given, whatever the policy declares. Default: as the policy declares.
   */
  only?: "rules" | "llm";
}

/** What grounding one message gave: a value and where it came from, or why it failed. */
export type GroundingResult =
  | { value: unknown; source: GroundingNote["source"] }
  | { error: string; source: "rule" | "llm" };

interface MessageShape {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
  mentor?: Record<string, unknown>;
}

/**
 * The labeler: deterministic rules declared in the policy first, then (where the policy allows
 * it) the LLM labeler, whose answers are validated against the declared labels / the task calls'
 * fields and cached by content hash. Failures fail closed: no label, no task, a note saying why.
 */
export class Labeler implements Grounder {
  /** Model answers by request hash; `value` is wrapped because an answer may be null (`none`). */
  private readonly cache: LRUCache<string, { value: unknown }> | undefined;
  private readonly timeoutMs: number;
  private readonly limits: { maxModelRequests: number; maxCharacters: number };

  constructor(
    readonly policy: Policy,
    private readonly options: LabelerOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.limits = { maxModelRequests: 16, maxCharacters: 1024 * 1024, ...options.limits };
    const cacheSize = options.cacheSize ?? 1000;
    this.cache = cacheSize > 0 ? new LRUCache({ max: cacheSize }) : undefined;
  }

  /**
   * Grounds every user message and text tool output of `messages` (a copy). Between messages the
   * event loop runs (the labeler's rules and answers are synchronous work), and an aborted
   * `signal` ends the grounding with its reason.
   */
  async ground(messages: readonly unknown[], signal?: AbortSignal): Promise<Grounding> {
    const copy = structuredClone(messages) as unknown[];
    const notes: GroundingNote[] = [];
    const calls = new Map<string, { name: string; arguments: Record<string, Value> }>();
    const budget = new GroundingBudget(this.limits);
    let taskSeen = false;
    let paused = performance.now();
    for (const [index, raw] of copy.entries()) {
      throwIfAborted(signal);
      if (performance.now() - paused > PAUSE_EVERY_MS) {
        await yieldToEventLoop(signal);
        paused = performance.now();
      }
      if (typeof raw !== "object" || raw === null) continue;
      const message = raw as MessageShape;
      if (message.role === "assistant" && Array.isArray(message.tool_calls)) {
        for (const call of message.tool_calls as {
          id?: unknown;
          function?: { name?: unknown; arguments?: unknown };
        }[]) {
          if (typeof call?.id === "string" && typeof call.function?.name === "string")
            calls.set(call.id, {
              name: call.function.name,
              arguments: parsedArguments(call.function.arguments),
            });
        }
      }
      if (message.role === "user") {
        const started = performance.now();
        const given = message.mentor?.task;
        const text = given === undefined ? contentText(message.content) : "";
        const result: GroundingResult =
          given !== undefined
            ? { value: given, source: "client" }
            : (budget.read(text) ?? (await this.groundTask(text, !taskSeen, signal, budget)));
        if ("value" in result) {
          if (given === undefined) message.mentor = { ...message.mentor, task: result.value };
          if (Array.isArray(result.value) && result.value.length > 0) taskSeen = true;
        }
        notes.push(note(index, "task", result, started));
      }
      if (message.role === "tool" && typeof message.tool_call_id === "string") {
        const call = calls.get(message.tool_call_id);
        const tool = call ? this.policy.tools.get(call.name) : undefined;
        if (!call || !tool) continue;
        const started = performance.now();
        if (tool.output === "json") {
          // Read as the evaluator reads it: an output that is not JSON counts as every outcome.
          if (!isJson(contentText(message.content)))
            notes.push(
              note(
                index,
                "label",
                { error: `the output of ${call.name} is not JSON`, source: "rule" },
                started,
              ),
            );
          continue;
        }
        const given = message.mentor?.label;
        const text = given === undefined ? contentText(message.content) : "";
        const result: GroundingResult =
          given !== undefined
            ? { value: given, source: "client" }
            : (budget.read(text) ?? (await this.labelOutput(tool, call.arguments, text, signal, budget)));
        if ("value" in result && given === undefined)
          message.mentor = { ...message.mentor, label: result.value };
        notes.push(note(index, "label", result, started));
      }
    }
    return { messages: copy, notes };
  }

  /** Labels one output of a text tool: its rules, then the model if allowed; fails closed. */
  async labelOutput(
    tool: ToolSpec,
    callArguments: Record<string, Value>,
    text: string,
    signal?: AbortSignal,
    budget?: GroundingBudget,
  ): Promise<GroundingResult> {
    if (this.options.only !== "llm") {
      const label = labelByRules(tool, text);
      if (label !== undefined) return { value: label, source: "rule" };
    }
    if (!this.mayAsk(tool.labeler.llm))
      return {
        error: `no labeling rule of ${tool.name} matches the output${this.whyNoModel(tool.labeler.llm)}`,
        source: "rule",
      };
    const labels = Object.keys(tool.labels);
    return this.ask(labelRequest(tool, callArguments, text), signal, budget, (raw) =>
      parseLabel(raw, labels),
    );
  }

  /**
   * Grounds one user message: the policy's patterns, then the model if allowed (the fields the
   * policy's field rules decide are taken from the rules). With no match, a later message changes
   * nothing (`[]`); the first message is an error (reported, never guessed).
   */
  async groundTask(
    text: string,
    first: boolean,
    signal?: AbortSignal,
    budget?: GroundingBudget,
  ): Promise<GroundingResult> {
    const result = await this.groundCalls(text, first, signal, budget);
    return first ? result : withChanges([...this.policy.taskCalls.values()], result, text);
  }

  private async groundCalls(
    text: string,
    first: boolean,
    signal?: AbortSignal,
    budget?: GroundingBudget,
  ): Promise<GroundingResult> {
    const specs = [...this.policy.taskCalls.values()];
    if (specs.length === 0) return { value: [], source: "rule" };
    if (this.options.only !== "llm") {
      const found = groundByRules(specs, text);
      if (found.kind === "calls") return { value: found.calls, source: "rule" };
      if (found.kind === "error") return { error: found.error, source: "rule" };
    }
    const llm = specs.some((spec) => spec.grounding?.llm === true);
    if (this.mayAsk(llm)) {
      const answer = await this.ask(taskRequest(specs, text), signal, budget, (raw) =>
        parseCalls(raw, specs),
      );
      if ("error" in answer) return answer;
      const calls = distinct(applyFieldRules(specs, answer.value as TaskCall[], text));
      if (!first || calls.length > 0) return { value: calls, source: answer.source };
      return { error: "the model found no task in the first request", source: "llm" };
    }
    if (!first) return { value: [], source: "rule" };
    return { error: `no task pattern matches the request${this.whyNoModel(llm)}`, source: "rule" };
  }

  private mayAsk(declared: boolean): boolean {
    return (
      this.options.model !== undefined &&
      this.options.only !== "rules" &&
      (declared || this.options.only === "llm")
    );
  }

  private whyNoModel(declared: boolean): string {
    if (!declared) return " (the policy does not allow the LLM labeler here)";
    return this.options.model === undefined ? " (no labeling model configured)" : "";
  }

  /**
   * Asks the model (retrying once on an invalid answer), through the cache; fails closed. The
   * cache key hashes the policy, the model and the whole request (prompt with the labels and
   * field descriptions, and the text), so an edited policy never reuses an old answer.
   */
  private async ask(
    request: ModelRequest,
    signal: AbortSignal | undefined,
    budget: GroundingBudget | undefined,
    parse: (raw: string) => Parsed<unknown>,
  ): Promise<GroundingResult> {
    const model = this.options.model as LabelModel;
    const key = createHash("sha256")
      .update(JSON.stringify([this.policy.name, model.name, request]))
      .digest("hex");
    const cached = this.cache?.get(key);
    if (cached) return { value: cached.value, source: "cache" };
    let lastError = "";
    for (let attempt = 0; attempt < 2; attempt++) {
      const spent = budget?.ask();
      if (spent) return spent;
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let raw: string;
      try {
        raw = await model.complete(request, combined);
      } catch (error) {
        if (timeout.aborted && !signal?.aborted)
          return {
            error: `MNT_ERR_LABELER_TIMEOUT: no answer from ${model.name} within ${this.timeoutMs} ms`,
            source: "llm",
          };
        if (signal?.aborted) return { error: `aborted: ${String(signal.reason)}`, source: "llm" };
        if (error instanceof MentorError && error.code === "MNT_ERR_LABELER_OUTPUT") {
          lastError = error.message;
          continue;
        }
        const text = error instanceof MentorError ? `${error.code}: ${error.message}` : String(error);
        return { error: text, source: "llm" };
      }
      const parsed = parse(raw);
      if (parsed.ok) {
        this.cache?.set(key, { value: parsed.value });
        return { value: parsed.value, source: "llm" };
      }
      lastError = parsed.error;
    }
    return {
      error: `MNT_ERR_LABELER_OUTPUT: ${model.name} answered invalidly twice; ${lastError}`,
      source: "llm",
    };
  }
}

/** Pause the grounding for the event loop after this much synchronous work. */
const PAUSE_EVERY_MS = 20;

/** What grounding one conversation may still spend (`LabelerOptions.limits`); past it, results that say so. */
class GroundingBudget {
  private characters = 0;
  private requests = 0;

  constructor(private readonly limits: { maxModelRequests: number; maxCharacters: number }) {}

  /** Counts a message's text; a result that fails closed once the characters are spent. */
  read(text: string): GroundingResult | undefined {
    this.characters += text.length;
    if (this.characters <= this.limits.maxCharacters) return undefined;
    return {
      error: `not read: the conversation's text passed the labeler's budget of ${this.limits.maxCharacters} characters`,
      source: "rule",
    };
  }

  /** Counts a model request; a result that fails closed once the requests are spent. */
  ask(): GroundingResult | undefined {
    this.requests++;
    if (this.requests <= this.limits.maxModelRequests) return undefined;
    return {
      error: `not asked: the labeler's budget of ${this.limits.maxModelRequests} model requests per conversation was spent`,
      source: "llm",
    };
  }
}

function note(
  message: number,
  kind: GroundingNote["kind"],
  result: GroundingResult,
  started: number,
): GroundingNote {
  const ms = Math.round((performance.now() - started) * 100) / 100;
  return "error" in result
    ? { message, kind, source: result.source, error: result.error, ms }
    : { message, kind, source: result.source, value: result.value, ms };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parsedArguments(raw: unknown): Record<string, Value> {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return {};
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, Value>)
    : {};
}

/** The error for a request the labeler could not ground into the policy's task (`--strict-grounding`); undefined if it could. */
export function ungroundedError(notes: readonly GroundingNote[], policy: string): MentorError | undefined {
  const task = notes.find((note) => note.kind === "task" && note.error !== undefined);
  return task
    ? new MentorError(
        "MNT_ERR_UNGROUNDED",
        `messages[${task.message}]: the request could not be grounded into policy ${policy}'s task (${task.error})`,
      )
    : undefined;
}
