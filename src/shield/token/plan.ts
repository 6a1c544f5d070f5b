import { defaultEta, defaultMaxTokens } from "../../base/defaults.js";
import { MentorError } from "../../errors/index.js";
import {
  type ChatMessage,
  type ChatTool,
  formatJsonPath,
  type ToolChoice,
  type ToolDefinition,
} from "../../openai/index.js";
import type { ArgumentSets, CallSyntax } from "./call-syntax.js";
import { defaultStrength } from "./mask.js";
import type { ShieldSets } from "./sets.js";
import { steeringOf } from "./steering.js";
import { defaultToolChoice, turnSets, unknownChoiceTool } from "./turn-sets.js";

// What a generation is asked for, and the decode plan it resolves to (no node-llama-cpp here).

export interface ShieldOptions {
  /** `none`: syntax only (names of declared tools, JSON skeleton); `token`: the sets below too. Default `none`. */
  mode?: "none" | "token";
  /** What the shield allows, bans and boosts (token mode). */
  sets?: ShieldSets;
  /**
   * Added to the logit of tokens toward progressing names/values; with temperature T the boost
   * is eta/T in log-probability. Default 0.5.
   */
  eta?: number;
  /** Logit added to the allowed tokens of an allow-list slot. Default 100. */
  strength?: number;
}

/** What the decoder must produce and what the shield allows, resolved for one generation. */
export interface DecodePlan {
  syntax: CallSyntax;
  tools: ToolDefinition[];
  /** Names the tool-name slot may take (already intersected with the shield and tool_choice). */
  names: string[];
  progressingNames: string[];
  /**
   * Intent-keeping (token mode): an unsafe tool the model may still start to name, and the allowed
   * tool its advice names. A name that can only become the unsafe tool is replaced by the advised one.
   */
  redirects: Map<string, string>;
  /**
   * Per advised tool, the values its redirected call is steered to (the advised call's
   * arguments): the slots allow only these. Absent: redirected calls are shielded as usual.
   */
  redirectArguments?: Map<string, Map<string, ArgumentSets>>;
  /**
   * Intent-keeping for the end of the turn (token mode, `done` not allowed): the allowed tool whose
   * call the advice names toward the open duties. An end token sampled in free text is replaced by
   * this call (its values steered by `redirectArguments`); absent: by a call whose name is open.
   */
  endRedirect?: string;
  /**
   * In a turn that may not end: the free-text tokens after which the end of the turn is taken as
   * reached (the next token becomes the call, the advised one where `endRedirect` is set), so that
   * text cut by max_tokens cannot end it. `planGeneration` sets half of max_tokens with
   * `endRedirect`; less where the advised call needs more than the other half of `maxTokens`.
   */
  freeTextBudget?: number;
  /** The answer's tokens at most, forced ones included (the engine cuts there). */
  maxTokens?: number;
  /** Per tool, per argument. */
  argumentSets: Map<string, Map<string, ArgumentSets>>;
  /** Whether free text may start the turn and whether the turn may end without a call. */
  startInCall: boolean;
  /** Whether a call may be opened from free text (tool_choice auto). */
  callsAllowed: boolean;
  /** Whether an end-of-generation token may end the turn without a call. */
  endAllowed: boolean;
  /**
   * Ending the turn is the progressing move (no duty open, no call progresses). The end token
   * cannot be biased, so the tokens that would open a call from free text get `-eta` instead:
   * the same shift of the odds between calling and ending.
   */
  endProgressing: boolean;
  /** Calls the turn may hold (1 without parallel calls; Infinity: until the model ends the turn). */
  maxCalls: number;
  /** Calls forced before the turn may end (after the first, each opens with `betweenCalls`). */
  minCalls: number;
  eta: number;
  strength: number;
  /** Apply eta boosts (token mode); the syntax masks apply in every mode. */
  boost: boolean;
  /** A free string is closed after this many tokens. */
  maxStringTokens: number;
}

export interface GenerateOptions {
  messages: readonly ChatMessage[];
  tools?: readonly ChatTool[];
  /** Default `auto` when tools are given. */
  toolChoice?: ToolChoice;
  shield?: ShieldOptions;
  /** Sampling seed. Default 0. */
  seed?: number;
  /** Default 0.7. */
  temperature?: number;
  /** Nucleus sampling. Default 1 (off). */
  topP?: number;
  /** The free text ends before the first of these strings (never inside a call). */
  stop?: readonly string[];
  /** Aborts the generation: it rejects with `MNT_ERR_CANCELLED`. */
  signal?: AbortSignal;
  /**
   * The answer's tokens at most, forced structure included (a call's opening, skeleton and
   * closing): a call that does not fit is cut (`MNT_ERR_ENGINE_CALL_INCOMPLETE`), text ends with
   * `finishReason: "length"`. Default `defaultMaxTokens`.
   */
  maxTokens?: number;
  /** A free string argument is closed after this many tokens. Default 24. */
  maxStringTokens?: number;
  /**
   * Whether the model may write several calls in one turn (OpenAI's `parallel_tool_calls`), where
   * its chat format allows them (`Engine.syntax.betweenCalls`). Default true; false: one call.
   */
  parallelToolCalls?: boolean;
  /**
   * Calls the turn must hold: the first is forced as with `tool_choice: "required"`, the others
   * after each call's suffix. Above 1 only with parallel calls. Default 0.
   */
  minToolCalls?: number;
  /**
   * A JSON Schema the answer follows (`response_format`): with no call possible, the text is
   * decoded under its grammar (`Engine.generate`). Ignored where a call may be written.
   */
  responseSchema?: Record<string, unknown>;
}

/**
 * Resolves tool_choice and the shield's sets into a decode plan, or the reason nothing may be
 * generated (a call is required but no tool is allowed).
 */
export function planGeneration(
  options: GenerateOptions,
  tools: readonly ToolDefinition[],
  syntax: CallSyntax,
): DecodePlan | string {
  const mode = options.shield?.mode ?? "none";
  const maxTokens = options.maxTokens ?? defaultMaxTokens;
  const sets = mode === "token" ? (options.shield?.sets ?? {}) : {};
  const declaredNames = tools.map((tool) => tool.name);
  const choice = options.toolChoice ?? defaultToolChoice(tools);
  const unknown = unknownChoiceTool(declaredNames, choice);
  if (unknown !== undefined)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `${formatJsonPath(["tool_choice", ...unknown.path])} names an unknown tool ${unknown.name}`,
    );
  const minCalls = options.minToolCalls ?? 0;
  if (!Number.isInteger(minCalls) || minCalls < 0)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `minToolCalls must be a whole number (0 or more), not ${minCalls}`,
    );
  if (minCalls > 0 && choice === "none")
    throw new MentorError("MNT_ERR_BAD_INPUT", `minToolCalls ${minCalls} contradicts tool_choice none`);
  const turn = turnSets({
    tools: declaredNames,
    toolChoice: choice,
    sets,
    callRequired: minCalls > 0,
    ...(options.parallelToolCalls !== undefined ? { parallelToolCalls: options.parallelToolCalls } : {}),
  });
  const parallel = syntax.betweenCalls !== undefined && turn.maxCalls > 1;
  if (minCalls > 1 && !parallel)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `minToolCalls ${minCalls} needs parallel calls, but ${syntax.betweenCalls === undefined ? "this model's chat format writes one call per turn" : "parallelToolCalls is false"}`,
    );
  if (turn.refusal !== undefined) return turn.refusal;
  const names = turn.allowed;
  const endAllowed = turn.endAllowed;
  const argumentSets = new Map<string, Map<string, ArgumentSets>>();
  for (const { tool, argument, ...entry } of sets.arguments ?? []) {
    const perTool = argumentSets.get(tool) ?? new Map<string, ArgumentSets>();
    perTool.set(argument, entry);
    argumentSets.set(tool, perTool);
  }
  const progressingNames = (sets.progressingTools ?? []).filter((name) => names.includes(name));
  const { redirects, endRedirect, redirectArguments } = steeringOf(sets, turn);
  return {
    syntax,
    tools: [...tools],
    names,
    progressingNames,
    redirects,
    redirectArguments,
    argumentSets,
    // Where the end of the turn has no advised call to become, a turn that may not end starts in a call.
    startInCall: names.length > 0 && (turn.callRequired || (!endAllowed && endRedirect === undefined)),
    ...(endRedirect !== undefined ? { endRedirect, freeTextBudget: Math.floor(maxTokens / 2) } : {}),
    maxTokens,
    callsAllowed: names.length > 0,
    endAllowed,
    endProgressing: endAllowed && (sets.doneProgressing ?? false) && progressingNames.length === 0,
    maxCalls: parallel ? turn.maxCalls : 1,
    minCalls,
    eta: options.shield?.eta ?? defaultEta,
    strength: options.shield?.strength ?? defaultStrength,
    boost: mode === "token",
    maxStringTokens: options.maxStringTokens ?? 24,
  };
}
