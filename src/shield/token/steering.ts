import type { ToolDefinition } from "../../openai/index.js";
import { type ArgumentSets, type CallSyntax, skeleton } from "./call-syntax.js";
import type { TokenMask } from "./mask.js";
import type { DecodePlan } from "./plan.js";
import type { ShieldSets } from "./sets.js";
import type { TurnSets } from "./turn-sets.js";
import { jsonTokensPerString, maxNumberLength } from "./value-slot.js";
import type { VocabularyIndex } from "./vocabulary-index.js";

// Steering to the advised call (intent-keeping, token mode): a masked name the model starts is
// replaced by the allowed tool the advice names, the end of a turn that may not end by the call
// the advice names toward the open duties, both with the advised values.

/** What the decoder steers this turn: `DecodePlan`'s `redirects`, `endRedirect` and `redirectArguments`. */
export interface Steering {
  redirects: Map<string, string>;
  endRedirect?: string;
  redirectArguments: Map<string, Map<string, ArgumentSets>>;
}

/**
 * The shield's redirects this turn may follow (from unsafe tools, and from repeated ones): only
 * from a tool the request offers that may not be called, only to one that may; the end's, only
 * where the turn may not end and may call the advised tool. A redirected call's string slots
 * allow only the advised values (of every redirect to its tool).
 */
export function steeringOf(sets: ShieldSets, turn: TurnSets): Steering {
  const offered = new Set(turn.offered);
  const allowed = new Set(turn.allowed);
  const { tools: repeats, ...instead } = sets.repeated ?? { tools: [], to: "" };
  const kept = [...(sets.redirects ?? []), ...repeats.map((tool) => ({ tool, ...instead }))].filter(
    ({ tool, to }) => offered.has(tool) && !allowed.has(tool) && allowed.has(to),
  );
  const end =
    !turn.endAllowed && sets.doneRedirect !== undefined && allowed.has(sets.doneRedirect.to)
      ? sets.doneRedirect
      : undefined;
  const redirectArguments = new Map<string, Map<string, ArgumentSets>>();
  for (const { to, arguments: advised } of [...kept, ...(end ? [end] : [])]) {
    for (const [argument, value] of Object.entries(advised ?? {})) {
      if (typeof value !== "string") continue;
      const perTool = redirectArguments.get(to) ?? new Map<string, ArgumentSets>();
      const values = perTool.get(argument)?.allowed ?? [];
      if (!values.includes(value)) perTool.set(argument, { allowed: [...values, value] });
      redirectArguments.set(to, perTool);
    }
  }
  return {
    redirects: new Map(kept.map(({ tool, to }) => [tool, to])),
    ...(end ? { endRedirect: end.to } : {}),
    redirectArguments,
  };
}

/**
 * Ending the turn is the progressing move (`DecodePlan.endProgressing`): the end token cannot be
 * biased, so the tokens that would open a call from free text get `-eta` instead.
 */
export function callPenalty(index: VocabularyIndex, syntax: CallSyntax, eta: number): TokenMask {
  const bias = new Map<number, number>();
  for (const token of index.tokensEndingWithStartOf(syntax.prefix.trimStart())) bias.set(token, -eta);
  return { bias, banned: new Set(), allowed: undefined };
}

/**
 * The tokens a call of the tool takes at most in the format's syntax, its values steered to the
 * advised ones: the structure as forced; an allow-list value one token per character (the model
 * may spell it in pieces); a value the model writes, the most its slot takes.
 */
export function advisedCallTokens(
  plan: DecodePlan,
  name: string,
  tokenize: (text: string, special: boolean) => number[],
): number {
  const tool = plan.tools.find((candidate) => candidate.name === name) as ToolDefinition;
  const sets = new Map([
    ...(plan.argumentSets.get(name) ?? []),
    ...(plan.redirectArguments?.get(name) ?? []),
  ]);
  const { prefix, paramsPrefix, suffix } = plan.syntax;
  let tokens = tokenize(prefix, true).length + tokenize(name, false).length;
  let fixed = paramsPrefix;
  for (const segment of skeleton(tool, sets)) {
    if (segment.kind === "fixed") {
      fixed += segment.text;
      continue;
    }
    if (fixed !== "") tokens += tokenize(fixed, false).length;
    fixed = "";
    const values = segment.kind === "string" ? (segment.sets.allowed ?? segment.enumValues) : undefined;
    if (values !== undefined) tokens += Math.max(0, ...values.map((value) => value.length)) + 2;
    else if (segment.kind === "string") tokens += plan.maxStringTokens + 2;
    else if (segment.kind === "number") tokens += maxNumberLength;
    else if (segment.kind === "boolean") tokens += "false".length;
    else tokens += plan.maxStringTokens * jsonTokensPerString;
  }
  return tokens + tokenize(fixed, false).length + tokenize(suffix, true).length;
}
