import { MentorError } from "../errors/index.js";
import type { ChatMessage, ChatTool, ToolChoice, ToolDefinition } from "../openai/index.js";
import { defaultEta, defaultStrength, type ShieldSets } from "../shield/token/index.js";
import type { ArgumentSets, CallSyntax, DecodePlan } from "./decoder.js";

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

/** Tokens per generation when the request sets no max_tokens. */
export const defaultMaxTokens = 256;

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
  const choice = options.toolChoice ?? (tools.length > 0 ? "auto" : "none");
  let names = tools.map((tool) => tool.name);
  if (typeof choice === "object") {
    if (!names.includes(choice.function.name))
      throw new MentorError("MNT_ERR_BAD_INPUT", `tool_choice names an unknown tool ${choice.function.name}`);
    names = [choice.function.name];
  }
  if (choice === "none") names = [];
  if (sets.allowedTools !== undefined) names = names.filter((name) => sets.allowedTools?.includes(name));
  const unsafe = new Set(sets.unsafeTools ?? []);
  names = names.filter((name) => !unsafe.has(name));
  const doneAllowed = sets.doneAllowed ?? true;
  const parallel = syntax.betweenCalls !== undefined && (options.parallelToolCalls ?? true);
  const minCalls = options.minToolCalls ?? 0;
  if (!Number.isInteger(minCalls) || minCalls < 0)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `minToolCalls must be a whole number (0 or more), not ${minCalls}`,
    );
  if (minCalls > 1 && !parallel)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `minToolCalls ${minCalls} needs parallel calls, but ${syntax.betweenCalls === undefined ? "this model's chat format writes one call per turn" : "parallelToolCalls is false"}`,
    );
  if (minCalls > 0 && choice === "none")
    throw new MentorError("MNT_ERR_BAD_INPUT", `minToolCalls ${minCalls} contradicts tool_choice none`);
  const callRequired = choice === "required" || typeof choice === "object" || minCalls > 0;
  if (names.length === 0) {
    if (callRequired) return "a tool call is required, but the shield allows no tool";
    if (!doneAllowed && tools.length > 0)
      return "ending the turn is not allowed (open duties) and the shield allows no tool: nothing is allowed";
  }
  const argumentSets = new Map<string, Map<string, ArgumentSets>>();
  for (const entry of sets.arguments ?? []) {
    const perTool = argumentSets.get(entry.tool) ?? new Map<string, ArgumentSets>();
    perTool.set(entry.argument, {
      ...(entry.allowed !== undefined ? { allowed: entry.allowed } : {}),
      ...(entry.unsafe !== undefined ? { unsafe: entry.unsafe } : {}),
      ...(entry.progressing !== undefined ? { progressing: entry.progressing } : {}),
    });
    argumentSets.set(entry.tool, perTool);
  }
  const progressingNames = (sets.progressingTools ?? []).filter((name) => names.includes(name));
  // Only tools this turn could have named redirect, and only to tools it may name.
  const declared = new Set(
    typeof choice === "object"
      ? [choice.function.name]
      : choice === "none"
        ? []
        : tools.map((tool) => tool.name),
  );
  const kept = (sets.redirects ?? []).filter(
    ({ tool, to }) => declared.has(tool) && !names.includes(tool) && names.includes(to),
  );
  const redirects = new Map(kept.map(({ tool, to }) => [tool, to]));
  // The end of a turn that may not end is steered to the advised call, where the turn may name it.
  const endRedirect =
    !doneAllowed && sets.doneRedirect !== undefined && names.includes(sets.doneRedirect.to)
      ? sets.doneRedirect
      : undefined;
  // A redirected call is steered to the advised call's string values (of every redirect to its tool).
  const redirectArguments = new Map<string, Map<string, ArgumentSets>>();
  for (const { to, arguments: advised } of [...kept, ...(endRedirect ? [endRedirect] : [])]) {
    for (const [argument, value] of Object.entries(advised ?? {})) {
      if (typeof value !== "string") continue;
      const perTool = redirectArguments.get(to) ?? new Map<string, ArgumentSets>();
      const allowed = perTool.get(argument)?.allowed ?? [];
      if (!allowed.includes(value)) perTool.set(argument, { allowed: [...allowed, value] });
      redirectArguments.set(to, perTool);
    }
  }
  return {
    syntax,
    tools: [...tools],
    names,
    progressingNames,
    redirects,
    redirectArguments,
    argumentSets,
    // Where the end of the turn has no advised call to become, a turn that may not end starts in a call.
    startInCall: names.length > 0 && (callRequired || (!doneAllowed && endRedirect === undefined)),
    ...(endRedirect ? { endRedirect: endRedirect.to, freeTextBudget: Math.floor(maxTokens / 2) } : {}),
    maxTokens,
    callsAllowed: names.length > 0,
    endAllowed: doneAllowed || names.length === 0,
    endProgressing: doneAllowed && (sets.doneProgressing ?? false) && progressingNames.length === 0,
    maxCalls: parallel ? Number.POSITIVE_INFINITY : 1,
    minCalls,
    eta: options.shield?.eta ?? defaultEta,
    strength: options.shield?.strength ?? defaultStrength,
    boost: mode === "token",
    maxStringTokens: options.maxStringTokens ?? 24,
  };
}
