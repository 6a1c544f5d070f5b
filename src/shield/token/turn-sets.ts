import type { ToolChoice } from "../../openai/index.js";
import type { ShieldSets } from "./sets.js";

// The one place that decides what a turn may do: the local decoder (plan.ts), the upstream
// shield (../upstream/request.ts) and the turn (agent/turn.ts) all read these sets.

export interface TurnSetsOptions {
  /** The names of the request's `tools`, in order. */
  tools: readonly string[];
  /** Default `auto` when there are tools, else `none`. */
  toolChoice?: ToolChoice;
  /** OpenAI's `parallel_tool_calls`: false allows one call per turn. Default true. */
  parallelToolCalls?: boolean;
  /** What the shield allows at this point of the run; absent: the request alone decides. */
  sets?: ShieldSets;
  /** The caller requires a call whatever `toolChoice` says (the engine's `minToolCalls`). Default false. */
  callRequired?: boolean;
}

/** What one turn may do: the request's `tool_choice` intersected with what the shield allows. */
export interface TurnSets {
  /**
   * The tools the request offers this turn, in `tools`' order: all of them under `auto` and
   * `required`, the named one, those `allowed_tools` lists; none under `none`.
   */
  offered: string[];
  /**
   * The offered tools the shield allows (not unsafe, within `allowedTools`, not a repeat steered
   * to an allowed call: `ShieldSets.repeated`): what may be called.
   */
  allowed: string[];
  /** The request requires a call (`required`, a named function, `allowed_tools` with mode `required`). */
  callRequired: boolean;
  /**
   * Whether the turn may end without a call: the shield allows it (`doneAllowed`), the request
   * asks for text (`none`), or nothing may be called.
   */
  endAllowed: boolean;
  /** Calls the turn may hold: 1 with `parallel_tool_calls: false`, else unbounded. */
  maxCalls: number;
  /** Why nothing may be generated (the turn is refused with `MNT_ERR_NOTHING_ALLOWED`). */
  refusal?: string;
}

/** The default `tool_choice` of a request with these tools. */
export function defaultToolChoice(tools: readonly unknown[]): ToolChoice {
  return tools.length > 0 ? "auto" : "none";
}

/**
 * The turn's sets: the tools offered by `toolChoice` (every form: `none`, `auto`, `required`, a
 * named function, `allowed_tools`), those of them the shield allows, whether a call is required,
 * whether the turn may end, how many calls it may hold, and the refusal where a call is required
 * (or the turn may not end) but the shield allows none of the offered tools.
 */
export function turnSets(options: TurnSetsOptions): TurnSets {
  const choice = options.toolChoice ?? defaultToolChoice(options.tools);
  const sets = options.sets ?? {};
  const offered = offeredNames(options.tools, choice);
  const unsafe = new Set(sets.unsafeTools ?? []);
  const permitted = (name: string) =>
    offered.includes(name) &&
    !unsafe.has(name) &&
    (sets.allowedTools === undefined || sets.allowedTools.includes(name));
  // A repeat is steered to the call that progresses instead, where the turn may make that call.
  const steered = new Set(sets.repeated && permitted(sets.repeated.to) ? sets.repeated.tools : []);
  const allowed = offered.filter((name) => permitted(name) && !steered.has(name));
  const callRequired = options.callRequired === true || requiresCall(choice);
  // A client that asks for text may end the turn, open duties or not.
  const doneAllowed = choice === "none" || (sets.doneAllowed ?? true);
  const turn: TurnSets = {
    offered,
    allowed,
    callRequired,
    endAllowed: doneAllowed || allowed.length === 0,
    maxCalls: options.parallelToolCalls === false ? 1 : Number.POSITIVE_INFINITY,
  };
  if (allowed.length > 0) return turn;
  if (typeof choice === "object" && choice.type === "function")
    return {
      ...turn,
      refusal: `tool_choice names ${choice.function.name}, which the policy does not allow now`,
    };
  if (callRequired)
    return {
      ...turn,
      refusal: `a tool call is required, but the policy allows none of the offered tools now (${offered.join(", ") || "none offered"})`,
    };
  if (!doneAllowed && offered.length > 0)
    return {
      ...turn,
      refusal:
        "the policy allows none of the offered tools now and the turn may not end yet (open duties): nothing is allowed",
    };
  return turn;
}

/**
 * Where `toolChoice` names a tool that is not among `tools`: the path inside `tool_choice` and
 * the name; undefined when every name it gives is declared.
 */
export function unknownChoiceTool(
  tools: readonly string[],
  choice: ToolChoice,
): { path: (string | number)[]; name: string } | undefined {
  if (typeof choice === "string") return undefined;
  if (choice.type === "function")
    return tools.includes(choice.function.name)
      ? undefined
      : { path: ["function", "name"], name: choice.function.name };
  const index = choice.allowed_tools.tools.findIndex((tool) => !tools.includes(tool.function.name));
  if (index < 0) return undefined;
  return {
    path: ["allowed_tools", "tools", index, "function", "name"],
    name: choice.allowed_tools.tools[index]?.function.name as string,
  };
}

/** The names `toolChoice` offers among `tools`. */
function offeredNames(tools: readonly string[], choice: ToolChoice): string[] {
  if (choice === "none") return [];
  if (typeof choice === "string") return [...tools];
  if (choice.type === "function") return tools.filter((name) => name === choice.function.name);
  const listed = new Set(choice.allowed_tools.tools.map((tool) => tool.function.name));
  return tools.filter((name) => listed.has(name));
}

function requiresCall(choice: ToolChoice): boolean {
  if (typeof choice === "string") return choice === "required";
  return choice.type === "function" || choice.allowed_tools.mode === "required";
}
