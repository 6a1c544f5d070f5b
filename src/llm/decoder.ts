import { MentorError } from "../errors/index.js";
import {
  computeTokenMask,
  fallbackToken,
  isTokenAllowed,
  type ShieldSlot,
  type TokenMask,
  type VocabularyIndex,
} from "../shield/token/index.js";

/** Whitespace tokens the model may write after a call before it opens the next or ends the turn. */
const maxWhitespaceTokensBetweenCalls = 4;

/** The call syntax of a chat format, as text (special tokens spelled out). */
export interface CallSyntax {
  /** Opens a call, up to the tool name: `<tool_call>\n{"name": "`, `<function=`, `||call: `. */
  prefix: string;
  /** Between the name and the arguments: `", "arguments": `, `>`, `(`. */
  paramsPrefix: string;
  /** Closes a call: `}\n</tool_call>`, `</function><|eom_id|>`, `)`. */
  suffix: string;
  /**
   * Between a call's suffix and the next call's prefix in one turn (`\n` for Qwen 3), where the
   * format allows several calls per turn; undefined where it writes one call per turn.
   */
  betweenCalls?: string;
}

/** A JSON Schema of one tool's parameters, the parts the decoder reads. */
export interface ParameterSchema {
  type?: string | string[];
  properties?: Record<string, ParameterSchema>;
  enum?: unknown[];
  [key: string]: unknown;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: ParameterSchema;
}

/** Per-argument sets for one value slot. */
export interface ArgumentSets {
  allowed?: readonly string[];
  unsafe?: readonly string[];
  progressing?: readonly string[];
}

/** What the decoder must produce and what the shield allows, resolved for one generation. */
export interface DecodePlan {
  syntax: CallSyntax;
  tools: ToolDefinition[];
  /** Names the tool-name slot may take (already intersected with the shield and tool_choice). */
  names: string[];
  progressingNames: string[];
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

/** Tokenization of text the decoder forces (fixed structure). */
export type Tokenize = (text: string, special: boolean) => number[];

export interface DecodedCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** What to do with a sampled token: keep it, or replace it with these tokens; and whether to stop. */
export interface DecodeAction {
  replace?: number[];
  stop?: boolean;
}

type Segment =
  | { kind: "fixed"; text: string }
  | { kind: "string"; key: string; sets: ArgumentSets; enumValues?: string[] }
  | { kind: "number"; key: string }
  | { kind: "boolean"; key: string };

type Phase =
  | { kind: "free" }
  | { kind: "name"; text: string }
  | { kind: "value"; segmentIndex: number; text: string; tokens: number[] }
  /** After a call, with more allowed: whitespace so far, and how many tokens of it. */
  | { kind: "between"; text: string; tokens: number }
  | { kind: "finished" };

export interface DecodeStats {
  sampled: number;
  forced: number;
  vetoed: number;
  maskSteps: number;
  maskMs: number;
}

/**
 * The per-generation state that walks the call syntax: free text until the call prefix, the
 * tool-name slot, then the arguments as a fixed JSON skeleton (keys, commas, braces: forced)
 * with value slots in between. Two verbs, as in llguidance: `mask()` before each sampled token,
 * `accept(token)` after it (which may replace the token: the veto and the jump forward).
 */
export class CallDecoder {
  private phase: Phase;
  private freeTokens: number[] = [];
  private freeText = "";
  private tool: ToolDefinition | undefined;
  private segments: Segment[] = [];
  private values: Record<string, unknown> = {};
  private currentMask: TokenMask | undefined;
  private penalty: TokenMask | undefined;
  /** The tokens of the call being written (prefix, sampled and forced). */
  private callTokens: number[] = [];
  readonly calls: DecodedCall[] = [];
  /** The tokens of each completed call, prefix to suffix (for its raw text). */
  readonly callTokenLists: number[][] = [];
  readonly stats: DecodeStats = { sampled: 0, forced: 0, vetoed: 0, maskSteps: 0, maskMs: 0 };

  constructor(
    private readonly plan: DecodePlan,
    private readonly index: VocabularyIndex,
    private readonly tokenize: Tokenize,
    private readonly isEndToken: (token: number) => boolean,
    /** Special (control) tokens: never part of a name or value. Default: none. */
    private readonly isSpecialToken: (token: number) => boolean = () => false,
  ) {
    for (const name of plan.names)
      if (name === "" || name.includes(plan.syntax.paramsPrefix[0] ?? "\u0000"))
        throw new MentorError(
          "MNT_ERR_ENGINE_TOOL_NAME",
          `the tool name ${JSON.stringify(name)} cannot be written in this model's call syntax`,
        );
    this.phase = plan.startInCall ? { kind: "name", text: "" } : { kind: "free" };
  }

  /** Tokens to append to the prompt (the call prefix when the turn must start with a call). */
  initialTokens(): number[] {
    if (!this.plan.startInCall) return [];
    this.callTokens = this.tokenize(this.plan.syntax.prefix, true);
    return [...this.callTokens];
  }

  get finished(): boolean {
    return this.phase.kind === "finished";
  }

  /** Whether the decoder is inside a call (a cut here is an error, not a length stop). */
  get inCall(): boolean {
    return this.phase.kind === "name" || this.phase.kind === "value";
  }

  /** The free text's tokens (for detokenizing the assistant text). */
  get textTokens(): readonly number[] {
    return this.freeTokens;
  }

  /** The mask for the next sampled token, or undefined for no bias. */
  mask(): TokenMask | undefined {
    const started = performance.now();
    const mask = this.computeMask();
    if (mask !== undefined) {
      this.stats.maskSteps++;
      this.stats.maskMs += performance.now() - started;
    }
    this.currentMask = mask;
    return mask;
  }

  private computeMask(): TokenMask | undefined {
    const phase = this.phase;
    const options = { strength: this.plan.strength, eta: this.plan.boost ? this.plan.eta : 0 };
    if (phase.kind === "name") {
      const slot: ShieldSlot = {
        kind: "allow",
        values: this.plan.names,
        progressing: this.plan.progressingNames,
        terminator: this.plan.syntax.paramsPrefix,
      };
      return computeTokenMask(this.index, slot, phase.text, options);
    }
    if (phase.kind === "free")
      return this.plan.boost && this.plan.endProgressing ? this.callPenalty() : undefined;
    if (phase.kind !== "value") return undefined;
    const segment = this.segments[phase.segmentIndex];
    if (segment?.kind === "number") {
      const bias = new Map<number, number>();
      for (const token of this.index.digitTokens) bias.set(token, this.plan.strength);
      return { bias, banned: new Set(), allowed: new Set(bias.keys()) };
    }
    if (segment?.kind === "boolean")
      return computeTokenMask(
        this.index,
        { kind: "allow", values: ["true", "false"], terminator: "" },
        phase.text,
        options,
      );
    if (segment?.kind === "string") {
      const unsafe = segment.sets.unsafe ?? [];
      const allowed = (segment.sets.allowed ?? segment.enumValues)?.filter(
        (value) => !unsafe.includes(value),
      );
      const slot: ShieldSlot =
        allowed !== undefined
          ? { kind: "allow", values: allowed, progressing: segment.sets.progressing ?? [], terminator: '"' }
          : {
              kind: "deny",
              unsafe,
              progressing: segment.sets.progressing ?? [],
              terminator: '"',
            };
      return computeTokenMask(this.index, slot, phase.text, options);
    }
    return undefined;
  }

  /** Takes the sampled token; returns the tokens to evaluate instead (veto, jump) and whether to stop. */
  accept(token: number): DecodeAction {
    this.stats.sampled++;
    const phase = this.phase;
    if (phase.kind === "free") return this.acceptFree(token);
    if (phase.kind === "between") return this.acceptBetween(phase, token);
    if (phase.kind === "finished") return { stop: true };
    let chosen = token;
    const mask = this.currentMask;
    // End-of-generation and special tokens cannot be biased away: inside a call the veto replaces them.
    const special = this.isEndToken(token) || this.isSpecialToken(token);
    if (mask !== undefined && (special || !isTokenAllowed(mask, token))) {
      this.stats.vetoed++;
      const replacement =
        mask.allowed !== undefined ? fallbackToken(this.index, mask) : this.safeStringToken(mask);
      if (replacement === undefined)
        throw new MentorError(
          "MNT_ERR_ENGINE_NO_CONTINUATION",
          mask.empty ?? "no token may continue the call",
        );
      chosen = replacement;
    }
    const completed = this.calls.length;
    const action = phase.kind === "name" ? this.acceptName(phase, chosen) : this.acceptValue(phase, chosen);
    if (chosen !== token && action.replace === undefined) action.replace = [chosen];
    // A completed call's tokens were recorded when it closed.
    if (this.calls.length === completed) this.callTokens.push(...(action.replace ?? [token]));
    return action;
  }

  private acceptFree(token: number): DecodeAction {
    if (this.isEndToken(token)) {
      if (this.plan.endAllowed || this.plan.names.length === 0) {
        this.phase = { kind: "finished" };
        return { stop: true };
      }
      // Ending the turn is not allowed (done is unsafe): the end token is vetoed by a call.
      this.stats.vetoed++;
      return this.openCall();
    }
    // A token whose text ends with the start of the call prefix opens a call: jump over the rest
    // of the prefix. Text before the prefix in that token is dropped.
    if (this.plan.callsAllowed && this.plan.names.length > 0 && this.callOpeners().has(token))
      return this.openCall();
    this.freeTokens.push(token);
    this.freeText += this.index.text(token);
    return {};
  }

  private callOpeners(): ReadonlySet<number> {
    return this.index.tokensEndingWithStartOf(this.plan.syntax.prefix.trimStart());
  }

  /** The same every free step of a generation: built once. */
  private callPenalty(): TokenMask {
    if (this.penalty === undefined) {
      const bias = new Map<number, number>();
      for (const token of this.callOpeners()) bias.set(token, -this.plan.eta);
      this.penalty = { bias, banned: new Set(), allowed: undefined };
    }
    return this.penalty;
  }

  /** Replaces the sampled token with the call prefix. */
  private openCall(): DecodeAction {
    const forced = this.tokenize(this.plan.syntax.prefix, true);
    this.stats.forced += forced.length;
    this.phase = { kind: "name", text: "" };
    this.callTokens = [...forced];
    return { replace: forced };
  }

  private acceptName(phase: { kind: "name"; text: string }, token: number): DecodeAction {
    const text = phase.text + this.index.text(token);
    const terminator = this.plan.syntax.paramsPrefix;
    const name = this.plan.names.find((candidate) => {
      if (!text.startsWith(candidate) || text.length <= candidate.length) return false;
      const rest = text.slice(candidate.length);
      return terminator.startsWith(rest.slice(0, terminator.length));
    });
    if (name === undefined) {
      phase.text = text;
      if (phase.text.length > 512)
        throw new MentorError("MNT_ERR_ENGINE_CALL_INCOMPLETE", "the tool name does not end");
      return {};
    }
    const tool = this.plan.tools.find((candidate) => candidate.name === name) as ToolDefinition;
    this.tool = tool;
    this.values = constantArguments(tool);
    this.segments = skeleton(tool, this.plan.argumentSets.get(name) ?? new Map());
    const emitted = text.slice(name.length);
    const remainder = terminator.startsWith(emitted) ? terminator.slice(emitted.length) : "";
    return this.advance([token], remainder, 0);
  }

  /**
   * After a completed slot: `keep` (the slot's last tokens, usually the one sampled) then
   * `pending` plus the fixed text up to the next value slot are evaluated, and that slot is entered
   * (or the call is finished).
   */
  private advance(keep: number[], pending: string, fromSegment: number): DecodeAction {
    let forcedText = pending;
    let index = fromSegment;
    while (index < this.segments.length && this.segments[index]?.kind === "fixed") {
      forcedText += (this.segments[index] as { text: string }).text;
      index++;
    }
    if (index >= this.segments.length) {
      this.calls.push({ name: (this.tool as ToolDefinition).name, arguments: this.values });
      const closing = [...this.tokenize(forcedText, false), ...this.tokenize(this.plan.syntax.suffix, true)];
      return this.closeCall(keep, closing);
    }
    const segment = this.segments[index];
    if (segment?.kind === "string") forcedText += '"';
    this.phase = { kind: "value", segmentIndex: index, text: "", tokens: [] };
    if (forcedText === "") return {};
    const forced = this.tokenize(forcedText, false);
    this.stats.forced += forced.length;
    return { replace: [...keep, ...forced] };
  }

  /**
   * The call just completed (`keep` then `closing` end it). With the turn's last call, the
   * closing is recorded, not evaluated (generation stops); otherwise it is evaluated and the next
   * call is forced (fewer than `minCalls`) or left to the model.
   */
  private closeCall(keep: number[], closing: number[]): DecodeAction {
    const tokens = [...keep, ...closing];
    this.callTokenLists.push([...this.callTokens, ...tokens]);
    if (this.calls.length >= this.plan.maxCalls) {
      this.phase = { kind: "finished" };
      return { stop: true, replace: tokens };
    }
    this.stats.forced += closing.length;
    if (this.calls.length < this.plan.minCalls)
      return { replace: [...tokens, ...this.openNextCall(this.plan.syntax.betweenCalls ?? "")] };
    this.phase = { kind: "between", text: "", tokens: 0 };
    return { replace: tokens };
  }

  /**
   * After a call: the model opens another (a token that starts the call prefix, after optional
   * whitespace: the rest of the prefix is forced) or ends the turn (an end token, or any other text).
   */
  private acceptBetween(
    phase: { kind: "between"; text: string; tokens: number },
    token: number,
  ): DecodeAction {
    const text = phase.text + this.index.text(token);
    const opening = text.trimStart();
    if (!this.isEndToken(token)) {
      if (opening === "" && phase.tokens < maxWhitespaceTokensBetweenCalls) {
        phase.text = text;
        phase.tokens++;
        return {};
      }
      if (opening !== "" && this.plan.syntax.prefix.trimStart().startsWith(opening)) {
        const whitespace = text.slice(phase.text.length, text.length - opening.length);
        return {
          replace: this.openNextCall(text === opening ? (this.plan.syntax.betweenCalls ?? "") : whitespace),
        };
      }
    }
    this.phase = { kind: "finished" };
    return { stop: true };
  }

  /** The tokens that open the next call of the turn: `separator`, then the call prefix. */
  private openNextCall(separator: string): number[] {
    const prefix = this.tokenize(this.plan.syntax.prefix, true);
    const forced = [...(separator === "" ? [] : this.tokenize(separator, true)), ...prefix];
    this.stats.forced += forced.length;
    this.phase = { kind: "name", text: "" };
    this.callTokens = prefix;
    return forced;
  }

  private acceptValue(
    phase: { kind: "value"; segmentIndex: number; text: string; tokens: number[] },
    token: number,
  ): DecodeAction {
    const segment = this.segments[phase.segmentIndex] as Exclude<Segment, { kind: "fixed" }>;
    const text = this.index.text(token);
    if (segment.kind === "number") {
      this.values[segment.key] = Number(text);
      return this.advance([token], "", phase.segmentIndex + 1);
    }
    if (segment.kind === "boolean") {
      phase.text += text;
      if (phase.text === "true" || phase.text === "false") {
        this.values[segment.key] = phase.text === "true";
        return this.advance([token], "", phase.segmentIndex + 1);
      }
      return {};
    }
    const quote = text.indexOf('"');
    const unsafe = segment.sets.unsafe ?? [];
    if (quote < 0) {
      phase.text += text;
      phase.tokens.push(token);
      if (phase.tokens.length < this.plan.maxStringTokens) return {};
      // Too long: close the string here, unless that spells an unsafe value.
      if (unsafe.includes(phase.text) || (segment.sets.allowed ?? segment.enumValues) !== undefined)
        return {};
      this.values[segment.key] = phase.text;
      return this.advance([token], '"', phase.segmentIndex + 1);
    }
    const value = phase.text + text.slice(0, quote);
    if (unsafe.includes(value)) {
      // The veto: never close on an unsafe value (the bias bans these tokens; this is the backstop).
      this.stats.vetoed++;
      phase.text = `${value} `;
      const replacement = this.tokenize(`${text.slice(0, quote)} `, false);
      return { replace: replacement };
    }
    this.values[segment.key] = value;
    const rest = text.slice(quote + 1);
    if (rest === "") return this.advance([token], "", phase.segmentIndex + 1);
    // The token carries text after the quote: keep its value part, force the structure.
    const before = text.slice(0, quote);
    return this.advance(before === "" ? [] : this.tokenize(before, false), '"', phase.segmentIndex + 1);
  }

  /** A token that continues a free string without closing it on an unsafe value: a space. */
  private safeStringToken(mask: TokenMask): number | undefined {
    const space = this.tokenize(" ", false);
    return space.length === 1 && isTokenAllowed(mask, space[0] as number) ? space[0] : undefined;
  }
}

/**
 * The arguments of a call as fixed text and value slots, in the order of the schema's
 * `properties`: `{"a": ` slot `, "b": ` slot `}`. Objects, arrays and untyped values are written
 * as `{}`, `[]`, `null` (the decoder generates strings, numbers, booleans and enums).
 */
export function skeleton(tool: ToolDefinition, sets: Map<string, ArgumentSets>): Segment[] {
  const properties = Object.entries(tool.parameters?.properties ?? {});
  const segments: Segment[] = [];
  let fixed = "{";
  properties.forEach(([key, schema], position) => {
    fixed += `${position === 0 ? "" : ", "}${JSON.stringify(key)}: `;
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    const enumValues = schema.enum?.filter((value): value is string => typeof value === "string");
    if (type === "string" || (enumValues !== undefined && enumValues.length > 0)) {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({
        kind: "string",
        key,
        sets: sets.get(key) ?? {},
        ...(enumValues && enumValues.length > 0 ? { enumValues } : {}),
      });
    } else if (type === "number" || type === "integer") {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({ kind: "number", key });
    } else if (type === "boolean") {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({ kind: "boolean", key });
    } else fixed += type === "object" ? "{}" : type === "array" ? "[]" : "null";
  });
  segments.push({ kind: "fixed", text: `${fixed}}` });
  return segments;
}

/** Arguments the decoder writes as constants (objects, arrays, untyped values). */
function constantArguments(tool: ToolDefinition): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(tool.parameters?.properties ?? {})) {
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    const hasEnum = (schema.enum ?? []).some((value) => typeof value === "string");
    if (["string", "number", "integer", "boolean"].includes(type ?? "") || hasEnum) continue;
    values[key] = type === "object" ? {} : type === "array" ? [] : null;
  }
  return values;
}
