// Over 500 lines on purpose: `CallDecoder` is one state machine (free text, call prefix, name
// slot, argument slots, suffix) whose phases share the partial text, the open slot and the veto
// per sampled token. The properties the tests hold it to (it never emits what it masks; it is
// token-for-token transparent where it masks nothing) are properties of the whole machine; the
// helpers that need none of its state (skeleton, number checks, wrapper lines) are at the end.

import { MentorError } from "../errors/index.js";
import type { ToolDefinition } from "../openai/index.js";
import {
  computeTokenMask,
  fallbackToken,
  isTokenAllowed,
  type ShieldSlot,
  type TokenMask,
  type VocabularyIndex,
} from "../shield/token/index.js";
import { JsonPrefix } from "./json-prefix.js";

/** A JSON slot (array, object) may take this many times a free string's tokens before it is closed. */
const jsonTokensPerString = 4;

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

/** Tokenization of text the decoder forces (fixed structure). */
export type Tokenize = (text: string, special: boolean) => number[];

export interface DecodedCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** What to do with a sampled token: keep it, or replace it with these tokens; and whether to stop. */
export interface DecodeAction {
  replace?: number[];
  /**
   * Evaluated tokens to take back before `replace` is evaluated: the start of a name the shield
   * redirected to the advised tool.
   */
  rewind?: number;
  stop?: boolean;
}

type Segment =
  | { kind: "fixed"; text: string }
  | { kind: "string"; key: string; sets: ArgumentSets; enumValues?: string[] }
  | { kind: "number"; key: string; integer: boolean }
  | { kind: "boolean"; key: string; sets: ArgumentSets }
  /** An array or object: the model writes it as JSON, closed for it where it breaks off. */
  | { kind: "json"; key: string; opening: "[" | "{" };

/**
 * The text that follows a slot up to the next value slot (its opening quote included) or, after
 * the last, the call's suffix. A token may close the slot and write the start of it.
 */
interface Closing {
  text: string;
  /** Where the call syntax's suffix starts in `text` (it is tokenized with special tokens). */
  suffixAt: number;
  /** The segment of the next value slot, or -1: the call ends with this text. */
  next: number;
}

type Phase =
  | { kind: "free" }
  /** `tokens`: the slot's evaluated tokens; `lead`: text of the first of them before the name. */
  | { kind: "name"; text: string; tokens: number[]; lead: string }
  | {
      kind: "value";
      segmentIndex: number;
      text: string;
      tokens: number[];
      closing: Closing;
      /** The value so far, in a JSON slot. */
      json?: JsonPrefix;
    }
  /** After a call, with more allowed: whitespace so far, and how many tokens of it. */
  | { kind: "between"; text: string; tokens: number }
  | { kind: "finished" };

export interface DecodeStats {
  sampled: number;
  forced: number;
  vetoed: number;
  /** Calls whose unsafe name was replaced by the tool its advice names (intent-keeping). */
  redirected: number;
  maskSteps: number;
  maskMs: number;
}

/** After the name of a call written as text (not in the chat format's own syntax). */
const textCallParamsPrefix = '", "arguments": ';

/**
 * A call written as text, as instruction-tuned models write them under `tool_choice: auto`: a JSON
 * object with `"name"` first, at the start of a line or right after a ``` fence or a `<tools>`,
 * `<tool_call>` or `<function_call>` tag, possibly the first of a JSON array of calls. `rest` is
 * the part of the name already written.
 */
const textCallOpening =
  /(?:(?:^|\n)[ \t]*|```[\w-]*[ \t]*\n[ \t]*|<(?:tools|tool_call|function_call)>\s*)\[?\s*\{\s*"name"\s*:\s*"(?<rest>[^"\\\n]*)$/;

/** The next call of a JSON array of calls written as text, right after the one before it. */
const nextTextCallInArray = /^\s*,\s*\{\s*"name"\s*:\s*"(?<rest>[^"\\\n]*)$/;

/** The longest number a number slot takes (characters). */
const maxNumberLength = 16;

/**
 * The per-generation state that walks the call syntax: free text until a call opens (the chat
 * format's prefix, or a call written as text), the tool-name slot, then the arguments as a fixed
 * JSON skeleton (keys, commas, braces: forced) with value slots in between. Two verbs, as in
 * llguidance: `mask()` before each sampled token, `accept(token)` after it (which may replace the
 * token: the veto and the jump forward). A sampled token is kept whenever it is allowed, also when
 * it closes a slot and goes on into the structure that follows: only what the model did not write
 * is forced.
 */
export class CallDecoder {
  private phase: Phase;
  /** The syntax of the call being written: the chat format's, or that of a call written as text. */
  private syntax: CallSyntax;
  private freeTokens: number[] = [];
  private freeText = "";
  private tool: ToolDefinition | undefined;
  private segments: Segment[] = [];
  private values: Record<string, unknown> = {};
  private currentMask: TokenMask | undefined;
  private penalty: TokenMask | undefined;
  private textBudget: number | undefined;
  private nameClosings = new Map<string, Closing>();
  /** The tokens of the call being written (prefix, sampled and forced). */
  private callTokens: number[] = [];
  readonly calls: DecodedCall[] = [];
  /** The tokens of each completed call, prefix to suffix (for its raw text). */
  readonly callTokenLists: number[][] = [];
  /** Calls read from text (fenced JSON, `<tools>` blocks, bare objects) rather than the format's syntax. */
  textCalls = 0;
  /** Where the free text stood when the last call written as text ended (an array's next call may follow). */
  private textCallEnd: number | undefined;
  /** The format's call prefix and its head, up to the first space or brace (`<tool_call>`). */
  private readonly formatOpening: { prefix: string; head: string };
  readonly stats: DecodeStats = { sampled: 0, forced: 0, vetoed: 0, redirected: 0, maskSteps: 0, maskMs: 0 };

  constructor(
    private readonly plan: DecodePlan,
    private readonly index: VocabularyIndex,
    private readonly tokenize: Tokenize,
    private readonly isEndToken: (token: number) => boolean,
    /** Special (control) tokens: never part of a name or value. Default: none. */
    private readonly isSpecialToken: (token: number) => boolean = () => false,
  ) {
    for (const name of [...plan.names, ...plan.redirects.keys()])
      if (name === "" || name.includes(plan.syntax.paramsPrefix[0] ?? "\u0000") || name.includes('"'))
        throw new MentorError(
          "MNT_ERR_ENGINE_TOOL_NAME",
          `the tool name ${JSON.stringify(name)} cannot be written in this model's call syntax`,
        );
    this.syntax = plan.syntax;
    const prefix = plan.syntax.prefix.trimStart();
    this.formatOpening = { prefix, head: /^[^\s{]+/.exec(prefix)?.[0] ?? prefix };
    this.phase = plan.startInCall ? { kind: "name", text: "", tokens: [], lead: "" } : { kind: "free" };
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
        values: [...this.plan.names, ...this.plan.redirects.keys()],
        progressing: this.plan.progressingNames,
        terminator: this.syntax.paramsPrefix,
        terminatorOf: (name) => this.nameClosing(name).text,
      };
      return computeTokenMask(this.index, slot, phase.text, options);
    }
    if (phase.kind === "free")
      return this.plan.boost && this.plan.endProgressing ? this.callPenalty() : undefined;
    if (phase.kind !== "value") return undefined;
    const segment = this.segments[phase.segmentIndex];
    if (segment?.kind === "number") return this.numberMask(phase.text, segment.integer, phase.closing);
    if (segment?.kind === "boolean")
      return computeTokenMask(
        this.index,
        { kind: "allow", values: booleanValues(segment.sets), terminator: phase.closing.text },
        phase.text,
        options,
      );
    if (segment?.kind === "string") {
      const unsafe = segment.sets.unsafe ?? [];
      const allowed = (segment.sets.allowed ?? segment.enumValues)?.filter(
        (value) => !unsafe.includes(value),
      );
      const progressing = segment.sets.progressing ?? [];
      const slot: ShieldSlot =
        allowed !== undefined
          ? { kind: "allow", values: allowed, progressing, terminator: phase.closing.text }
          : { kind: "deny", unsafe, progressing, terminator: '"', continuation: phase.closing.text.slice(1) };
      return computeTokenMask(this.index, slot, phase.text, options);
    }
    return undefined;
  }

  /** Tokens that keep a number valid, or complete it and go on into the text that follows. */
  private numberMask(partial: string, integer: boolean, closing: Closing): TokenMask {
    const bias = new Map<number, number>();
    const consider = (token: number) => {
      if (numberTokenFits(partial, this.index.text(token), integer, closing.text))
        bias.set(token, this.plan.strength);
    };
    for (const token of this.index.numberTokens) consider(token);
    this.index.forEachPrefixOf(closing.text, consider);
    const mask: TokenMask = { bias, banned: new Set(), allowed: new Set(bias.keys()) };
    if (bias.size === 0) mask.empty = `no token continues the number ${JSON.stringify(partial)}`;
    return mask;
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
    const special = (id: number) => this.isEndToken(id) || this.isSpecialToken(id);
    if (mask !== undefined && (special(token) || !isTokenAllowed(mask, token))) {
      this.stats.vetoed++;
      // Special tokens are vetoed whatever their text: never one as the replacement either.
      const replacement =
        mask.allowed !== undefined
          ? fallbackToken(this.index, mask, (id) => !special(id))
          : this.safeStringToken(mask);
      if (replacement === undefined)
        throw new MentorError(
          "MNT_ERR_ENGINE_NO_CONTINUATION",
          mask.empty ?? "no token may continue the call",
        );
      chosen = replacement;
    }
    const completed = this.calls.length;
    const action =
      phase.kind === "name"
        ? this.acceptName(phase, chosen, this.index.text(chosen))
        : this.acceptValue(phase, chosen);
    if (chosen !== token && action.replace === undefined) action.replace = [chosen];
    // A completed call's tokens were recorded when it closed.
    if (this.calls.length === completed) this.callTokens.push(...(action.replace ?? [token]));
    return action;
  }

  private acceptFree(token: number): DecodeAction {
    const end = this.isEndToken(token);
    if (end && (this.plan.endAllowed || this.plan.names.length === 0)) {
      this.phase = { kind: "finished" };
      return { stop: true };
    }
    const budgetSpent = !this.plan.endAllowed && this.freeTokens.length >= this.freeTextBudget();
    if (end || budgetSpent) {
      // Ending the turn is not allowed (done is unsafe): the end token (or, past the free-text
      // budget, whatever token comes) is vetoed by a call.
      this.stats.vetoed++;
      return this.plan.endRedirect === undefined
        ? this.openCall()
        : this.openAdvisedCall(this.plan.endRedirect);
    }
    const text = this.index.text(token);
    this.freeTokens.push(token);
    this.freeText += text;
    if (!(this.plan.callsAllowed && this.plan.names.length > 0)) return {};
    return this.openFormatCall(token, text) ?? this.openTextCall(token, text) ?? {};
  }

  /**
   * A call in the format's own syntax opens when the model writes the head of its prefix, up to
   * its first space or brace (`<tool_call>`, `<function=`, `||call:`): the rest is forced. Waiting for the
   * whole head keeps what merely starts like it (`<tools>`) as the model's own text.
   */
  private openFormatCall(token: number, text: string): DecodeAction | undefined {
    const { prefix, head } = this.formatOpening;
    // The head ends in this token: look for it only where it can.
    const at = this.freeText.indexOf(head, Math.max(0, this.freeText.length - text.length - head.length + 1));
    if (at < 0) return undefined;
    // What the token holds after the head: the start of the prefix's rest, or that and a name's start.
    const after = this.freeText.slice(at + head.length);
    const rest = prefix.slice(head.length);
    const phase = this.enterCall(at, this.plan.syntax);
    if (rest.startsWith(after)) {
      const forced = rest.length > after.length ? this.tokenize(rest.slice(after.length), true) : [];
      this.stats.forced += forced.length;
      this.callTokens.push(...forced);
      return forced.length > 0 ? { replace: [token, ...forced] } : {};
    }
    const beforeAfter = text.slice(0, text.length - after.length);
    if (!after.startsWith(rest)) {
      const replace = [...this.tokenize(beforeAfter, true), ...this.tokenize(rest, true)];
      this.callTokens.splice(-1, 1, ...replace);
      return { replace };
    }
    return this.nameInOpeningToken(phase, token, after.slice(rest.length), text);
  }

  /**
   * A call written as text opens when the free text ends with `{"name": "` where such a call may
   * begin (`textCallOpening`): the model wrote the opening itself, so nothing is forced; its
   * tokens leave the content and the name slot starts, with the name's start if the token has one.
   */
  private openTextCall(token: number, text: string): DecodeAction | undefined {
    // The opening's last quote is in this token (the name's start after it has none).
    if (!text.includes('"')) return undefined;
    let match = textCallOpening.exec(this.freeText);
    let at = 0;
    if (match === null && this.textCallEnd !== undefined) {
      match = nextTextCallInArray.exec(this.freeText.slice(this.textCallEnd));
      at = this.textCallEnd;
    }
    const rest = match?.groups?.rest;
    if (match === null || rest === undefined || rest.length >= text.length) return undefined;
    const phase = this.enterCall(at + match.index, {
      prefix: match[0].slice(0, match[0].length - rest.length),
      paramsPrefix: textCallParamsPrefix,
      suffix: "}",
    });
    return rest === "" ? {} : this.nameInOpeningToken(phase, token, rest, text);
  }

  /**
   * The call's opening starts at `at` in the free text: the tokens from the one holding it leave
   * the content (text of that token before `at` stays) and begin the call's tokens.
   */
  private enterCall(at: number, syntax: CallSyntax): Phase & { kind: "name" } {
    let start = 0;
    let first = 0;
    while (
      first < this.freeTokens.length &&
      start + this.index.text(this.freeTokens[first] as number).length <= at
    )
      start += this.index.text(this.freeTokens[first++] as number).length;
    this.callTokens = this.freeTokens.splice(first);
    const before = this.freeText.slice(start, at);
    if (before !== "") this.freeTokens.push(...this.tokenize(before, false));
    this.freeText = this.freeText.slice(0, at);
    this.useSyntax(syntax);
    const phase: Phase & { kind: "name" } = { kind: "name", text: "", tokens: [], lead: "" };
    this.phase = phase;
    return phase;
  }

  /** The token that opened the call also starts the name (`name`: that part of its text). */
  private nameInOpeningToken(
    phase: Phase & { kind: "name" },
    token: number,
    name: string,
    text: string,
  ): DecodeAction {
    this.callTokens.pop();
    const action = this.acceptName(phase, token, name, text.slice(0, text.length - name.length));
    this.callTokens.push(...(action.replace ?? [token]));
    return action;
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

  /**
   * The free-text tokens of a turn that may not end (`DecodePlan.freeTextBudget`), cut so that
   * the advised call fits in what max_tokens leaves after them.
   */
  private freeTextBudget(): number {
    if (this.textBudget === undefined) {
      const { freeTextBudget = Number.POSITIVE_INFINITY, endRedirect, maxTokens } = this.plan;
      const room =
        endRedirect !== undefined && maxTokens !== undefined
          ? maxTokens - this.callTokensAtMost(endRedirect)
          : Number.POSITIVE_INFINITY;
      this.textBudget = Math.max(0, Math.min(freeTextBudget, room));
    }
    return this.textBudget;
  }

  /**
   * The tokens a call of the tool takes at most in the format's syntax, its values steered to the
   * advised ones: the structure as forced; an allow-list value one token per character (the model
   * may spell it in pieces); a value the model writes, the most its slot takes.
   */
  private callTokensAtMost(name: string): number {
    const tool = this.plan.tools.find((candidate) => candidate.name === name) as ToolDefinition;
    const sets = new Map([
      ...(this.plan.argumentSets.get(name) ?? []),
      ...(this.plan.redirectArguments?.get(name) ?? []),
    ]);
    const { prefix, paramsPrefix, suffix } = this.plan.syntax;
    let tokens = this.tokenize(prefix, true).length + this.tokenize(name, false).length;
    let fixed = paramsPrefix;
    for (const segment of skeleton(tool, sets)) {
      if (segment.kind === "fixed") {
        fixed += segment.text;
        continue;
      }
      if (fixed !== "") tokens += this.tokenize(fixed, false).length;
      fixed = "";
      const values = segment.kind === "string" ? (segment.sets.allowed ?? segment.enumValues) : undefined;
      if (values !== undefined) tokens += Math.max(0, ...values.map((value) => value.length)) + 2;
      else if (segment.kind === "string") tokens += this.plan.maxStringTokens + 2;
      else if (segment.kind === "number") tokens += maxNumberLength;
      else if (segment.kind === "boolean") tokens += "false".length;
      else tokens += this.plan.maxStringTokens * jsonTokensPerString;
    }
    return tokens + this.tokenize(fixed, false).length + this.tokenize(suffix, true).length;
  }

  /** Replaces the sampled token with the call prefix. */
  private openCall(): DecodeAction {
    const forced = this.tokenize(this.plan.syntax.prefix, true);
    this.stats.forced += forced.length;
    this.useSyntax(this.plan.syntax);
    this.phase = { kind: "name", text: "", tokens: [], lead: "" };
    this.callTokens = [...forced];
    return { replace: forced };
  }

  /** Replaces the sampled end token with the call prefix, redirected to the advised tool at once. */
  private openAdvisedCall(to: string): DecodeAction {
    const prefix = this.openCall().replace as number[];
    const completed = this.calls.length;
    // The name slot is fresh: nothing to take back, so no new evaluation (`rewind` dropped).
    const { rewind: _, ...action } = this.redirect(this.phase as Phase & { kind: "name" }, to, "");
    const written = action.replace as number[];
    if (this.calls.length === completed) this.callTokens.push(...written);
    return { ...action, replace: [...prefix, ...written] };
  }

  /** The syntax of the call being opened; what follows a name depends on it. */
  private useSyntax(syntax: CallSyntax): void {
    if (syntax !== this.syntax) this.nameClosings.clear();
    this.syntax = syntax;
  }

  /** What follows a tool's name in the current syntax, up to its first value slot. */
  private nameClosing(name: string): Closing {
    let closing = this.nameClosings.get(name);
    if (closing === undefined) {
      const tool = this.plan.tools.find((candidate) => candidate.name === name);
      const segments = tool ? skeleton(tool, this.plan.argumentSets.get(name) ?? new Map()) : [];
      closing = this.closingFrom(segments, 0, this.syntax.paramsPrefix);
      this.nameClosings.set(name, closing);
    }
    return closing;
  }

  private closingFrom(segments: readonly Segment[], from: number, lead: string): Closing {
    let text = lead;
    let index = from;
    while (index < segments.length && segments[index]?.kind === "fixed") {
      text += (segments[index] as { text: string }).text;
      index++;
    }
    if (index >= segments.length) return { text: text + this.syntax.suffix, suffixAt: text.length, next: -1 };
    if (segments[index]?.kind === "string") text += '"';
    return { text, suffixAt: text.length, next: index };
  }

  /**
   * `added`: the part of the token's text inside the name slot (all of it, but for the token that
   * opens a call written as text); `lead`: the part before it.
   */
  private acceptName(phase: Phase & { kind: "name" }, token: number, added: string, lead = ""): DecodeAction {
    const text = phase.text + added;
    const completes = (name: string) =>
      text.length > name.length &&
      text.startsWith(name) &&
      this.nameClosing(name).text.startsWith(text.slice(name.length));
    const fits = (name: string) => name.startsWith(text) || completes(name);
    const redirects = [...this.plan.redirects].filter(([from]) => fits(from));
    if (!this.plan.names.some(fits)) {
      const targets = new Set(redirects.map(([, to]) => to));
      const completed = redirects.find(([from]) => completes(from));
      if (targets.size === 1 || completed !== undefined)
        return this.redirect(
          phase,
          completed?.[1] ?? ([...targets][0] as string),
          phase.tokens.length > 0 ? phase.lead : lead,
        );
      // Only the token opening a call written as text can get here with nothing that fits (the
      // mask holds every other): keep its opening, drop the name's start.
      if (redirects.length === 0) return { replace: this.tokenize(lead, false) };
    }
    const name = this.plan.names.find(completes);
    if (name === undefined) {
      phase.text = text;
      if (phase.tokens.length === 0) phase.lead = lead;
      phase.tokens.push(token);
      if (phase.text.length > 512)
        throw new MentorError("MNT_ERR_ENGINE_CALL_INCOMPLETE", "the tool name does not end");
      return {};
    }
    return this.startArguments(name, [token], text.length - name.length);
  }

  /**
   * The name so far can only become an unsafe tool: take its tokens back and write the tool the
   * advice names instead (its arguments steered to the advised values, the others shielded as usual). `lead`: text before the
   * name in the first token taken back (the end of a text call's opening), written again.
   */
  private redirect(phase: Phase & { kind: "name" }, to: string, lead: string): DecodeAction {
    this.stats.redirected++;
    const rewind = phase.tokens.length;
    this.callTokens.splice(this.callTokens.length - rewind, rewind);
    const written = [...(lead === "" ? [] : this.tokenize(lead, false)), ...this.tokenize(to, false)];
    this.stats.forced += written.length;
    const action = this.startArguments(to, written, 0, this.plan.redirectArguments?.get(to));
    return { ...action, replace: action.replace ?? written, rewind };
  }

  /** `steered`: argument sets that replace the plan's (a redirected call's advised values). */
  private startArguments(
    name: string,
    keep: number[],
    emitted: number,
    steered?: Map<string, ArgumentSets>,
  ): DecodeAction {
    const tool = this.plan.tools.find((candidate) => candidate.name === name) as ToolDefinition;
    const closing = this.nameClosing(name);
    this.tool = tool;
    this.values = constantArguments(tool);
    const sets = this.plan.argumentSets.get(name) ?? new Map<string, ArgumentSets>();
    this.segments = skeleton(tool, steered ? new Map([...sets, ...steered]) : sets);
    return this.finishSlot(keep, emitted, closing);
  }

  /**
   * A slot is complete: `keep` (its last tokens, usually the one sampled) wrote the first
   * `emitted` characters of its closing; the rest is forced, and the next slot is entered (or the
   * call is finished).
   */
  private finishSlot(keep: number[], emitted: number, closing: Closing): DecodeAction {
    const forced: number[] = [];
    if (emitted < closing.suffixAt)
      forced.push(...this.tokenize(closing.text.slice(emitted, closing.suffixAt), false));
    const suffixFrom = Math.max(emitted, closing.suffixAt);
    if (suffixFrom < closing.text.length) forced.push(...this.tokenize(closing.text.slice(suffixFrom), true));
    if (closing.next < 0) {
      this.calls.push({ name: (this.tool as ToolDefinition).name, arguments: this.values });
      if (this.syntax !== this.plan.syntax) {
        this.textCalls++;
        this.textCallEnd = this.freeText.length;
      }
      return this.closeCall(keep, forced);
    }
    const segment = this.segments[closing.next] as Exclude<Segment, { kind: "fixed" }>;
    const after = this.closingFrom(this.segments, closing.next + 1, segment.kind === "string" ? '"' : "");
    this.phase = {
      kind: "value",
      segmentIndex: closing.next,
      text: "",
      tokens: [],
      closing: after,
      ...(segment.kind === "json" ? { json: new JsonPrefix(segment.opening) } : {}),
    };
    this.stats.forced += forced.length;
    return { replace: [...keep, ...forced] };
  }

  /**
   * The call just completed (`keep` then `closing` end it). With the turn's last call, the
   * closing is recorded, not evaluated (generation stops); otherwise it is evaluated and the next
   * call is forced (fewer than `minCalls`) or left to the model: in the format's syntax after a
   * format call, in free text after a call written as text.
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
    this.phase =
      this.syntax === this.plan.syntax ? { kind: "between", text: "", tokens: 0 } : { kind: "free" };
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
    this.useSyntax(this.plan.syntax);
    this.phase = { kind: "name", text: "", tokens: [], lead: "" };
    this.callTokens = prefix;
    return forced;
  }

  private acceptValue(phase: Phase & { kind: "value" }, token: number): DecodeAction {
    const segment = this.segments[phase.segmentIndex] as Exclude<Segment, { kind: "fixed" }>;
    const text = this.index.text(token);
    const closing = phase.closing;
    if (segment.kind === "number") {
      const digits = numberPart(text);
      const rest = text.slice(digits.length);
      const value = phase.text + digits;
      if (rest === "") {
        phase.text = value;
        if (value.length < maxNumberLength || !completeNumber(value, segment.integer)) return {};
      }
      this.values[segment.key] = Number(value);
      if (rest !== "" && !closing.text.startsWith(rest))
        return this.finishSlot(digits === "" ? [] : this.tokenize(digits, false), 0, closing);
      return this.finishSlot([token], rest.length, closing);
    }
    if (segment.kind === "json") return this.acceptJson(phase, segment, token);
    if (segment.kind === "boolean") {
      // Complete once a token goes on past the value, as the model's own closing token does.
      const written = phase.text + text;
      const value = booleanValues(segment.sets).find(
        (candidate) =>
          written.length > candidate.length &&
          written.startsWith(candidate) &&
          closing.text.startsWith(written.slice(candidate.length)),
      );
      if (value === undefined) {
        phase.text = written;
        return {};
      }
      this.values[segment.key] = value === "true";
      return this.finishSlot([token], written.length - value.length, closing);
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
      return this.finishSlot([token], 0, closing);
    }
    const before = text.slice(0, quote);
    const value = phase.text + before;
    if (unsafe.includes(value)) {
      // The veto: never close on an unsafe value (the bias bans these tokens; this is the backstop).
      this.stats.vetoed++;
      phase.text = `${value} `;
      const replacement = this.tokenize(`${before} `, false);
      return { replace: replacement };
    }
    this.values[segment.key] = value;
    // The token closes the string: kept when what follows its quote is the structure expected next.
    const rest = text.slice(quote);
    if (closing.text.startsWith(rest)) return this.finishSlot([token], rest.length, closing);
    return this.finishSlot(before === "" ? [] : this.tokenize(before, false), 0, closing);
  }

  /**
   * A token of a JSON slot: taken while it continues the value; a token that goes on past the
   * value's end into the expected structure closes the slot; one that breaks the value (or a
   * special token, or one past the slot's token limit) is cut where it breaks, and the shortest
   * text that completes the value is forced.
   */
  private acceptJson(
    phase: Phase & { kind: "value" },
    { key }: Segment & { kind: "json" },
    token: number,
  ): DecodeAction {
    const json = phase.json as JsonPrefix;
    const special = this.isEndToken(token) || this.isSpecialToken(token);
    const text = special ? "" : this.index.text(token);
    let taken = 0;
    while (taken < text.length && json.feed(text[taken] as string)) taken++;
    if (!special && taken === text.length && !json.done) {
      phase.tokens.push(token);
      if (phase.tokens.length < this.plan.maxStringTokens * jsonTokensPerString) return {};
    }
    const rest = text.slice(taken);
    if (json.whole && rest !== "" && phase.closing.text.startsWith(rest)) {
      this.values[key] = JSON.parse(json.text);
      return this.finishSlot([token], rest.length, phase.closing);
    }
    const completion = json.whole ? "" : json.completion();
    this.values[key] = JSON.parse(json.text + completion);
    const kept = taken === text.length && !special ? [token] : this.tokenize(text.slice(0, taken), false);
    const forced = completion === "" ? [] : this.tokenize(completion, false);
    this.stats.forced += forced.length;
    return this.finishSlot([...kept, ...forced], 0, phase.closing);
  }

  /** A token that continues a free string without closing it on an unsafe value: a space. */
  private safeStringToken(mask: TokenMask): number | undefined {
    const space = this.tokenize(" ", false);
    return space.length === 1 && isTokenAllowed(mask, space[0] as number) ? space[0] : undefined;
  }
}

function booleanValues(sets: ArgumentSets): string[] {
  return ["true", "false"].filter((value) => !(sets.unsafe ?? []).includes(value));
}

/** The leading characters of a token that can belong to a JSON number. */
function numberPart(text: string): string {
  return /^[-0-9.]*/.exec(text)?.[0] ?? "";
}

function completeNumber(text: string, integer: boolean): boolean {
  return (integer ? /^-?(0|[1-9][0-9]*)$/ : /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/).test(text);
}

/**
 * Whether a token may follow `partial` in a number slot: it keeps the number a valid prefix, or
 * completes it and goes on into `closing`.
 */
function numberTokenFits(partial: string, text: string, integer: boolean, closing: string): boolean {
  const digits = numberPart(text);
  const value = partial + digits;
  const rest = text.slice(digits.length);
  if (rest === "")
    return (
      value.length <= maxNumberLength &&
      (integer ? /^-?(0|[1-9][0-9]*)?$/ : /^-?((0|[1-9][0-9]*)(\.[0-9]*)?)?$/).test(value)
    );
  return completeNumber(value, integer) && closing.startsWith(rest);
}

/**
 * The arguments of a call as fixed text and value slots, in the order of the schema's
 * `properties`: `{"a": ` slot `, "b": ` slot `}`. Strings, numbers, booleans and enums are value
 * slots; arrays and objects are JSON slots the model writes freely (kept valid); untyped values
 * are written as `null`.
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
      segments.push({ kind: "number", key, integer: type === "integer" });
    } else if (type === "boolean") {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({ kind: "boolean", key, sets: sets.get(key) ?? {} });
    } else if (type === "array" || type === "object") {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({ kind: "json", key, opening: type === "array" ? "[" : "{" });
    } else fixed += "null";
  });
  segments.push({ kind: "fixed", text: `${fixed}}` });
  return segments;
}

/** Arguments the decoder writes as constants (untyped values: `null`). */
function constantArguments(tool: ToolDefinition): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(tool.parameters?.properties ?? {})) {
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    const hasEnum = (schema.enum ?? []).some((value) => typeof value === "string");
    if (["string", "number", "integer", "boolean", "array", "object"].includes(type ?? "") || hasEnum)
      continue;
    values[key] = null;
  }
  return values;
}
