import {
  type ArgumentLimits,
  type Evaluator,
  type NextAnswer,
  type ProposedCall,
  SearchBudget,
} from "../../evaluator/index.js";
import type { Value } from "../../expression/index.js";
import type { Parameter } from "../../policy/index.js";

/** Per-argument value sets of one tool. Values are compared as the text inside the JSON string. */
export interface ToolShieldSets {
  tool: string;
  argument: string;
  /** When set, the argument's value must be one of these (an allow-list slot). */
  allowed?: string[];
  /** Values the argument must not take (a deny-list slot). */
  unsafe?: string[];
  /** Values that make progress (boosted by eta). */
  progressing?: string[];
  /** A number's bounds (JSON Schema's words): the number slot lets through only values within them. */
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  exclusiveMaximum?: number;
  /** A list's fewest items: from 1 on, the list slot may not close empty. */
  minItems?: number;
  /** A list of strings whose items must be among these (as text inside the JSON string). */
  itemsAllowed?: string[];
  /** How often the list may hold each string (one not listed: never). */
  itemsAtMost?: Record<string, number>;
  /**
   * Item i must share one of `groups` with item i of the list argument `argument`, and the list
   * is as long (where that argument is written first, the slot keeps to both).
   */
  itemsPaired?: { argument: string; groups: string[][] };
  /**
   * Where the call's `argument`, written before this one, is one of these values (as text inside
   * the JSON string), the limits are that case's instead (its binding's own, narrower).
   */
  given?: { argument: string; cases: { value: string; sets: LimitSets }[] };
}

/** The fields of `ToolShieldSets` a constraint's limits give. */
export type LimitSets = Pick<
  ToolShieldSets,
  | "allowed"
  | "minimum"
  | "exclusiveMinimum"
  | "maximum"
  | "exclusiveMaximum"
  | "minItems"
  | "itemsAllowed"
  | "itemsAtMost"
  | "itemsPaired"
>;

/**
 * What the token shield enforces at one point of a run: which tools may be named, which make
 * progress, which argument values are banned or boosted, and whether ending the turn is allowed.
 */
export interface ShieldSets {
  /** When set, only these tools may be called (intersected with the declared tools). */
  allowedTools?: string[];
  /** Tools that must not be called. */
  unsafeTools?: string[];
  /** Tools whose calls make progress (boosted by eta). */
  progressingTools?: string[];
  arguments?: ToolShieldSets[];
  /** Whether the turn may end without a call (`done`). Default true. */
  doneAllowed?: boolean;
  /** Whether ending the turn is the progressing move (calls opened get -eta). Default false. */
  doneProgressing?: boolean;
  /**
   * Intent-keeping: an unsafe tool and the allowed tool the evaluator's advice names for it (its
   * prerequisite). The name slot lets the model name the unsafe tool, and a name that can only
   * become it is replaced by the advised one, so the wish is steered to what would make it allowed.
   * Unsafe tools without a redirect are masked.
   */
  redirects?: Redirect[];
  /**
   * Intent-keeping for the end of the turn: while `done` is not allowed, the call the evaluator
   * advises toward the first open duty (the prompt shield's "Next:"), or the step that unblocks it
   * where that call's tool is unsafe now. The model may write text;
   * an end of the turn it samples there becomes this call, steered to the advised values.
   */
  doneRedirect?: AdvisedCall;
  /**
   * Where the run has a call that progresses: that call (`to`), and the tools whose calls only
   * repeat what the run was told (`RepeatSteering`), each named as a redirected tool is.
   */
  repeated?: RepeatSteering;
  /** Set when the search for redirects ran out of its budget: the redirects not found are masks. */
  searchStopped?: string;
}

/** The allowed call a masked wish is steered to: `to` with the advised `arguments` (the binding it is for). */
export interface AdvisedCall {
  to: string;
  arguments?: Record<string, Value>;
}

/**
 * The call that progresses instead of a repeat: the end's redirect, else the first progressing
 * call `next` lists, else the policy's `done.tool` where ending progresses. `tools`: those whose
 * every listed call repeats a made call whose outcome is a fact (`next`'s `repeats`), and those
 * whose call the turn found repeating one; the model may start such a name, and a name that can
 * only become one of them is steered to `to` (where the turn may call `to`; else they stay allowed).
 */
export interface RepeatSteering extends AdvisedCall {
  tools: string[];
}

/** An unsafe tool and the allowed call the evaluator's advice names for it. */
export interface Redirect extends AdvisedCall {
  tool: string;
}

/**
 * The sets of an evaluator's `next` answer: unsafe tools banned, progressing ones boosted, and per
 * argument its unsafe and progressing values and the limits its constraints decide alone.
 */
export function shieldSetsFromNextAnswer(answer: NextAnswer): ShieldSets {
  return {
    unsafeTools: answer.tools.filter((tool) => tool.class === "unsafe").map((tool) => tool.name),
    progressingTools: answer.tools.filter((tool) => tool.class === "progressing").map((tool) => tool.name),
    arguments: answer.arguments.map((entry) => {
      const unsafe = entry.unsafe.map(valueText);
      const given = entry.limits?.given;
      return {
        tool: entry.tool,
        argument: entry.argument,
        unsafe,
        progressing: entry.progressing.map(valueText),
        ...limitSets(entry.limits ?? {}, unsafe),
        ...(given
          ? {
              given: {
                argument: given.argument,
                cases: given.cases.flatMap(({ value, limits }) =>
                  typeof value === "string" ? [{ value, sets: limitSets(limits, unsafe) }] : [],
                ),
              },
            }
          : {}),
      };
    }),
    doneAllowed: answer.done.allowed,
    doneProgressing: answer.done.progressing,
  };
}

function limitSets(limits: ArgumentLimits, unsafe: string[]): LimitSets {
  const { oneOf, itemsOneOf, itemsAtMost, itemsPaired, given: _given, ...bounds } = limits;
  const allowed = oneOf?.map(valueText);
  const strings = (values: Value[]) => values.filter((value) => typeof value === "string");
  const itemsAllowed = itemsOneOf && strings(itemsOneOf);
  return {
    // The values a constraint allows, where one of them is not unsafe (else the slot would be
    // left with none: the evaluator judges such calls).
    ...(allowed?.some((value) => !unsafe.includes(value)) ? { allowed } : {}),
    ...(itemsAllowed !== undefined && itemsAllowed.length > 0 ? { itemsAllowed } : {}),
    ...(itemsAtMost
      ? {
          itemsAtMost: Object.fromEntries(
            itemsAtMost.flatMap(({ value, most }) => (typeof value === "string" ? [[value, most]] : [])),
          ),
        }
      : {}),
    ...(itemsPaired
      ? { itemsPaired: { argument: itemsPaired.argument, groups: itemsPaired.groups.map(strings) } }
      : {}),
    ...bounds,
  };
}

/**
 * The sets of `next` with intent-keeping redirects: each unsafe tool whose considered call the
 * evaluator advises to precede by a step toward it (a prerequisite that unblocks it, not merely
 * one that progresses elsewhere), where that tool is not unsafe. The considered call lacks the
 * arguments no binding fills; each value of an enum among them is tried too. While duties are
 * open, the end of the turn is redirected toward the first of them (`endOfTurnRedirect`). All
 * the advice searches share one budget (default: the evaluator's `search` limits): the end's
 * redirect may spend half of it, then each unsafe tool an equal share of what is left; where a
 * share or the budget runs out, the redirects not found are left out (their tools stay masked)
 * and `searchStopped` says so.
 */
export function shieldSetsFor(
  evaluator: Evaluator,
  history: unknown,
  next: NextAnswer = evaluator.next(history),
  budget = new SearchBudget(evaluator.options.search),
): ShieldSets {
  const sets = shieldSetsFromNextAnswer(next);
  const unsafe = new Set(sets.unsafeTools);
  // The end's redirect often asks about a call the name redirects already decided (the duty's own call).
  const steps = new Map<string, AdvisedCall | undefined>();
  const stepToward = (call: ProposedCall, share: SearchBudget): AdvisedCall | undefined => {
    const key = JSON.stringify(call);
    if (!steps.has(key)) steps.set(key, unblockingStep(evaluator, history, call, unsafe, share));
    return steps.get(key);
  };
  // The end's redirect first (the wish to end is every turn's), then a fair share of what is left
  // for each unsafe tool: one tool's long search must not starve the others, or the tool the
  // model wants gets no redirect because it comes late in the policy.
  const doneRedirect = endOfTurnRedirect(next, unsafe, (call) =>
    stepToward(call, budget.share(Math.ceil(budget.remaining / 2), "the search for the end's redirect")),
  );
  const redirects: Redirect[] = [];
  const tools = [...unsafe].filter((tool) => next.calls.some((verdict) => verdict.call.name === tool));
  for (const [at, tool] of tools.entries()) {
    const considered = next.calls.find((verdict) => verdict.call.name === tool)?.call as ProposedCall;
    const share = budget.share(
      Math.ceil(budget.remaining / (tools.length - at)),
      `the search for a redirect from ${tool}`,
    );
    for (const call of withEnumValues(considered, evaluator.policy.tools.get(tool)?.parameters ?? [])) {
      const step = stepToward(call, share);
      if (step) {
        redirects.push({ tool, ...step });
        break;
      }
    }
  }
  const repeated = repeatSteering(next, unsafe, doneRedirect, evaluator.policy.doneTool);
  const stopped = budget.exhausted ?? budget.partStopped;
  return {
    ...sets,
    ...(redirects.length > 0 ? { redirects } : {}),
    ...(doneRedirect ? { doneRedirect } : {}),
    ...(repeated ? { repeated } : {}),
    ...(stopped !== undefined ? { searchStopped: stopped } : {}),
  };
}

/**
 * While `done` is not allowed: the call that fulfils the first open duty or, where its tool is
 * unsafe now, the allowed step the evaluator advises to unblock it (checking the order before
 * changing it), so that the wish to end is steered toward what would let the turn end.
 */
function endOfTurnRedirect(
  next: NextAnswer,
  unsafe: ReadonlySet<string>,
  stepToward: (call: ProposedCall) => AdvisedCall | undefined,
): AdvisedCall | undefined {
  if (next.done.allowed) return undefined;
  const fulfil = next.openDuties.find((duty) => duty.fulfil)?.fulfil;
  if (fulfil === undefined) return undefined;
  if (!unsafe.has(fulfil.name)) return { to: fulfil.name, arguments: fulfil.arguments };
  return stepToward(fulfil);
}

/**
 * The call a repeat is steered to, with the neutral tools `next` finds only repeats of (every call
 * it lists of them was made, and answered with a fact): a model that asks again what it was told
 * loops to the call limit (login ×10 on SOPBench). Undefined where nothing progresses instead.
 */
function repeatSteering(
  next: NextAnswer,
  unsafe: ReadonlySet<string>,
  doneRedirect: AdvisedCall | undefined,
  doneTool: string | undefined,
): RepeatSteering | undefined {
  const progressing = next.calls.find(
    (verdict) => verdict.class === "progressing" && !unsafe.has(verdict.call.name),
  )?.call;
  const target: AdvisedCall | undefined =
    doneRedirect ??
    (progressing
      ? { to: progressing.name, arguments: progressing.arguments }
      : next.done.progressing && doneTool !== undefined
        ? { to: doneTool }
        : undefined);
  if (target === undefined) return undefined;
  const tools = next.tools
    .filter((tool) => tool.repeats && tool.class === "neutral" && tool.name !== target.to)
    .map((tool) => tool.name);
  return { ...target, tools };
}

/** The evaluator's advice for a call, where it is a step of another, allowed tool that unblocks the call. */
function unblockingStep(
  evaluator: Evaluator,
  history: unknown,
  call: ProposedCall,
  unsafe: ReadonlySet<string>,
  budget: SearchBudget,
): AdvisedCall | undefined {
  const advice = evaluator.decide(history, call, budget).advice;
  if (!advice?.unblocks || advice.call.name === call.name || unsafe.has(advice.call.name)) return undefined;
  return { to: advice.call.name, arguments: advice.call.arguments };
}

/**
 * The sets with the policy's `done.tool` judged as the end of the run, not as a tool: masked while
 * `done` is not allowed (its name steered to `doneRedirect`, as an end of the turn is), boosted
 * where ending is the progressing move, neither where ending is merely allowed.
 */
export function withDoneTool(sets: ShieldSets, doneTool: string | undefined): ShieldSets {
  if (doneTool === undefined) return sets;
  const others = (names: readonly string[] | undefined) => (names ?? []).filter((name) => name !== doneTool);
  const doneAllowed = sets.doneAllowed ?? true;
  const redirects = (sets.redirects ?? []).filter((redirect) => redirect.tool !== doneTool);
  if (!doneAllowed && sets.doneRedirect) redirects.push({ tool: doneTool, ...sets.doneRedirect });
  const { redirects: _, ...rest } = sets;
  return {
    ...rest,
    unsafeTools: doneAllowed ? others(sets.unsafeTools) : [...others(sets.unsafeTools), doneTool],
    progressingTools:
      doneAllowed && sets.doneProgressing
        ? [...others(sets.progressingTools), doneTool]
        : others(sets.progressingTools),
    ...(redirects.length > 0 ? { redirects } : {}),
  };
}

/** The call, then the call with each value of the first enum parameter it lacks. */
function withEnumValues(call: ProposedCall, parameters: readonly Parameter[]): ProposedCall[] {
  const missing = parameters.find(
    (parameter) => !(parameter.name in call.arguments) && Array.isArray(parameter.jsonSchema.enum),
  );
  const values = (missing?.jsonSchema.enum ?? []) as Value[];
  return [
    call,
    ...values.map((value) => ({
      ...call,
      arguments: { ...call.arguments, [missing?.name as string]: value },
    })),
  ];
}

function valueText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
