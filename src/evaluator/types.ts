import type { Value } from "../expression/index.js";
import type { CallClass, GameOptions } from "../game/index.js";
import type { Mode } from "../policy/index.js";
import type { ToolCallEvent } from "../run/index.js";
import type { SearchLimits } from "./budget.js";
import type { RunCacheLimits } from "./run-cache.js";

export interface ProposedCall {
  name: string;
  arguments: Record<string, Value>;
}

/** A rule (or constraint) that a call breaks or that is still open, with the manual's sentence. */
export interface RuleFinding {
  rule: string;
  sentence: string;
  mode: Mode;
  kind: "temporal" | "constraint";
  /** The binding(s) concerned, e.g. `route(x="Toronto", y="Chicago")`. */
  binding?: string;
}

/**
 * What to do about a blocked call (docs/policy.md, "The game"); never the blocked call itself.
 * `prerequisite`: a call after which (for some outcome) the blocked call is blocked by fewer of the
 * same rules (`unblocks` when it is then allowed, or the sequence it begins allows it), or a step
 * toward the way the request asked for; `repair`: the blocked call with changed arguments;
 * `alternative`: another call that meets the duty the blocked call served (the dispense asked for
 * instead of a renewal; a decline once the dispense is impossible, with its `reason`).
 */
export interface Advice {
  kind: "prerequisite" | "repair" | "alternative";
  call: ProposedCall;
  /** Set on a prerequisite after which the blocked call is allowed, or after the `steps` it begins (or one more call). */
  unblocks?: boolean;
  /**
   * Set on a prerequisite that is the first of several calls, the fewest after which the blocked
   * call is allowed (no single call allows it): how many (this one included).
   */
  steps?: number;
  /**
   * Set on a prerequisite that answers what a blocking constraint reads and the run has not read
   * yet (`last('internal_get_student_info').gpa` before any record lookup): the constraints it is
   * for. Whether the call is then allowed depends on the value read (no `unblocks`).
   */
  reads?: string[];
  /**
   * Set on an alternative to the way the request asked for (a decline of a refill request): why
   * that way is not advised — no call makes it allowed now.
   */
  reason?: string;
  /**
   * Required arguments of `call` that nothing known gives (the task, the bindings, earlier
   * outputs): the agent must get them from the user.
   */
  missing?: string[];
}

export interface Duty {
  rule: string;
  sentence: string;
  binding?: string;
  colour: string;
  /** A call that brings this duty closer to done, if one is known, its required arguments filled as advice's are. */
  fulfil?: ProposedCall;
  /** Required arguments of `fulfil` that nothing known gives: the agent must get them from the user. */
  missing?: string[];
}

/**
 * What the caller does with a call (AgentLTL's actions): `allow` it, allow it with a `warn`ing,
 * refuse it and let the agent `retry` (an `escalate` rule not yet escalated), hold it and `ask` a
 * person, refuse it (`block`), or refuse it and `stop` the run. Every action but `allow` and `warn`
 * has the verdict `block`.
 */
export type Action = "allow" | "warn" | "retry" | "ask" | "block" | "stop";

/** A latched stop: the rules that stopped the run and the call they refused (docs/policy.md, "Severities"). */
export interface Stop {
  rules: string[];
  call?: ProposedCall;
}

export interface Decision {
  verdict: "allow" | "block";
  action: Action;
  call: ProposedCall;
  /** Broken block-mode rules (why the call is blocked). */
  violations: RuleFinding[];
  /** Broken warn-mode rules: the call is allowed with a warning. */
  warnings: RuleFinding[];
  /** Broken record-mode rules: only recorded. */
  recorded: RuleFinding[];
  advice?: Advice;
  /** Duties still open if the call is made. */
  openDuties: Duty[];
  /** Set when the shield could not decide and blocked to stay safe. */
  failClosed?: string;
  /**
   * Arguments the tool does not declare, or of another type than declared (`days_supply must be
   * an integer, not the string "30"`): said as such, whatever the rules then make of the value.
   */
  argumentProblems?: string[];
  /** Set when the search for advice ran out of its budget (`EvaluatorOptions.search`): the advice may be missing. */
  searchStopped?: string;
  /** `escalate` rules whose refusals ran out: the call got their `to` action. */
  escalated?: string[];
  /** `override` rules that refused the call: the identical call proposed next overrides them. */
  overridable?: string[];
  /** `override` rules the call overrode (the identical call refused just before): now warnings. */
  overridden?: string[];
  /** `ask` rules a person approved for this call: now only recorded. */
  approved?: string[];
  /** The run is stopped (latched) until resumed: every call gets `stop`. */
  stopped?: Stop;
}

export interface CallVerdict {
  call: ProposedCall;
  class: CallClass;
}

/**
 * What every allowed call of a tool must meet in one argument, read from the block constraints
 * that decide it alone (`a.days_supply <= 30`, `len(a.item_ids) > 0`, `a.status ==
 * last('validate').status`), in every context the call can be judged in (each binding, a new
 * one). JSON Schema's words: numbers within the bounds, lists of `minItems` or more, strings
 * among `oneOf`; `itemsOneOf`: the strings a list's items are among (`subset(a.item_ids, …)`);
 * `itemsAtMost`: how often the list may hold each of them, where a constraint counts them
 * (`submultiset(a.item_ids, …)`); `itemsPaired`: item i of the list shares one of `groups` with
 * item i of the list `argument`, and the two are as long (`same_group(a.item_ids,
 * a.new_item_ids, …)`). `given`: where the call names a known binding by an argument written
 * before this one (`order_id`), the limits in that binding's context alone, where they are
 * narrower than the limits over every context (each order's own items).
 */
export interface ArgumentLimits {
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  oneOf?: Value[];
  itemsOneOf?: Value[];
  itemsAtMost?: { value: Value; most: number }[];
  itemsPaired?: { argument: string; groups: Value[][] };
  given?: { argument: string; cases: { value: Value; limits: ArgumentLimits }[] };
}

export interface NextAnswer {
  /**
   * Whether the run may end now, and whether ending is the progressing move. `stuck`: duties are
   * open, but the run has made the policy's `done.stuck_after` calls, so ending is allowed (and
   * boosted) rather than forcing another call; it says why.
   */
  done: { allowed: boolean; progressing: boolean; stuck?: string };
  /**
   * Per tool the policy governs: unsafe (every call of it is unsafe), progressing, or neutral.
   * `repeats`: every call `calls` lists of the tool repeats a made call whose outcome is a fact
   * (docs/policy.md, "The game"): calling it again can only tell what the run already knows.
   */
  tools: { name: string; class: CallClass; repeats?: true }[];
  /** The concrete calls the game considers (one per tool and binding), classified. */
  calls: CallVerdict[];
  /**
   * Per tool argument: values from the bindings whose calls are unsafe or progressing, and the
   * `limits` the block constraints put on the argument whatever the call's other arguments
   * (and, for a binding argument, the known bindings' values where a rule blocks a new binding).
   */
  arguments: {
    tool: string;
    argument: string;
    unsafe: Value[];
    progressing: Value[];
    limits?: ArgumentLimits;
  }[];
  openDuties: Duty[];
  /** Game states: explored for this answer, and known to this evaluator (its searches are memoized and shared). */
  gameStates: { explored: number; known: number };
  /** Set when the game search hit its limit: unclassified calls count as unsafe. */
  failClosed?: string;
}

export interface EvaluatorOptions extends GameOptions {
  /**
   * Judge a call from the run's game template, stepping only what the call touches (default).
   * `false` rebuilds the run after every call and sums every component: the reference
   * computation the incremental one is tested against.
   */
  incremental?: boolean;
  /**
   * Bounds of the runs kept by message prefix (`run-cache.ts`): default 20,000 messages and
   * 16 M characters; `{maxMessages: 0}` keeps none and rebuilds the run from the whole history
   * on every question.
   */
  runCache?: RunCacheLimits;
  /**
   * Bounds of each search for advice (a repair, a prerequisite) and of the token shield's
   * redirects for one turn: default 500 hypothetical decisions and 1,000 ms (`defaultSearchLimits`). A search that runs
   * out keeps the call blocked and says so (`Decision.searchStopped`).
   */
  search?: SearchLimits;
}

/** A proposed call as an event of the run: its outcome is not known yet. */
export function proposedEvent(proposed: ProposedCall): ToolCallEvent {
  return { id: "proposed", name: proposed.name, arguments: proposed.arguments, outcome: { kind: "pending" } };
}
