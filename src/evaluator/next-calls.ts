import { type Value, valuesEqual } from "../expression/index.js";
import type { CallClass, CandidateCall, StrategyTemplate } from "../game/index.js";
import { fitsParameterType, type ToolSpec } from "../policy/index.js";
import type { Binding, Run } from "../run/index.js";
import { repairValues } from "./advisor.js";
import { argumentLimits, argumentsRead } from "./argument-limits.js";
import type { AskedSteps } from "./duties.js";
import type { Judge } from "./judge.js";
import { listedCalls } from "./listed-calls.js";
import { PerRunAnswers } from "./per-run-answers.js";
import { type CallVerdict, type Duty, type NextAnswer, type ProposedCall, proposedEvent } from "./types.js";

/**
 * What may come next on a run: which tools and calls are unsafe or progressing, which argument
 * values, whether the run may end, and the open duties.
 */
export class NextCalls {
  /**
   * Whether every call of a tool is blocked, per run and tool (a new binding's instances share
   * components with the others through rules without entities and propositions over several
   * entities; instances of rules that read every call start after the run's calls).
   */
  private readonly blockedTools = new PerRunAnswers();
  private constrained: [string, ToolSpec, Set<string>][] | undefined;
  /** Per run and listed call, whether the constraints its own arguments decide block it. */
  private readonly constraintVerdicts = new PerRunAnswers();
  /** Per tool, its block constraints and the arguments each reads (`require` and `when`). */
  private blockConstraints: Map<string, { id: string; reads: string[] }[]> | undefined;

  constructor(private readonly judge: Judge) {}

  answer(run: Run): NextAnswer {
    const template = this.judge.template(run);
    const exploredBefore = template.statesExplored;
    let failClosed: string | undefined;
    const classOf = (candidate: CandidateCall): CallClass => {
      const classes = run.beliefs.map((belief) => template.classifyCandidate(belief, candidate));
      if (classes.some((entry) => entry === undefined)) {
        failClosed = `the game search exceeded ${template.maxStates} states`;
        return "unsafe";
      }
      if (classes.includes("unsafe")) return "unsafe";
      return classes.every((entry) => entry === "progressing") ? "progressing" : "neutral";
    };
    // The call as the run reads it (none where it introduces a binding); once per listed call.
    const moves = new Map<string, CandidateCall | undefined>();
    const wholeMove = (call: ProposedCall): CandidateCall | undefined => {
      const key = JSON.stringify([call.name, call.arguments]);
      if (!moves.has(key)) {
        const event = proposedEvent(call);
        moves.set(
          key,
          run.introducedBindings(event).length > 0
            ? undefined
            : template.moveOf(event, run.expectedCases(event)),
        );
      }
      return moves.get(key);
    };
    // A concrete call the run reads as several candidates, or as a move that reaches instances
    // its candidate does not: the class of its whole move.
    const moveClass = (call: ProposedCall, candidate?: CandidateCall): CallClass | undefined => {
      const move = wholeMove(call);
      if (!move || (candidate && move.affected.every((index) => candidate.affected.includes(index))))
        return undefined;
      return classOf(move);
    };
    const judged = listedCalls(template, classOf, moveClass).map(({ call, class: gameClass }) => ({
      call,
      class:
        gameClass !== "unsafe" &&
        (this.judge.blocksWithNewBinding(run, call) || this.constraintsBlock(run, call))
          ? "unsafe"
          : gameClass,
    }));
    // The instances a listed call is an event of: its candidate's, and those of the call as the run reads it.
    const affected = (call: ProposedCall, position: number): number[] => [
      ...(template.candidates[position] as CandidateCall).affected,
      ...(wholeMove(call)?.affected ?? []),
    ];
    const calls = towardAsked(judged, affected, this.judge.duties.askedSteps(template));
    // A listed call that names one binding of a tool whose propositions pin another entity too (a
    // transfer's account, not its destination) introduces a binding with no values for what it
    // leaves out, which the rules refuse: it says nothing of the calls the agent writes with those
    // arguments, so it decides neither the tool's class nor its argument values.
    const written = calls.filter(
      ({ call }) =>
        !run
          .introducedBindings(proposedEvent(call))
          .some((binding) => Object.values(binding.values).every((value) => value === null)),
    );
    const tools = [...this.judge.policy.tools.keys()].map((name) => {
      const own = written.filter((entry) => entry.call.name === name);
      const progressing = own.some((entry) => entry.class === "progressing");
      // A tool is unsafe only if every call of it is: its known bindings and bindings not seen yet.
      const unsafe = own.every((entry) => entry.class === "unsafe") && this.everyCallBlocked(run, name);
      const repeats =
        own.length > 0 && own.every((entry) => run.observed(name, entry.call.arguments) !== undefined);
      return {
        name,
        class: (unsafe ? "unsafe" : progressing ? "progressing" : "neutral") as CallClass,
        ...(repeats ? { repeats: true as const } : {}),
      };
    });
    const accepting = run.beliefs.every((belief) => template.isAccepting(belief));
    const done = this.doneAt(run, accepting, template);
    const openDuties = this.judge.duties.at(template, run.beliefs);
    // A request's duty met by another way (a record the policy cannot compare, read) while the
    // action it asked for is not taken and still possible: the step toward it is the progress, not
    // ending. Where every constraint on the action is judged on its filled call, that record showed
    // nothing that rules it out: ending is refused until the action is taken.
    if (done.progressing && done.stuck === undefined)
      for (const way of this.askedWays(run, tools)) {
        done.progressing = false;
        for (const tool of tools)
          if (tool.name === way.step.name && tool.class !== "unsafe") tool.class = "progressing";
        if (way.duty) {
          done.allowed = false;
          openDuties.push(way.duty);
        }
      }
    const answer: NextAnswer = {
      done,
      tools,
      calls,
      arguments: withLimits(
        mergeArgumentValues(argumentValues(written), this.constrainedValues(run, written, openDuties)),
        argumentLimits(this.judge, run),
      ),
      openDuties,
      gameStates: { explored: template.statesExplored - exploredBefore, known: template.knownStates },
    };
    if (failClosed !== undefined) answer.failClosed = failClosed;
    return answer;
  }

  /**
   * Whether the run may end: when no duty is open, or, with duties open, when the run has made the
   * policy's `done.stuck_after` calls or what it observed leaves no way to meet them (every belief
   * is at an infinite distance): a run that cannot progress ends honestly instead of repeating
   * calls to a call limit. Ending is progress once the run's duties are met, not on a run that
   * never had one: the policy does not know what such a run was asked, so the token shield leaves
   * ending and calling as the model weighs them.
   */
  private doneAt(run: Run, accepting: boolean, template: StrategyTemplate): NextAnswer["done"] {
    const bound = this.judge.policy.stuckAfter;
    if (accepting || bound === 0) return { allowed: accepting, progressing: accepting && run.hadDuty };
    const stuck = this.stuckReason(run, bound, template);
    return stuck === undefined
      ? { allowed: false, progressing: false }
      : { allowed: true, progressing: true, stuck };
  }

  /** Why a run with open duties may end now: the call bound is reached, or no call can meet them. */
  private stuckReason(run: Run, bound: number, template: StrategyTemplate): string | undefined {
    if (run.calls.length >= bound)
      return `${run.calls.length} calls made and duties still open: the shield no longer forces another call (done.stuck_after: ${bound})`;
    return template.noCompliantFinish()
      ? "duties still open and no calls can meet them any more (what the run observed rules out every way): the shield no longer forces another call"
      : undefined;
  }

  /**
   * For each argument a constraint reads, its candidate values (enum members, task and history
   * values, values in the duties' advice) classed by deciding the considered calls of the tool
   * with each value: unsafe if every such call is blocked, progressing if one is allowed and the
   * call progresses. Constraints that also read other arguments of the call are left out of a
   * value's verdict (its other arguments are unknown here).
   */
  private constrainedValues(run: Run, calls: CallVerdict[], duties: Duty[]): NextAnswer["arguments"] {
    const entries: NextAnswer["arguments"] = [];
    for (const [argument, tool, constraints] of this.constrainedArguments()) {
      const considered = calls.filter((entry) => entry.call.name === tool.name);
      if (considered.length === 0) continue;
      const advice = duties.find((duty) => duty.fulfil?.name === tool.name)?.fulfil;
      const type = tool.parameters.find((parameter) => parameter.name === argument)?.type ?? "any";
      const values = repairValues(run, tool, argument, {
        advice: advice && { kind: "prerequisite", call: advice },
      }).filter((value) => fitsParameterType(type, value));
      const entry = { tool: tool.name, argument, unsafe: [] as Value[], progressing: [] as Value[] };
      for (const value of values) {
        let unsafe = true;
        let progressing = false;
        for (const { call, class: callClass } of considered) {
          const proposed = { name: tool.name, arguments: { ...call.arguments, [argument]: value } };
          const decision = this.judge.decide(run, proposed, false);
          const blocked = decision.violations.some(
            (found) => found.kind === "temporal" || constraints.has(found.rule),
          );
          if (blocked || decision.failClosed !== undefined) continue;
          unsafe = false;
          if (callClass === "progressing") progressing = true;
        }
        if (unsafe) entry.unsafe.push(value);
        if (progressing) entry.progressing.push(value);
      }
      entries.push(entry);
    }
    return entries;
  }

  /** Per tool argument a block-mode constraint reads (and no other argument but those its proposition's `when` reads): those constraints' ids. */
  private constrainedArguments(): [string, ToolSpec, Set<string>][] {
    if (!this.constrained) {
      const found = new Map<string, [string, ToolSpec, Set<string>]>();
      for (const constraint of this.judge.policy.constraints) {
        const tool = this.judge.policy.tools.get(constraint.on.tool);
        if (!tool || constraint.mode !== "block") continue;
        const naming = new Set(argumentsRead(constraint.on.when));
        const read = argumentsRead(constraint.require).filter((name) => !naming.has(name));
        if (new Set(read).size !== 1) continue;
        const argument = read[0] as string;
        const key = `${tool.name}.${argument}`;
        const entry = found.get(key) ?? [argument, tool, new Set<string>()];
        entry[2].add(constraint.id);
        found.set(key, entry);
      }
      this.constrained = [...found.values()];
    }
    return this.constrained;
  }

  /**
   * Whether a block constraint that the listed call's own arguments decide (its `require` and its
   * proposition's `when` read no argument the call leaves out) blocks it now: a change of major
   * refused on a GPA already read. The game judges rules, not constraints, so without this `next`
   * would call it progressing and the token shield would boost a call `decide` then blocks.
   */
  private constraintsBlock(run: Run, call: ProposedCall): boolean {
    const decidable = this.decidableConstraints(call);
    if (decidable.size === 0) return false;
    return this.constraintVerdicts.answer(run, JSON.stringify([call.name, call.arguments]), () =>
      this.judge
        .decide(run, call, false)
        .violations.some((found) => found.kind === "constraint" && decidable.has(found.rule)),
    );
  }

  /** The ids of the block constraints on the call's tool that its own arguments decide (every argument their `require` and `when` read is given). */
  private decidableConstraints(call: ProposedCall): Set<string> {
    if (!this.blockConstraints) {
      this.blockConstraints = new Map();
      for (const constraint of this.judge.policy.constraints) {
        if (constraint.mode !== "block") continue;
        const reads = [...argumentsRead(constraint.require), ...argumentsRead(constraint.on.when)];
        const list = this.blockConstraints.get(constraint.on.tool) ?? [];
        list.push({ id: constraint.id, reads });
        this.blockConstraints.set(constraint.on.tool, list);
      }
    }
    return new Set(
      (this.blockConstraints.get(call.name) ?? [])
        .filter(({ reads }) => reads.every((argument) => Object.hasOwn(call.arguments, argument)))
        .map(({ id }) => id),
    );
  }

  /**
   * The actions requests asked for (`asks_for`) that no call has taken, on a run whose duties are
   * met: for each, the step toward it while it is possible (itself where allowed, else the call
   * that unblocks it), and a duty of the request's rule, with that step as its `fulfil`, where the
   * action's call is filled and its arguments decide every block constraint on it (one it cannot
   * decide may still refuse the action, so ending stays allowed there).
   */
  private askedWays(run: Run, tools: NextAnswer["tools"]): { step: ProposedCall; duty?: Duty }[] {
    const ways: { step: ProposedCall; duty?: Duty }[] = [];
    const seen = new Set<string>();
    for (const instance of run.instances) {
      if (instance.rule.appliesTo !== "requested" || !instance.bindings.every((binding) => binding.requested))
        continue;
      const asked = instance.bindings.flatMap((binding) =>
        binding.taskCall ? (this.judge.policy.taskCalls.get(binding.taskCall.name)?.asksFor ?? []) : [],
      );
      for (const tool of asked) {
        if (seen.has(tool) || run.calls.some((call) => call.name === tool)) continue;
        seen.add(tool);
        const call = { name: tool, arguments: this.boundArguments(run, tool, instance.bindings) };
        // Possible: allowed, or a step unblocks it or reads what its constraints read (a step that
        // only leaves fewer rules blocking it does not show that the rest can be cleared).
        const advised = this.judge.advisor.toward(run, call, instance.bindings);
        const found =
          advised && (advised.kind !== "prerequisite" || advised.unblocks || advised.reads)
            ? advised
            : undefined;
        // A lookup made already that the constraints read (they refuse the action on what it showed) is no step.
        const toward =
          found &&
          !run.calls.some(
            (made) => made.name === found.call.name && valuesEqual(made.arguments, found.call.arguments),
          )
            ? found
            : undefined;
        // No step found for the call the request names (a constraint reads an argument it leaves
        // out): the action is the step while some call of it is not unsafe, and ending stays allowed.
        if (!toward) {
          if (tools.some((entry) => entry.name === tool && entry.class !== "unsafe"))
            ways.push({ step: call });
          continue;
        }
        const constraints = this.judge.policy.constraints.filter(
          (constraint) => constraint.mode === "block" && constraint.on.tool === tool,
        );
        // The action's own call where it is allowed now (filled), else the one the request names.
        const action = toward.call.name === tool ? toward.call : call;
        const required = this.judge.policy.tools.get(tool)?.required ?? [];
        const judged =
          toward.missing === undefined &&
          required.every((name) => Object.hasOwn(action.arguments, name)) &&
          this.decidableConstraints(action).size === constraints.length;
        ways.push({
          step: toward.call,
          ...(judged
            ? {
                duty: {
                  rule: instance.rule.id,
                  sentence: instance.rule.sentence,
                  colour: "met by a lookup, while the action asked for is possible",
                  ...this.judge.texts.field(instance.bindings),
                  fulfil: toward.call,
                },
              }
            : {}),
        });
      }
    }
    return ways;
  }

  /**
   * The arguments of a call of `tool` that the bindings give through its propositions' binding
   * patterns, and where they leave a required one out, the task's value of that name (the
   * username the user gave, for a return the request names by its order).
   */
  private boundArguments(run: Run, tool: string, bindings: readonly Binding[]): Record<string, Value> {
    const args: Record<string, Value> = {};
    for (const [argument, values] of this.bindingValues(tool, bindings))
      if (values.length > 0) args[argument] = values[0] as Value;
    for (const name of this.judge.policy.tools.get(tool)?.required ?? []) {
      const given = run.task.find((call) => call.arguments[name] != null)?.arguments[name];
      if (given != null) args[name] ??= given;
    }
    return args;
  }

  /**
   * Per top-level argument a proposition of `tool` binds an entity by, the distinct values
   * `bindings` of that entity give it (none for a pattern below the top level), in their order.
   */
  private bindingValues(tool: string, bindings: readonly Binding[]): Map<string, Value[]> {
    const found = new Map<string, Value[]>();
    for (const proposition of this.judge.policy.propositions.values()) {
      if (proposition.tool !== tool) continue;
      for (const [variable, path] of Object.entries(proposition.bindingPattern)) {
        const values = found.get(String(path[0])) ?? [];
        found.set(String(path[0]), values);
        if (path.length !== 1) continue;
        for (const binding of bindings) {
          const value = binding.values[variable];
          if (
            proposition.entities.includes(binding.entity) &&
            value != null &&
            !values.some((known) => valuesEqual(known, value))
          )
            values.push(value);
        }
      }
    }
    return found;
  }

  /**
   * Whether every call of `tool` breaks a rule now. Each argument a proposition of the tool binds
   * an entity by takes the values the run's bindings of that entity have, and one no binding can
   * have; every combination is decided, its other arguments left out (a constraint that reads one
   * of them does not count). A change of a vehicle's address names the user and
   * the plate: a known user with a new plate is a call too. Past `MAX_COMBINATIONS` the answer is
   * no (the tool is not masked; `decide` still judges each call).
   */
  private everyCallBlocked(run: Run, tool: string): boolean {
    return this.blockedTools.answer(run, tool, () => {
      const choices = [...this.bindingValues(tool, run.bindings)].map(
        ([argument, known]): [string, Value[]] => [argument, [`\u0000unseen ${argument}`, ...known]],
      );
      let combinations: Record<string, Value>[] = [{}];
      for (const [argument, values] of choices) {
        combinations = combinations.flatMap((args) =>
          values.map((value) => ({ ...args, [argument]: value })),
        );
        if (combinations.length > MAX_COMBINATIONS) return false;
      }
      return combinations.every((args) => {
        const call = { name: tool, arguments: args };
        const decidable = this.decidableConstraints(call);
        return this.judge
          .decide(run, call, false)
          .violations.some((found) => found.kind === "temporal" || decidable.has(found.rule));
      });
    });
  }
}

/** The most argument combinations `everyCallBlocked` decides for one tool. */
const MAX_COMBINATIONS = 64;

/**
 * Where a request asked for a way of meeting its duty that is still possible (a change of major,
 * not the failed check that would excuse it), that way's next step is the duty's progress: the
 * step is progressing unless the game finds it unsafe (listed if the game does not list it: a
 * lookup only a constraint reads), and a call the game finds progressing only through such
 * duties is neutral. Calls that also progress another open duty keep their class. `calls` are the
 * game's candidates' listed calls, in order.
 */
function towardAsked(
  calls: CallVerdict[],
  affectedBy: (call: ProposedCall, position: number) => number[],
  asked: AskedSteps,
): CallVerdict[] {
  if (asked.steps.length === 0) return calls;
  // The step's very call: a listed call that leaves out an argument the step gives (a lookup of an
  // order that names the user only) is another call.
  const isStep = (call: ProposedCall, step: ProposedCall) =>
    call.name === step.name && valuesEqual(call.arguments, step.arguments);
  const steered = calls.map((entry, position): CallVerdict => {
    if (entry.class === "unsafe") return entry;
    if (asked.steps.some((step) => isStep(entry.call, step))) return { ...entry, class: "progressing" };
    if (entry.class !== "progressing") return entry;
    const affected = affectedBy(entry.call, position);
    const onlyAsked =
      affected.some((instance) => asked.instances.has(instance)) &&
      !affected.some((instance) => asked.others.has(instance));
    return onlyAsked ? { ...entry, class: "neutral" } : entry;
  });
  const unlisted = asked.steps.filter((step) => !steered.some((entry) => isStep(entry.call, step)));
  return [...steered, ...unlisted.map((step): CallVerdict => ({ call: step, class: "progressing" }))];
}

function argumentValues(calls: CallVerdict[]): NextAnswer["arguments"] {
  const table = new Map<
    string,
    { tool: string; argument: string; unsafe: Value[]; progressing: Value[]; safe: Value[] }
  >();
  for (const { call, class: callClass } of calls) {
    for (const [argument, value] of Object.entries(call.arguments)) {
      const key = `${call.name}.${argument}`;
      const entry = table.get(key) ?? { tool: call.name, argument, unsafe: [], progressing: [], safe: [] };
      table.set(key, entry);
      const list = callClass === "unsafe" ? entry.unsafe : entry.safe;
      if (!list.some((known) => valuesEqual(known, value))) list.push(value);
      if (callClass === "progressing" && !entry.progressing.some((known) => valuesEqual(known, value)))
        entry.progressing.push(value);
    }
  }
  // A value is unsafe for an argument only if every considered call with it is unsafe.
  return [...table.values()].map(({ tool, argument, unsafe, progressing, safe }) => ({
    tool,
    argument,
    unsafe: unsafe.filter((value) => !safe.some((known) => valuesEqual(known, value))),
    progressing,
  }));
}

/** Adds the classified values of constrained arguments to the binding values (one entry per tool argument). */
function mergeArgumentValues(
  fromBindings: NextAnswer["arguments"],
  constrained: NextAnswer["arguments"],
): NextAnswer["arguments"] {
  const merged = fromBindings.map((entry) => ({ ...entry }));
  for (const entry of constrained) {
    const known = merged.find((other) => other.tool === entry.tool && other.argument === entry.argument);
    if (!known) {
      merged.push(entry);
      continue;
    }
    for (const value of entry.unsafe)
      if (!known.unsafe.some((other) => valuesEqual(other, value))) known.unsafe.push(value);
    for (const value of entry.progressing)
      if (!known.progressing.some((other) => valuesEqual(other, value))) known.progressing.push(value);
  }
  return merged;
}

/** The argument entries with the limits of each argument that has some (a new entry where none was). */
function withLimits(
  entries: NextAnswer["arguments"],
  limits: ReturnType<typeof argumentLimits>,
): NextAnswer["arguments"] {
  for (const { tool, argument, limits: found } of limits) {
    const known = entries.find((entry) => entry.tool === tool && entry.argument === argument);
    if (known) known.limits = found;
    else entries.push({ tool, argument, unsafe: [], progressing: [], limits: found });
  }
  return entries;
}
