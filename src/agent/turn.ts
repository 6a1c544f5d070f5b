import { randomBytes } from "node:crypto";
import { defaultEta, defaultMaxRegenerations } from "../base/defaults.js";
import { MentorError } from "../errors/index.js";
import {
  type Action,
  type Advice,
  type Decision,
  type Duty,
  type Evaluator,
  type Monitor,
  type NextAnswer,
  needsSolver,
  type ProposedCall,
  SearchBudget,
  type Stop,
  sameCall,
  yieldToEventLoop,
} from "../evaluator/index.js";
import { type Value, valuesEqual } from "../expression/index.js";
import { type ChatMessage, type ChatTool, messageText, type ToolChoice } from "../openai/index.js";
import type { Policy } from "../policy/index.js";
import { blockedText, doneRefusedText, reminderText, stoppedText, stuckText } from "../shield/index.js";
import {
  defaultToolChoice,
  type ShieldSets,
  shieldSetsFor,
  shieldSetsFromNextAnswer,
  type TurnSets,
  turnSets,
  withDoneTool,
} from "../shield/token/index.js";
import type { SolverClient } from "../smt/index.js";
import type { GeneratedCall, Generation, TurnGenerator, Usage } from "./generator.js";
import { type Grounder, type GroundingNote, ungroundedError } from "./grounder.js";
import { offeredCall } from "./offered.js";

/** `none`: generate once (the evaluator's verdicts are only recorded); `prompt`: feedback text; `token`: masks too. */
export type ShieldMode = "none" | "prompt" | "token";

export const shieldModes: readonly ShieldMode[] = ["none", "prompt", "token"];

export interface TurnOptions {
  /** The conversation (OpenAI messages); the turn answers its end. */
  messages: readonly ChatMessage[];
  tools?: readonly ChatTool[];
  /** Default `auto` when tools are given, else `none`. */
  toolChoice?: ToolChoice;
  /** Whether the model may write several calls in one message (where its format allows). Default true. */
  parallelToolCalls?: boolean;
  mode: ShieldMode;
  /** Token shield boost of progressing names and values. Default 0.5. */
  eta?: number;
  /**
   * Token shield: steer a masked name the model wanted to the call the advice says would allow it
   * (`ShieldSets.redirects`). Default true; false masks it like any unsafe name.
   */
  intent?: boolean;
  /**
   * Refuse a request whose task could not be grounded (`MNT_ERR_UNGROUNDED`) instead of running it
   * without the duties it would create. Default false (the notes report it).
   */
  strictGrounding?: boolean;
  /**
   * Z3 for a call blocked only by argument constraints that no candidate value repairs
   * (`Monitor.repairWithSolver`; a solver error or timeout keeps the call blocked and says so).
   * Called once a turn needs it; absent: candidate values only.
   */
  solver?: () => SolverClient;
  /** The policy's evaluator; absent = no policy (every mode then just generates). */
  evaluator?: Evaluator;
  grounder: Grounder;
  generator: TurnGenerator;
  seed?: number;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: readonly string[];
  /** `response_format`'s JSON Schema: an answer without tools follows it (`GenerationRequest.responseSchema`). */
  responseSchema?: Record<string, unknown>;
  signal?: AbortSignal;
  /**
   * When the turn's answer is due (a `Date.now()` time: the server's request timeout). The
   * evaluator's searches stop there, so the timeout's abort is not held up by them. Default none.
   */
  deadline?: number;
  /** Generations after the first one (blocked calls, refused answers). Default 4. */
  maxRegenerations?: number;
  /**
   * Called once, after the checks that may refuse the whole turn (grounding, nothing allowed) and
   * before the first generation: a streamed reply opens here, so those refusals keep their status.
   */
  onGenerating?: () => void;
}

/** A proposed call and the evaluator's decision on it. */
export interface AttemptCall {
  call: ProposedCall;
  verdict: "allow" | "block";
  /** What the rules' severities make of it (docs/policy.md, "Severities"). */
  action: Action;
  /** Rules the call breaks (block mode: why it is blocked). */
  rules: string[];
  /** Warn-mode rules the call breaks (allowed with a warning). */
  warnings: string[];
  advice?: Advice;
  /** Why the shield blocked without deciding (it fails closed). */
  failClosed?: string;
  /** The search for advice ran out of its budget (the advice may be missing). */
  searchStopped?: string;
  /** The shield's feedback to the model when the call is blocked. */
  feedback?: string;
}

/** One generation of the turn and what the shield made of it. */
export interface TurnAttempt {
  content: string | null;
  calls: AttemptCall[];
  finishReason: Generation["finishReason"];
  /** For an answer without a call: whether the policy allowed ending, and whether the shield refused it. */
  done?: { allowed: boolean; refused: boolean; feedback?: string };
  usage: Usage;
  generateMs: number;
  decideMs: number;
  /**
   * Token shield: the tool of a call that repeated a made call whose outcome is a fact, while a
   * call progresses instead; not returned, the turn generated again with that tool steered there.
   */
  repeated?: string;
  /**
   * Shielded: the tools of calls identical to one before them in the message, of tools whose
   * answers are facts (not volatile): not made, the first one's answer is theirs.
   */
  duplicates?: string[];
}

/** What the shield did in a turn: the `mentor` field of a response and of a flight record. */
export interface TurnRecord {
  mode: ShieldMode;
  policy?: string;
  /** The values the system prompt gave the policy's settings (docs/policy.md), where it has any. */
  settings?: Record<string, number | boolean>;
  attempts: TurnAttempt[];
  /** Calls blocked in this turn (never returned). */
  blocked: number;
  /** Blocked calls whose advice was the same call with repaired arguments. */
  repairs: Advice[];
  doneRefusals: number;
  /** The bound on regenerations ran out: the message is the shield's last feedback. */
  exhausted: boolean;
  /** Duties open before the turn, and the game states behind the answer. */
  openDuties: Duty[];
  game?: NextAnswer["gameStates"];
  /** The game search hit its limit: unclassified calls counted as unsafe. */
  failClosed?: string;
  /** The run has made the policy's `done.stuck_after` calls with duties open: it may end (says why). */
  stuck?: string;
  /** The token shield's search for redirects ran out of its budget: the redirects not found are masks. */
  searchStopped?: string;
  /** A `stop` rule stopped the run in this turn: the message is the shield's stop text. */
  stopped?: Stop;
  /** The call a person approved (`mentor.approve`), returned without generating. */
  approved?: ProposedCall;
  grounding: GroundingNote[];
  /** Summed over every generation of the turn (regenerations cost tokens too). */
  usage: Usage;
  /** Grounding; the evaluator's questions before the first generation (next, reminder); the whole turn. */
  timings: { groundMs: number; prepareMs: number; totalMs: number };
}

export interface AssistantMessage extends ChatMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
}

export interface TurnResult {
  message: AssistantMessage;
  finishReason: "stop" | "tool_calls" | "length";
  /**
   * The turn's last generation's (the answer's own; an exhausted turn's last refused one): within
   * max_tokens. The whole turn's is `mentor.usage`.
   */
  usage: Usage;
  mentor: TurnRecord;
}

/**
 * One shielded assistant turn (docs/architecture.md, "The data flow"). The evaluator judges the
 * client's conversation as grounded; the model sees a working copy of it with the shield's texts:
 * the reminder of open duties after the latest text tool output, and for each blocked call the call
 * and a tool result with the shield's feedback (then it generates again, up to `maxRegenerations`).
 * An answer without a call while duties are open is refused (feedback as a user message) up to the
 * policy's `done.max_refusals`, then allowed. When the bound runs out, the client receives an
 * assistant message whose content is the shield's last feedback (`finish_reason: stop`,
 * `mentor.exhausted: true`); a blocked call is never returned.
 */
export async function runTurn(options: TurnOptions): Promise<TurnResult> {
  const started = performance.now();
  const tools = options.tools ?? [];
  const toolChoice: ToolChoice = options.toolChoice ?? defaultToolChoice(tools);
  if (options.mode === "token" && !options.generator.tokenShield)
    throw new MentorError(
      "MNT_ERR_TOKEN_SHIELD_UNAVAILABLE",
      "this generator cannot apply the token shield (use shield prompt)",
    );
  // The evaluator's work is synchronous and bounded per step (the game's states, the advice
  // searches' budgets): between steps the event loop runs other requests and the timeout's abort.
  const pause = (): Promise<void> => yieldToEventLoop(options.signal);
  const budget = (): SearchBudget => new SearchBudget(options.evaluator?.options.search, options.deadline);
  // An over-long conversation is refused before the labeler reads it.
  options.generator.checkContext?.({ messages: options.messages, tools, maxTokens: options.maxTokens });
  const grounding = await options.grounder.ground(options.messages, options.signal);
  const groundMs = performance.now() - started;
  await pause();
  const ungrounded =
    options.strictGrounding && options.evaluator
      ? ungroundedError(grounding.notes, options.evaluator.policy.name)
      : undefined;
  if (ungrounded) throw ungrounded;
  const history = grounding.messages as ChatMessage[];
  const evaluator = options.evaluator;
  const shielded = evaluator !== undefined && options.mode !== "none";
  const next = evaluator?.next(history);
  if (evaluator) await pause();
  const record: TurnRecord = {
    mode: options.mode,
    ...(evaluator ? { policy: evaluator.policy.name } : {}),
    ...(evaluator && evaluator.policy.settings.specs.length > 0
      ? { settings: evaluator.policy.settings.values }
      : {}),
    attempts: [],
    blocked: 0,
    repairs: [],
    doneRefusals: 0,
    exhausted: false,
    openDuties: next?.openDuties ?? [],
    ...(next ? { game: next.gameStates } : {}),
    ...(next?.failClosed !== undefined ? { failClosed: next.failClosed } : {}),
    ...(next?.done.stuck !== undefined ? { stuck: next.done.stuck } : {}),
    grounding: grounding.notes,
    usage: { promptTokens: 0, completionTokens: 0 },
    timings: { groundMs, prepareMs: 0, totalMs: 0 },
  };
  const finish = (message: AssistantMessage, finishReason: TurnResult["finishReason"]): TurnResult => {
    record.timings.totalMs = performance.now() - started;
    const usage = record.attempts.at(-1)?.usage ?? { promptTokens: 0, completionTokens: 0 };
    return { message, finishReason, usage, mentor: record };
  };

  if (shielded) {
    const monitor = (evaluator as Evaluator).monitorOf(history);
    if (monitor.stopped) throw withTurnRecord(stoppedError(monitor.stopped), record);
    const approved = approvedCall(history);
    const decision = approved && monitor.decide(approved);
    if (approved && decision?.verdict === "allow") {
      record.approved = approved;
      const call = attemptOf(decision);
      record.attempts.push({
        content: null,
        calls: [call],
        finishReason: "tool_calls",
        usage: { promptTokens: 0, completionTokens: 0 },
        generateMs: 0,
        decideMs: 0,
      });
      return finish(toolCallMessage(null, [call]), "tool_calls");
    }
  }
  // What the request offers, intersected with what the policy allows (unshielded: the request alone).
  const turnOf = (sets?: ShieldSets) =>
    turnSets({
      tools: tools.map((tool) => tool.function.name),
      toolChoice,
      ...(options.parallelToolCalls !== undefined ? { parallelToolCalls: options.parallelToolCalls } : {}),
      ...(sets ? { sets } : {}),
    });
  const turn = turnOf(
    shielded && next !== undefined
      ? withDoneTool(
          { unsafeTools: unsafeNames(next, tools, evaluator as Evaluator), doneAllowed: next.done.allowed },
          evaluator?.policy.doneTool,
        )
      : undefined,
  );
  if (turn.refusal !== undefined)
    throw withTurnRecord(new MentorError("MNT_ERR_NOTHING_ALLOWED", turn.refusal), record);
  const working: ChatMessage[] = shielded
    ? withReminder(history, evaluator, next as NextAnswer, budget())
    : [...history];
  if (shielded) await pause();
  let tokenShield =
    options.mode === "token" && next !== undefined
      ? {
          sets: tokenSets(evaluator as Evaluator, history, next, budget(), {
            tools,
            intent: options.intent ?? true,
          }),
          eta: options.eta ?? defaultEta,
        }
      : undefined;
  if (tokenShield?.sets.searchStopped !== undefined) record.searchStopped = tokenShield.sets.searchStopped;
  if (tokenShield) await pause();
  record.timings.prepareMs = performance.now() - started - groundMs;
  options.onGenerating?.();
  const maxRegenerations = options.maxRegenerations ?? defaultMaxRegenerations;
  let lastFeedback = "";

  for (let attempt = 0; attempt <= maxRegenerations; attempt++) {
    if (options.signal?.aborted) throw new MentorError("MNT_ERR_CANCELLED", "the turn was cancelled");
    const generationStarted = performance.now();
    const generation = await options.generator.generate({
      messages: working,
      tools,
      toolChoice,
      parallelToolCalls: options.parallelToolCalls,
      ...(tokenShield ? { tokenShield } : {}),
      // A regeneration samples anew (the prompt differs too, but a greedy model may repeat itself).
      seed: options.seed !== undefined ? options.seed + attempt : undefined,
      temperature: options.temperature,
      topP: options.topP,
      maxTokens: options.maxTokens,
      stop: options.stop,
      ...(options.responseSchema !== undefined ? { responseSchema: options.responseSchema } : {}),
      signal: options.signal,
    });
    record.usage.promptTokens += generation.usage.promptTokens;
    record.usage.completionTokens += generation.usage.completionTokens;
    const decideStarted = performance.now();
    const entry: TurnAttempt = {
      content: generation.content,
      calls: [],
      finishReason: generation.finishReason,
      usage: generation.usage,
      generateMs: decideStarted - generationStarted,
      decideMs: 0,
    };
    record.attempts.push(entry);
    /**
     * The end of the run (an answer, or a call of the policy's done tool) judged as `done`:
     * refused while duties are open, up to `done.max_refusals` (`entry.done` has the feedback),
     * else allowed. Only a client that asked for text (tool_choice none) may end with duties
     * open; a request without tools may not.
     */
    const endRefused = (): boolean => {
      const done = (next as NextAnswer).done;
      entry.done = { allowed: done.allowed, refused: false };
      const refuse =
        shielded &&
        !done.allowed &&
        options.toolChoice !== "none" &&
        record.doneRefusals < (evaluator as Evaluator).policy.maxDoneRefusals;
      if (!refuse) return false;
      record.doneRefusals++;
      entry.done = {
        ...entry.done,
        refused: true,
        feedback: doneRefusedText((next as NextAnswer).openDuties),
      };
      return true;
    };
    if (generation.finishReason === "refused")
      throw withTurnRecord(
        new MentorError("MNT_ERR_NOTHING_ALLOWED", generation.refusal ?? "the shield allows nothing"),
        record,
      );

    if (generation.toolCalls.length > 0) {
      // Severities that count refusals (escalate, override) read this turn's refusals too.
      const judgedOn = evaluator?.severities.countsRefusals ? working : history;
      // A generator that writes more calls than the turn may hold (parallel_tool_calls false): the first ones.
      const offered = generation.toolCalls
        .slice(0, turn.maxCalls)
        .map((call) => offeredCall(call, tools, toolChoice));
      // A call of the policy's done tool is the end of the run: judged as `done`, never as a call.
      const isEnd = (call: GeneratedCall) =>
        call.name === evaluator?.policy.doneTool && call.invalid === undefined;
      const ends = offered.filter(isEnd);
      const written = offered.filter((call) => !isEnd(call));
      const calls = shielded ? withoutDuplicates(written, (evaluator as Evaluator).policy) : written;
      if (calls.length < written.length)
        entry.duplicates = written.filter((call) => !calls.includes(call)).map((call) => call.name);
      entry.calls = await judgeInOrder(evaluator, judgedOn, calls, { solver: options.solver, budget, pause });
      entry.decideMs = performance.now() - decideStarted;
      const blocked = entry.calls.filter((call) => call.verdict === "block");
      const repeated =
        tokenShield && blocked.length === 0 && attempt < maxRegenerations
          ? repeatToSteer(
              evaluator as Evaluator,
              history,
              next as NextAnswer,
              entry.calls,
              tokenShield.sets,
              turnOf,
            )
          : undefined;
      if (repeated !== undefined && tokenShield) {
        entry.repeated = repeated.tool;
        tokenShield = { ...tokenShield, sets: repeated.sets };
        continue;
      }
      if (!shielded || blocked.length === 0) {
        const end = ends[0];
        if (end !== undefined) {
          if (endRefused()) {
            // The model sees its end refused as the call's result, as a blocked call's feedback.
            const message = toolCallMessage(generation.content, [allowedAttempt(end)]);
            const feedback = entry.done?.feedback as string;
            working.push(message, {
              role: "tool",
              tool_call_id: message.tool_calls?.[0]?.id as string,
              content: feedback,
            });
            lastFeedback = feedback;
            continue;
          }
          entry.calls.push(...ends.map(allowedAttempt));
        }
        // Unshielded too, a call that could not be judged (unreadable, not offered) is not returned.
        const returned = entry.calls.filter((_, index) => calls[index]?.invalid === undefined);
        if (returned.length === 0) return finish({ role: "assistant", content: generation.content }, "stop");
        return finish(toolCallMessage(generation.content, returned), "tool_calls");
      }
      record.blocked += blocked.length;
      const stop = blocked.find((call) => call.action === "stop");
      if (stop) {
        record.stopped = { rules: stop.rules, call: stop.call };
        return finish({ role: "assistant", content: stop.feedback as string }, "stop");
      }
      const ask = blocked.find((call) => call.action === "ask");
      if (ask) throw withTurnRecord(approvalError(ask), record);
      for (const call of blocked) if (call.advice?.kind === "repair") record.repairs.push(call.advice);
      if (tokenShield && (options.intent ?? true)) {
        const steered = blockedToSteer(blocked, tokenShield.sets, turnOf);
        if (steered) tokenShield = { ...tokenShield, sets: steered };
      }
      // The model sees its blocked calls answered by the shield; allowed calls of the same
      // message are dropped with them (it proposes again with the feedback in view: the allowed
      // ones were judged after the blocked ones' pending outcomes, so they may not stand alone).
      const message = toolCallMessage(generation.content, blocked);
      working.push(message);
      blocked.forEach((call, index) => {
        working.push({
          role: "tool",
          tool_call_id: message.tool_calls?.[index]?.id as string,
          content: call.feedback as string,
        });
      });
      lastFeedback = blocked.map((call) => call.feedback).join("\n");
      continue;
    }

    // An answer cut by max_tokens ends the turn too: it is refused like any other while duties are open.
    const answer: AssistantMessage = { role: "assistant", content: generation.content };
    const finishReason = generation.finishReason === "length" ? "length" : "stop";
    if (evaluator === undefined) return finish(answer, finishReason);
    const refused = endRefused();
    entry.decideMs = performance.now() - decideStarted;
    if (!refused) return finish(answer, finishReason);
    const feedback = entry.done?.feedback as string;
    if (generation.content !== null) working.push(answer);
    working.push({ role: "user", content: feedback });
    lastFeedback = feedback;
  }
  record.exhausted = true;
  return finish({ role: "assistant", content: lastFeedback }, "stop");
}

/**
 * The calls of one message without those identical to one before them (same tool, equal
 * arguments) of a tool that is not volatile: the same call gets the same answer (docs/policy.md,
 * "The model of the world"), so a check written twice in one message is made once and a booking
 * written twice is not made twice. A volatile tool's calls (a status poll) are all kept.
 */
function withoutDuplicates(calls: readonly GeneratedCall[], policy: Policy): GeneratedCall[] {
  return calls.filter(
    (call, index) =>
      call.invalid !== undefined ||
      policy.tools.get(call.name)?.volatile === true ||
      !calls
        .slice(0, index)
        .some(
          (earlier) =>
            earlier.invalid === undefined && sameCall(earlier as ProposedCall, call as ProposedCall),
        ),
  );
}

/**
 * Calls of one message (parallel calls) are judged in order, each after the ones before it with
 * their outcomes still pending (every outcome possible): two bookings of one route in one
 * message are judged as two bookings, not as one each. They step the conversation's monitor (a
 * copy: nothing kept changes), as a conversation that ends in their message would.
 */
async function judgeInOrder(
  evaluator: Evaluator | undefined,
  history: readonly ChatMessage[],
  calls: readonly GeneratedCall[],
  steps: { solver: (() => SolverClient) | undefined; budget: () => SearchBudget; pause: () => Promise<void> },
): Promise<AttemptCall[]> {
  const monitor = evaluator?.monitorOf(history);
  const judged: AttemptCall[] = [];
  for (const call of calls) {
    const attempt = await judge(monitor, call, steps.solver, steps.budget());
    judged.push(attempt);
    if (monitor) {
      monitor.recordPending(attempt.call);
      await steps.pause();
    }
  }
  return judged;
}

/** The monitor's decision on a proposed call, with the feedback the model reads if it is blocked. */
async function judge(
  monitor: Monitor | undefined,
  call: GeneratedCall,
  solver: (() => SolverClient) | undefined,
  budget: SearchBudget,
): Promise<AttemptCall> {
  const proposed: ProposedCall = { name: call.name, arguments: call.arguments as Record<string, Value> };
  if (call.invalid !== undefined)
    return {
      call: proposed,
      verdict: "block",
      action: "block",
      rules: [],
      warnings: [],
      failClosed: call.invalid,
      feedback: `[SHIELD] Blocked ${call.name}: ${call.invalid}.`,
    };
  if (monitor === undefined) return allowedAttempt(call);
  const decision = monitor.decide(proposed, true, budget);
  return attemptOf(
    solver && needsSolver(decision) ? await monitor.repairWithSolver(decision, solver()) : decision,
  );
}

/** A call allowed without a decision (no policy; the end of the run, judged as `done`). */
function allowedAttempt(call: GeneratedCall): AttemptCall {
  const proposed: ProposedCall = { name: call.name, arguments: call.arguments as Record<string, Value> };
  return { call: proposed, verdict: "allow", action: "allow", rules: [], warnings: [] };
}

/** A decision as the turn records it, with the feedback the model reads if the call is refused. */
function attemptOf(decision: Decision): AttemptCall {
  const judged: AttemptCall = {
    call: decision.call,
    verdict: decision.verdict,
    action: decision.action,
    rules: decision.violations.map((finding) => finding.rule),
    warnings: decision.warnings.map((finding) => finding.rule),
  };
  if (decision.advice) judged.advice = decision.advice;
  if (decision.failClosed !== undefined) judged.failClosed = decision.failClosed;
  if (decision.searchStopped !== undefined) judged.searchStopped = decision.searchStopped;
  if (decision.verdict === "block")
    judged.feedback = decision.action === "stop" ? stoppedText(decision) : blockedText(decision);
  return judged;
}

/** The call the conversation's last message approves (a user message with `mentor.approve`), if any. */
function approvedCall(history: readonly ChatMessage[]): ProposedCall | undefined {
  const last = history.at(-1);
  const approve = (last?.mentor as { approve?: ProposedCall } | undefined)?.approve;
  // The trace reader has checked its shape (a tool of the policy, arguments an object).
  return last?.role === "user" && approve !== undefined
    ? { name: approve.name, arguments: approve.arguments }
    : undefined;
}

/** The answer to a call an `ask` rule holds: a pending decision the client turns into a question. */
function approvalError(ask: AttemptCall): MentorError {
  const error = new MentorError(
    "MNT_ERR_APPROVAL_REQUIRED",
    `${ask.call.name} needs a person's approval (rule ${ask.rules.join(", ")}); approve it with a user message carrying mentor.approve`,
  );
  error.details = { pending: { name: ask.call.name, arguments: ask.call.arguments, rules: ask.rules } };
  return error;
}

/** What the turn had done when it was refused (its grounding, duties, generations): for the flight record. */
const refusedTurns = new WeakMap<MentorError, TurnRecord>();

function withTurnRecord(error: MentorError, record: TurnRecord): MentorError {
  refusedTurns.set(error, record);
  return error;
}

/** The turn record of a turn that ended in this error (a refusal: nothing allowed, the run stopped), if any. */
export function turnRecordOf(error: unknown): TurnRecord | undefined {
  return error instanceof MentorError ? refusedTurns.get(error) : undefined;
}

function stoppedError(stop: Stop): MentorError {
  const by = stop.rules.length > 0 ? ` by rule ${stop.rules.join(", ")}` : "";
  const error = new MentorError(
    "MNT_ERR_RUN_STOPPED",
    `the run was stopped${by}; a person resumes it with a user message carrying mentor: {resume: true}`,
  );
  error.details = { stopped: stop };
  return error;
}

/**
 * A call that repeats a made call whose outcome is a fact (its tool not volatile, the answer read:
 * it can only tell what the run knows) and is no progressing call `next` lists (a login again after
 * a logout is progress), where the token shield has a call that progresses instead and the turn
 * may make it: the tool, and the sets with it steered there (`ShieldSets.repeated`). Covers what
 * `next` cannot mark by name: a tool the policy's rules do not read, a lookup of one order asked
 * again while another is still to look up.
 */
function repeatToSteer(
  evaluator: Evaluator,
  history: readonly ChatMessage[],
  next: NextAnswer,
  calls: readonly AttemptCall[],
  sets: ShieldSets,
  turnOf: (sets: ShieldSets) => TurnSets,
): { tool: string; sets: ShieldSets } | undefined {
  const steering = sets.repeated;
  if (steering === undefined) return undefined;
  const run = evaluator.run(history);
  for (const { call } of calls) {
    if (call.name === steering.to || steering.tools.includes(call.name)) continue;
    if (run.observed(call.name, call.arguments) === undefined) continue;
    const progresses = next.calls.some(
      (listed) =>
        listed.class === "progressing" &&
        listed.call.name === call.name &&
        Object.entries(listed.call.arguments).every(([name, value]) =>
          valuesEqual(call.arguments[name] ?? null, value),
        ),
    );
    if (progresses) continue;
    const steered = { ...sets, repeated: { ...steering, tools: [...steering.tools, call.name] } };
    if (!turnOf(steered).allowed.includes(call.name)) return { tool: call.name, sets: steered };
  }
  return undefined;
}

/**
 * After a blocked call whose advice is a step of another tool to make first (a prerequisite), the
 * sets with the blocked tool redirected to that step for the rest of the turn, as an unsafe tool's
 * wish is (the advised values steered, the others the model's): a model that reads the advice but
 * writes the blocked call again (an exchange before its items' product lookup, five times on
 * tau2-retail task 0) makes the step instead. Undefined where no blocked call has such advice, or
 * the turn may not call the step.
 */
function blockedToSteer(
  blocked: readonly AttemptCall[],
  sets: ShieldSets,
  turnOf: (sets: ShieldSets) => TurnSets,
): ShieldSets | undefined {
  for (const { call, advice } of blocked) {
    if (advice?.kind !== "prerequisite" || advice.call.name === call.name) continue;
    const steered: ShieldSets = {
      ...sets,
      unsafeTools: [...new Set([...(sets.unsafeTools ?? []), call.name])],
      redirects: [
        ...(sets.redirects ?? []).filter((redirect) => redirect.tool !== call.name),
        { tool: call.name, to: advice.call.name, arguments: advice.call.arguments },
      ],
    };
    if (turnOf(steered).allowed.includes(advice.call.name)) return steered;
  }
  return undefined;
}

/** The policy's unsafe tools, and the request's tools the policy does not declare (fail closed). */
function unsafeNames(next: NextAnswer, tools: readonly ChatTool[], evaluator: Evaluator): string[] {
  const undeclared = tools
    .map((tool) => tool.function.name)
    .filter((name) => !evaluator.policy.tools.has(name));
  return [...next.tools.filter((tool) => tool.class === "unsafe").map((tool) => tool.name), ...undeclared];
}

/** The token shield's sets (what tool_choice offers is intersected with them by `turnSets`). */
function tokenSets(
  evaluator: Evaluator,
  history: readonly ChatMessage[],
  next: NextAnswer,
  budget: SearchBudget,
  { tools, intent }: { tools: readonly ChatTool[]; intent: boolean },
): ShieldSets {
  const sets = intent ? shieldSetsFor(evaluator, history, next, budget) : shieldSetsFromNextAnswer(next);
  return withDoneTool(
    { ...sets, unsafeTools: unsafeNames(next, tools, evaluator) },
    evaluator.policy.doneTool,
  );
}

/**
 * The working copy of the conversation: the latest text tool output (the one after the last
 * assistant call) gets the reminder of open duties and any warning.
 */
function withReminder(
  history: readonly ChatMessage[],
  evaluator: Evaluator,
  next: NextAnswer,
  budget: SearchBudget,
): ChatMessage[] {
  const working = [...history];
  const lastCall = history.findLastIndex(
    (message) => message.role === "assistant" && message.tool_calls?.length,
  );
  if (lastCall < 0) return working;
  const calls = new Map((history[lastCall]?.tool_calls ?? []).map((call) => [call.id, call.function]));
  for (let index = history.length - 1; index > lastCall; index--) {
    const message = history[index] as ChatMessage;
    if (message.role !== "tool") continue;
    const called = calls.get(message.tool_call_id);
    if (called === undefined || evaluator.policy.tools.get(called.name)?.output !== "text") continue;
    let args: Record<string, Value>;
    try {
      args = JSON.parse(called.arguments || "{}") as Record<string, Value>;
    } catch {
      return working;
    }
    const decision: Decision = {
      ...evaluator.decide(history.slice(0, lastCall), { name: called.name, arguments: args }, budget),
      openDuties: next.openDuties,
    };
    // A stuck run is told it may stop (the duties are listed once, with why it may).
    const reminder =
      next.done.stuck === undefined
        ? reminderText(decision)
        : [reminderText({ ...decision, openDuties: [] }), stuckText(next.openDuties)]
            .filter((part) => part !== undefined)
            .join("\n");
    if (reminder !== undefined)
      working[index] = { ...message, content: `${messageText(message.content)}\n\n${reminder}` };
    return working;
  }
  return working;
}

function toolCallMessage(content: string | null, calls: readonly AttemptCall[]): AssistantMessage {
  return {
    role: "assistant",
    content,
    tool_calls: calls.map((entry) => ({
      id: `call_${randomBytes(12).toString("base64url")}`,
      type: "function",
      function: { name: entry.call.name, arguments: JSON.stringify(entry.call.arguments) },
    })),
  };
}
