// `CallDecoder` is one state machine (free text, call prefix, name slot, argument slots, suffix)
// whose phases share the partial text, the open slot and the veto per sampled token: the
// properties the tests hold it to (it never emits what it masks; it is token-for-token transparent
// where it masks nothing) are properties of the whole machine. Its three jobs' stateless parts
// live beside it: the call syntax and its slots (call-syntax.ts, value-slot.ts), spotting calls
// written as text (text-calls.ts), steering to the advised call (steering.ts).

import { MentorError } from "../../errors/index.js";
import type { ToolDefinition } from "../../openai/index.js";
import {
  type ArgumentSets,
  type CallSyntax,
  type Closing,
  closingFrom,
  constantArguments,
  type Segment,
  setsGiven,
  skeleton,
} from "./call-syntax.js";
import { computeTokenMask, fallbackToken, isTokenAllowed, type ShieldSlot, type TokenMask } from "./mask.js";
import type { DecodePlan } from "./plan.js";
import { advisedCallTokens, callPenalty } from "./steering.js";
import { textCallAt } from "./text-calls.js";
import { ValueSlot } from "./value-slot.js";
import type { VocabularyIndex } from "./vocabulary-index.js";

/** Whitespace tokens the model may write after a call before it opens the next or ends the turn. */
const maxWhitespaceTokensBetweenCalls = 4;

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

type Phase =
  | { kind: "free" }
  /** `tokens`: the slot's evaluated tokens; `lead`: text of the first of them before the name. */
  | { kind: "name"; text: string; tokens: number[]; lead: string }
  | { kind: "value"; slot: ValueSlot }
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
    const phase = this.phase;
    const options = { strength: this.plan.strength, eta: this.plan.boost ? this.plan.eta : 0 };
    let mask: TokenMask | undefined;
    if (phase.kind === "name") mask = computeTokenMask(this.index, this.nameSlot(), phase.text, options);
    else if (phase.kind === "value") {
      const slot = phase.slot.shieldSlot();
      mask = slot
        ? computeTokenMask(this.index, slot, phase.slot.text, options)
        : (phase.slot.numberMask(this.index, options.strength) ??
          phase.slot.listMask(this.index, options.strength));
    } else if (phase.kind === "free" && this.plan.boost && this.plan.endProgressing)
      mask = this.callPenalty();
    if (mask !== undefined) {
      this.stats.maskSteps++;
      this.stats.maskMs += performance.now() - started;
    }
    this.currentMask = mask;
    return mask;
  }

  /** The tool-name slot: the names the turn may write, and those the shield redirects. */
  private nameSlot(): ShieldSlot {
    return {
      kind: "allow",
      values: [...this.plan.names, ...this.plan.redirects.keys()],
      progressing: this.plan.progressingNames,
      terminator: this.syntax.paramsPrefix,
      terminatorOf: (name) => this.nameClosing(name).text,
    };
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
        : this.acceptValue(phase.slot, chosen);
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
   * begin (`textCallAt`): the model wrote the opening itself, so nothing is forced; its
   * tokens leave the content and the name slot starts, with the name's start if the token has one.
   */
  private openTextCall(token: number, text: string): DecodeAction | undefined {
    const opening = textCallAt(this.freeText, text, this.textCallEnd);
    if (opening === undefined) return undefined;
    const phase = this.enterCall(opening.at, opening.syntax);
    return opening.rest === "" ? {} : this.nameInOpeningToken(phase, token, opening.rest, text);
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

  /** The same every free step of a generation: built once. */
  private callPenalty(): TokenMask {
    this.penalty ??= callPenalty(this.index, this.plan.syntax, this.plan.eta);
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
          ? maxTokens - advisedCallTokens(this.plan, endRedirect, this.tokenize)
          : Number.POSITIVE_INFINITY;
      this.textBudget = Math.max(0, Math.min(freeTextBudget, room));
    }
    return this.textBudget;
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
      closing = closingFrom(segments, 0, this.syntax.paramsPrefix, this.syntax.suffix);
      this.nameClosings.set(name, closing);
    }
    return closing;
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
    const sets = this.plan.argumentSets.get(name) ?? new Map<string, ArgumentSets>();
    this.segments = skeleton(tool, steered ? new Map([...sets, ...steered]) : sets);
    this.values = constantArguments(tool, this.segments);
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
    const next = this.segments[closing.next] as Exclude<Segment, { kind: "fixed" }>;
    const segment = { ...next, sets: setsGiven(next.sets, this.values) } as typeof next;
    const after = closingFrom(
      this.segments,
      closing.next + 1,
      segment.kind === "string" ? '"' : "",
      this.syntax.suffix,
    );
    const paired = segment.sets.itemsPaired?.argument;
    this.phase = {
      kind: "value",
      slot: new ValueSlot(
        segment,
        after,
        this.plan.maxStringTokens,
        paired === undefined ? undefined : this.values[paired],
      ),
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

  private acceptValue(slot: ValueSlot, token: number): DecodeAction {
    const special = this.isEndToken(token) || this.isSpecialToken(token);
    const step = slot.read(token, special ? "" : this.index.text(token), special);
    if (step.kind === "more") return {};
    if (step.kind === "veto") {
      this.stats.vetoed++;
      return { replace: this.tokenize(step.text, false) };
    }
    this.values[slot.segment.key] = step.value;
    const keep =
      step.keep === "token" ? [token] : step.keep.text === "" ? [] : this.tokenize(step.keep.text, false);
    const forced = step.forced ? this.tokenize(step.forced, false) : [];
    this.stats.forced += forced.length;
    return this.finishSlot([...keep, ...forced], step.emitted, slot.closing);
  }

  /** A token that continues a free string without closing it on an unsafe value: a space. */
  private safeStringToken(mask: TokenMask): number | undefined {
    const space = this.tokenize(" ", false);
    return space.length === 1 && isTokenAllowed(mask, space[0] as number) ? space[0] : undefined;
  }
}
