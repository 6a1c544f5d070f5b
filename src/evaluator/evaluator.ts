import { type Expression, holdsIn, referencesOf, type Value, valuesEqual } from "../expression/index.js";
import {
  type CallClass,
  type CandidateCall,
  Game,
  type GameOptions,
  StrategyTemplate,
} from "../game/index.js";
import {
  type Binding,
  describeBinding,
  type Instance,
  type OutcomeCase,
  Run,
  type ToolCallEvent,
  type Trace,
  traceFromMessages,
} from "../monitor/index.js";
import type { ConstraintSpec, Mode, Policy, ToolSpec } from "../policy/index.js";
import { fitsDeclared } from "../smt/candidates.js";
import type { SolverClient } from "../smt/index.js";

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

export interface Advice {
  /** `prerequisite`: do this first; `repair`: the same call with other arguments. */
  kind: "prerequisite" | "repair";
  call: ProposedCall;
  /**
   * A prerequisite after which (for some outcome) the blocked call is allowed or blocked by fewer
   * of the same rules: a step toward it, not only toward finishing.
   */
  unblocks?: boolean;
}

export interface Duty {
  rule: string;
  sentence: string;
  binding?: string;
  colour: string;
  /** A call that brings this duty closer to done, if one is known. */
  fulfil?: ProposedCall;
}

export interface Decision {
  verdict: "allow" | "block";
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
}

export interface CallVerdict {
  call: ProposedCall;
  class: CallClass;
}

export interface NextAnswer {
  done: { allowed: boolean; progressing: boolean };
  /** Per tool the policy governs: unsafe (every call of it is unsafe), progressing, or neutral. */
  tools: { name: string; class: CallClass }[];
  /** The concrete calls the game considers (one per tool and binding), classified. */
  calls: CallVerdict[];
  /** Per tool argument: values from the bindings whose calls are unsafe or progressing. */
  arguments: { tool: string; argument: string; unsafe: Value[]; progressing: Value[] }[];
  openDuties: Duty[];
  /** Game states: explored for this answer, and known for the policy (searches are memoized and shared). */
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
}

/** Runs kept by conversation content (see `Evaluator.run`). */
const RUN_CACHE_SIZE = 32;

/**
 * The evaluator's two questions, answered from a policy and the run so far (an OpenAI
 * `messages` array or a trace): may this call be made (`decide`), and what may come next (`next`).
 */
export class Evaluator {
  constructor(
    readonly policy: Policy,
    readonly options: EvaluatorOptions = {},
  ) {
    this.game = new Game(policy);
  }

  /**
   * The run after a conversation (an OpenAI `messages` array or a trace). The server rebuilds it
   * on every request and asks several questions about the same conversation (next, then decide on
   * each attempt), so recent runs are kept by content.
   */
  run(history: unknown): Run {
    // Keyed by the history as given: reading the trace from messages costs more than the key.
    const key = historyKey(history);
    const cached = key === undefined ? undefined : this.runs.get(key);
    if (cached && key !== undefined) {
      this.runs.delete(key);
      this.runs.set(key, cached);
      return cached;
    }
    const trace = isTrace(history) ? history : traceFromMessages(history, this.policy);
    const run = Run.fromTrace(this.policy, trace);
    if (key === undefined) return run;
    this.runs.set(key, run);
    if (this.runs.size > RUN_CACHE_SIZE) this.runs.delete(this.runs.keys().next().value as string);
    return run;
  }

  private readonly runs = new Map<string, Run>();
  /** The policy's game: every template of this evaluator shares its candidates, components and distances. */
  private readonly game: Game;
  /** Whether a call of a tool for a binding not seen yet is blocked, by tool, task and state of rules without entities. */
  private readonly freshCalls = new Map<string, boolean>();

  decide(history: unknown, proposed: ProposedCall): Decision {
    return this.decideOn(this.run(history), proposed, true);
  }

  /**
   * `decide`, and for a call blocked only by argument constraints that the concrete search
   * could not repair, a repair from the solver: only the tool's repairable arguments change,
   * preferring values from the enum, the task, the history and the advice. The solver's answer
   * must pass `decide` before it becomes the advice. A solver timeout or error leaves the call
   * blocked and says so in `failClosed`.
   */
  async decideWithRepair(history: unknown, proposed: ProposedCall, solver: SolverClient): Promise<Decision> {
    const run = this.run(history);
    const decision = this.decideOn(run, proposed, true);
    const tool = this.policy.tools.get(proposed.name);
    const onlyArguments =
      decision.violations.length > 0 && decision.violations.every((found) => found.kind === "constraint");
    if (!tool || tool.repairable.length === 0 || !onlyArguments || decision.advice?.kind === "repair")
      return decision;
    const call = proposedEvent(proposed);
    const after = run.after(call, []);
    // The solver takes one scope per request: constraints are grouped by the bindings they apply for.
    const groups = new Map<string, { bindings: Binding[]; constraints: ConstraintSpec[] }>();
    for (const constraint of this.policy.constraints) {
      for (const bindings of this.constraintTargets(after, constraint, call)) {
        const key = bindings.map((binding) => binding.id).join(",");
        const group = groups.get(key) ?? { bindings, constraints: [] };
        group.constraints.push(constraint);
        groups.set(key, group);
      }
    }
    const candidates = Object.fromEntries(
      tool.repairable.map((name) => [name, this.repairValues(run, tool, name, { advice: decision.advice })]),
    );
    try {
      for (const { bindings, constraints } of groups.values()) {
        const result = await solver.repair({
          tool: { name: tool.name, parameters: tool.parameters, required: tool.required },
          arguments: proposed.arguments,
          constraints: constraints.map((constraint) => constraint.require),
          scope: after.scopeFor(bindings, proposed.arguments),
          repairable: tool.repairable,
          candidates,
        });
        if (result.status !== "repaired" || result.changed.length === 0) continue;
        const repaired = { name: proposed.name, arguments: result.arguments };
        if (this.decideOn(run, repaired, false).verdict === "allow") {
          decision.advice = { kind: "repair", call: repaired };
          break;
        }
      }
    } catch (error) {
      decision.failClosed = `the solver could not repair the call: ${error instanceof Error ? error.message : String(error)}`;
    }
    return decision;
  }

  /** The game template at a run (shared by every question about it). */
  private template(run: Run): StrategyTemplate {
    let template = this.templates.get(run);
    if (!template) {
      template = new StrategyTemplate(run, { ...this.options, exclude: lostInstances(run), game: this.game });
      this.templates.set(run, template);
    }
    return template;
  }

  private readonly templates = new WeakMap<Run, StrategyTemplate>();

  private decideOn(run: Run, proposed: ProposedCall, withAdvice: boolean): Decision {
    if (!this.policy.tools.has(proposed.name)) return this.undeclared(run, proposed, withAdvice);
    const call = proposedEvent(proposed);
    if (this.options.incremental === false || run.introducedBindings(call).length > 0)
      return this.decideByRuns(run, call, proposed, withAdvice);
    const template = this.template(run);
    const move = template.moveOf(call, run.outcomeCases(call.name, call.outcome));
    const exclude = lostInstances(run);
    const findings = new Findings();
    // Block rules: what each outcome of the call leaves possible (the game).
    const outcomes = this.outcomes(template, run.beliefs, move);
    if (this.blocked(outcomes.lost)) {
      outcomes.after.forEach((states, caseIndex) => {
        if (outcomes.lost[caseIndex]) findings.addLost(template, states);
      });
    }
    // Warn and record rules: noted when this call breaks one for good, whatever the outcome. Only
    // the instances the call is an event of change; the others were lost before (excluded) or not.
    const after = uniqueStates(outcomes.after.flat());
    for (const index of move.affected) {
      const instance = run.instances[index] as Instance;
      if (instance.rule.mode === "block" || exclude.has(index)) continue;
      if (after.every((state) => instance.rule.automaton.colour(state[index] as number) === "PERM_VIOL"))
        findings.addInstance(instance, instance.rule.mode);
    }
    if (this.constrains(call.name)) findings.addAll(this.constraintFindings(run.after(call, []), call));
    const judged = { proposed, call, findings, failClosed: outcomes.failClosed };
    return this.conclude(run, judged, withAdvice, (verdict) =>
      this.duties(template, verdict === "allow" ? after : run.beliefs),
    );
  }

  /** A tool the policy does not declare is blocked (fail closed): nothing says what it may do. */
  private undeclared(run: Run, proposed: ProposedCall, withAdvice: boolean): Decision {
    return {
      verdict: "block",
      call: proposed,
      violations: [],
      warnings: [],
      recorded: [],
      openDuties: withAdvice ? this.duties(this.template(run), run.beliefs) : [],
      failClosed: `${proposed.name} is not a tool of policy ${this.policy.name} (declare it under tools: to allow it)`,
    };
  }

  /**
   * Per outcome case of a move, the states after it from each belief, whether some of them
   * has no compliant finish, and whether a search gave up (the shield then fails closed).
   */
  private outcomes(
    template: StrategyTemplate,
    beliefs: readonly Int32Array[],
    move: CandidateCall,
  ): { after: Int32Array[][]; lost: boolean[]; failClosed: string | undefined } {
    let failClosed: string | undefined;
    const after = move.cases.map((_, caseIndex) =>
      uniqueStates(beliefs.map((belief) => template.step(belief, move, caseIndex))),
    );
    const lost = after.map((states) => {
      const distances = states.map((state) => template.distance(state));
      if (distances.includes(undefined)) failClosed = `the game search exceeded ${template.maxStates} states`;
      return distances.includes(Number.POSITIVE_INFINITY);
    });
    return { after, lost, failClosed };
  }

  /** Whether a call whose outcome cases are lost as given is blocked. */
  private blocked(lost: boolean[]): boolean {
    return this.options.strict ? lost.some(Boolean) : lost.every(Boolean);
  }

  /** The reference computation: the run rebuilt after the call, for each outcome and for all. */
  private decideByRuns(run: Run, call: ToolCallEvent, proposed: ProposedCall, withAdvice: boolean): Decision {
    const findings = new Findings();
    let failClosed: string | undefined;
    // Instances lost before this call stay out of the game, so an old violation does not block every later call.
    const exclude = lostInstances(run);
    const cases = run.outcomeCases(call.name, call.outcome);
    // One run per outcome, and one for all of them together, sharing what the call introduces.
    const runs = run.afterEach(call, [...cases.map((outcomeCase) => [outcomeCase]), cases]);
    const after = runs.pop() as Run;
    const template = new StrategyTemplate(after, { ...this.options, exclude, game: this.game });
    const lost = runs.map((outcome) => {
      const distances = outcome.beliefs.map((belief) => template.distance(belief));
      if (distances.includes(undefined)) failClosed = `the game search exceeded ${template.maxStates} states`;
      return distances.includes(Number.POSITIVE_INFINITY);
    });
    if (this.blocked(lost)) {
      runs.forEach((outcome, caseIndex) => {
        if (lost[caseIndex]) findings.addLost(template, outcome.beliefs);
      });
    }
    after.instances.forEach((instance, index) => {
      if (instance.rule.mode === "block" || exclude.has(index)) return;
      if (
        after.beliefs.every(
          (belief) => instance.rule.automaton.colour(belief[index] as number) === "PERM_VIOL",
        )
      )
        findings.addInstance(instance, instance.rule.mode);
    });
    findings.addAll(this.constraintFindings(after, call));
    return this.conclude(run, { proposed, call, findings, failClosed }, withAdvice, (verdict) => {
      const state = verdict === "allow" ? after : run;
      return this.duties(
        new StrategyTemplate(state, { ...this.options, exclude, game: this.game }),
        state.beliefs,
      );
    });
  }

  private constrains(tool: string): boolean {
    return this.policy.constraints.some((constraint) => constraint.on.tool === tool);
  }

  /** Argument constraints, decided on the concrete arguments (`after` is the run with the call). */
  private constraintFindings(after: Run, call: ToolCallEvent): RuleFinding[] {
    const found: RuleFinding[] = [];
    for (const constraint of this.policy.constraints) {
      for (const bindings of this.constraintTargets(after, constraint, call)) {
        if (!holdsIn(constraint.require, after.scopeFor(bindings, call.arguments))) {
          found.push(finding(constraint.id, constraint.sentence, constraint.mode, "constraint", bindings));
        }
      }
    }
    return found;
  }

  private conclude(
    run: Run,
    { proposed, call, findings, failClosed }: Judged,
    withAdvice: boolean,
    duties: (verdict: Decision["verdict"]) => Duty[],
  ): Decision {
    const all = findings.list();
    const violations = all.filter((finding) => finding.mode === "block");
    const verdict = violations.length > 0 || failClosed !== undefined ? "block" : "allow";
    const decision: Decision = {
      verdict,
      call: proposed,
      violations,
      warnings: all.filter((finding) => finding.mode === "warn"),
      recorded: all.filter((finding) => finding.mode === "record"),
      openDuties: [],
    };
    if (failClosed !== undefined) decision.failClosed = failClosed;
    if (!withAdvice) return decision;
    decision.openDuties = duties(verdict);
    if (verdict === "block") {
      const onlyArguments =
        violations.length > 0 && violations.every((finding) => finding.kind === "constraint");
      const advice =
        (onlyArguments ? this.repair(run, proposed) : undefined) ?? this.prerequisite(run, call, violations);
      if (advice) decision.advice = advice;
    }
    return decision;
  }

  next(history: unknown): NextAnswer {
    const run = this.run(history);
    const template = this.template(run);
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
    const calls = template.candidates.map((candidate) => ({
      call: { name: candidate.tool, arguments: candidate.arguments },
      class: classOf(candidate),
    }));
    const tools = [...this.policy.tools.keys()].map((name) => {
      const own = calls.filter((entry) => entry.call.name === name);
      const progressing = own.some((entry) => entry.class === "progressing");
      // A tool is unsafe only if every call of it is: its known bindings and a binding not seen yet.
      const unsafe =
        own.length > 0 && own.every((entry) => entry.class === "unsafe") && this.freshCallUnsafe(run, name);
      return { name, class: (unsafe ? "unsafe" : progressing ? "progressing" : "neutral") as CallClass };
    });
    const accepting = run.beliefs.every((belief) => template.isAccepting(belief));
    const openDuties = this.duties(template, run.beliefs);
    const answer: NextAnswer = {
      done: { allowed: accepting, progressing: accepting },
      tools,
      calls,
      arguments: mergeArgumentValues(argumentValues(calls), this.constrainedValues(run, calls, openDuties)),
      openDuties,
      gameStates: { explored: template.statesExplored - exploredBefore, known: template.knownStates },
    };
    if (failClosed !== undefined) answer.failClosed = failClosed;
    return answer;
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
      const values = this.repairValues(run, tool, argument, {
        advice: advice && { kind: "prerequisite", call: advice },
      }).filter((value) =>
        typeof type === "object"
          ? type.enum.some((member) => valuesEqual(member, value))
          : fitsDeclared(value, type),
      );
      const entry = { tool: tool.name, argument, unsafe: [] as Value[], progressing: [] as Value[] };
      for (const value of values) {
        let unsafe = true;
        let progressing = false;
        for (const { call, class: callClass } of considered) {
          const proposed = { name: tool.name, arguments: { ...call.arguments, [argument]: value } };
          const decision = this.decideOn(run, proposed, false);
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
      for (const constraint of this.policy.constraints) {
        const tool = this.policy.tools.get(constraint.on.tool);
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

  private constrained: [string, ToolSpec, Set<string>][] | undefined;

  /**
   * Open duties at `beliefs`: enforced rule instances that do not accept, each with a call that
   * helps if one is known. Kept per template and beliefs array (every blocked call on a run asks
   * for the run's own); callers get their own copies.
   */
  private duties(template: StrategyTemplate, beliefs: readonly Int32Array[]): Duty[] {
    const byBeliefs = this.dutiesByTemplate.get(template) ?? new WeakMap<readonly Int32Array[], Duty[]>();
    this.dutiesByTemplate.set(template, byBeliefs);
    let duties = byBeliefs.get(beliefs);
    if (!duties) {
      duties = this.openDuties(template, beliefs);
      byBeliefs.set(beliefs, duties);
    }
    return duties.map((duty) => ({ ...duty }));
  }

  private readonly dutiesByTemplate = new WeakMap<StrategyTemplate, WeakMap<readonly Int32Array[], Duty[]>>();

  private openDuties(template: StrategyTemplate, beliefs: readonly Int32Array[]): Duty[] {
    const duties: Duty[] = [];
    const helpers = helpingCandidates(template);
    template.run.instances.forEach((instance, index) => {
      if (instance.rule.mode === "record") return;
      const open = beliefs.find((belief) => !instance.rule.automaton.isAccepting(belief[index] as number));
      if (!open) return;
      const duty: Duty = {
        rule: instance.rule.id,
        sentence: instance.rule.sentence,
        colour: instance.rule.automaton.colour(open[index] as number),
      };
      Object.assign(duty, bindingField(instance.bindings));
      // A progressing call on the duty's own bindings (it may touch the rule only later, like a
      // distance check before the booking that fulfils "book the trip").
      const fulfil = template.firstProgressing(open, helpers[index] as CandidateCall[]);
      if (fulfil) duty.fulfil = { name: fulfil.tool, arguments: fulfil.arguments };
      duties.push(duty);
    });
    return duties;
  }

  /** Bindings for which the constraint applies to the call (its proposition's `when` holds). */
  private constraintTargets(run: Run, constraint: ConstraintSpec, call: ToolCallEvent): Binding[][] {
    const proposition = constraint.on;
    if (proposition.tool !== call.name) return [];
    const combinations = proposition.entities.reduce<Binding[][]>(
      (product, entity) =>
        product.flatMap((prefix) =>
          run.bindings.filter((binding) => binding.entity === entity).map((binding) => [...prefix, binding]),
        ),
      [[]],
    );
    return combinations.filter(
      (bindings) => !proposition.when || holdsIn(proposition.when, run.scopeFor(bindings, call.arguments)),
    );
  }

  /**
   * What to do first instead of a blocked call: a safe call after which (for some outcome) the
   * blocked call would be allowed, preferably one for a binding the blocked call names; failing
   * that, one after which fewer of the rules that block it still do and one more call can allow
   * it (the first of two checks it needs); failing that, a call that progresses towards finishing.
   */
  private prerequisite(
    run: Run,
    call: ToolCallEvent,
    violations: readonly RuleFinding[],
  ): Advice | undefined {
    const template = this.template(run);
    const named = new Set(run.namedBindings(call).map((binding) => binding.id));
    const { classes, safe } = candidateClasses(template);
    // A prerequisite acts on the bindings the blocked call names (or on none).
    const related = safe.filter(
      (candidate) => candidate.binding === undefined || named.has(candidate.binding.id),
    );
    const proposed = { name: call.name, arguments: call.arguments };
    // The template judges from the run's states when the letters and instances stay those of
    // the run: no history function decides a letter and the call introduces no binding.
    const move =
      this.options.incremental !== false &&
      !readsHistory(this.policy) &&
      run.introducedBindings(call).length === 0
        ? template.moveOf(call, run.outcomeCases(call.name, call.outcome))
        : undefined;
    const enabler = related.find((candidate) =>
      candidate.cases.some((outcomeCase, caseIndex) =>
        move
          ? this.allowedAfter(run, template, candidate, caseIndex, call, move)
          : this.decideOn(run.after(candidateEvent(candidate), [outcomeCase]), proposed, false).verdict ===
            "allow",
      ),
    );
    // A step: after it, fewer of the same rules block the call, and one more call can allow it.
    const blocking = new Set(violations.map((finding) => finding.rule));
    const allowedAfterOneMore = (after: Run): boolean =>
      related.some((candidate) =>
        candidate.cases.some(
          (outcomeCase) =>
            this.decideOn(after.after(candidateEvent(candidate), [outcomeCase]), proposed, false).verdict ===
            "allow",
        ),
      );
    const step =
      enabler ??
      (blocking.size > 1
        ? related.find((candidate) =>
            candidate.cases.some((outcomeCase) => {
              const after = run.after(candidateEvent(candidate), [outcomeCase]);
              const decision = this.decideOn(after, proposed, false);
              const still = decision.violations.map((finding) => finding.rule);
              return (
                decision.failClosed === undefined &&
                still.length < blocking.size &&
                still.every((rule) => blocking.has(rule)) &&
                allowedAfterOneMore(after)
              );
            }),
          )
        : undefined);
    const progressing = (candidate: CandidateCall): boolean =>
      classes.get(candidate)?.every((entry) => entry === "progressing") ?? false;
    const chosen = step ?? related.find(progressing) ?? safe.find(progressing);
    if (chosen === undefined) return undefined;
    const advice: Advice = { kind: "prerequisite", call: { name: chosen.tool, arguments: chosen.arguments } };
    if (chosen === step) advice.unblocks = true;
    return advice;
  }

  /** Whether a call (with its move) would be allowed after a candidate call with one of its outcomes. */
  private allowedAfter(
    run: Run,
    template: StrategyTemplate,
    candidate: CandidateCall,
    caseIndex: number,
    call: ToolCallEvent,
    move: CandidateCall,
  ): boolean {
    const event = candidateEvent(candidate);
    const rebuilt = (): boolean =>
      this.decideOn(run.after(event, [candidate.cases[caseIndex] as OutcomeCase]), call, false).verdict ===
      "allow";
    if (run.introducedBindings(event).length > 0) return rebuilt();
    const step = this.enablerMove(template, candidate, event, caseIndex);
    const masks = step.effects[0] as Int32Array;
    // Instances the candidate loses for good would leave the game for the call: rebuild then.
    const exclude = lostInstances(run);
    const losesMore = step.affected.some((index, position) => {
      const automaton = (run.instances[index] as Instance).rule.automaton;
      return (
        !exclude.has(index) &&
        run.beliefs.every(
          (belief) =>
            automaton.colour(automaton.step(belief[index] as number, masks[position] as number)) ===
            "PERM_VIOL",
        )
      );
    });
    if (losesMore) return rebuilt();
    // The call's outcomes after the candidate's, judged from the components the two touch.
    let failClosed = false;
    const lost = move.cases.map((_, moveCase) => {
      const steps = [
        { move: step, caseIndex: 0 },
        { move, caseIndex: moveCase },
      ];
      const distances = run.beliefs.map((belief) => template.distanceAfterSteps(belief, steps));
      if (distances.includes(undefined)) failClosed = true;
      return distances.includes(Number.POSITIVE_INFINITY);
    });
    if (failClosed || this.blocked(lost)) return false;
    if (!this.constrains(call.name)) return true;
    return this.constraintFindings(run.after(event, []).after(call, []), call).every(
      (found) => found.mode !== "block",
    );
  }

  /** A candidate's move for one outcome case, read from its concrete arguments (letters may differ from the abstract choice). */
  private enablerMove(
    template: StrategyTemplate,
    candidate: CandidateCall,
    event: ToolCallEvent,
    caseIndex: number,
  ): CandidateCall {
    let moves = this.enablerMoves.get(candidate);
    if (!moves) {
      const joint = template.moveOf(event, candidate.cases);
      moves = candidate.cases.map((outcomeCase, index) => ({
        ...joint,
        cases: [outcomeCase],
        effects: [joint.effects[index] as Int32Array],
      }));
      this.enablerMoves.set(candidate, moves);
    }
    return moves[caseIndex] as CandidateCall;
  }

  /** Per candidate (candidates belong to one instance array, so to runs of one task): its moves per outcome case. */
  private readonly enablerMoves = new WeakMap<CandidateCall, CandidateCall[]>();

  /**
   * The same call with the fewest repairable arguments changed so that every constraint holds
   * and no rule is broken; candidate values come from the argument's enum, the task and earlier calls.
   */
  private repair(run: Run, proposed: ProposedCall): Advice | undefined {
    const tool = this.policy.tools.get(proposed.name);
    if (!tool) return undefined;
    const options = tool.repairable.map((name) => ({
      name,
      values: this.repairValues(run, tool, name).filter(
        (value) => !valuesEqual(value, proposed.arguments[name] ?? null),
      ),
    }));
    // One changed argument first, then two.
    const attempts: Record<string, Value>[] = [];
    for (const option of options) for (const value of option.values) attempts.push({ [option.name]: value });
    options.forEach((first, index) => {
      for (const second of options.slice(index + 1)) {
        for (const a of first.values)
          for (const b of second.values) attempts.push({ [first.name]: a, [second.name]: b });
      }
    });
    for (const change of attempts) {
      const candidate = { name: proposed.name, arguments: { ...proposed.arguments, ...change } };
      if (this.decideOn(run, candidate, false).verdict === "allow")
        return { kind: "repair", call: candidate };
    }
    return undefined;
  }

  /**
   * Values a repair of an argument prefers: the enum's members (true and false for a boolean), the task's scalar fields, and
   * the values the tool's earlier calls gave it; for the solver (`more`) also the advised call's
   * value and the scalar fields of earlier outcomes (what lookups returned).
   */
  private repairValues(
    run: Run,
    tool: ToolSpec,
    name: string,
    more?: { advice: Advice | undefined },
  ): Value[] {
    const parameter = tool.parameters.find((candidate) => candidate.name === name);
    const values: Value[] = [];
    const push = (value: Value | undefined): void => {
      if (value !== undefined && !values.some((known) => valuesEqual(known, value))) values.push(value);
    };
    if (parameter && typeof parameter.type === "object")
      for (const member of parameter.type.enum) push(member);
    // A boolean has two values: both are candidates, declared as an enum or not.
    if (parameter?.type === "boolean") for (const member of [true, false]) push(member);
    for (const call of run.task)
      for (const value of Object.values(call.arguments)) if (typeof value !== "object") push(value);
    for (const call of run.calls) if (call.name === tool.name) push(call.arguments[name]);
    if (!more) return values;
    push(more.advice?.call.arguments[name]);
    for (const call of run.calls) {
      const outcome = call.outcome.kind === "json" ? call.outcome.value : null;
      if (outcome === null || typeof outcome !== "object" || Array.isArray(outcome)) continue;
      for (const value of Object.values(outcome))
        if (value === null || typeof value !== "object") push(value);
    }
    return values;
  }

  /** Whether a call of `tool` for a binding not seen yet would be blocked whatever its outcome. */
  private freshCallUnsafe(run: Run, tool: string): boolean {
    const proposition = [...this.policy.propositions.values()].find(
      (candidate) =>
        candidate.tool === tool &&
        candidate.entities.length === 1 &&
        Object.keys(candidate.bindingPattern).length > 0,
    );
    if (!proposition) return true;
    // A fresh binding starts its own instances from scratch: the answer depends only on the task and
    // on the rules without entities.
    const global = run.globalInstances();
    const key = JSON.stringify([
      tool,
      run.task,
      run.beliefs.map((belief) => global.map((index) => belief[index])),
    ]);
    const known = this.freshCalls.get(key);
    if (known !== undefined) return known;
    // Argument values no binding can have, so the call introduces a new one.
    const args: Record<string, Value> = {};
    for (const [variable, path] of Object.entries(proposition.bindingPattern)) {
      args[String(path[0])] = `\u0000unseen ${variable}`;
    }
    const unsafe = this.decideOn(run, { name: tool, arguments: args }, false).verdict === "block";
    if (this.freshCalls.size > RUN_CACHE_SIZE * 16) this.freshCalls.clear();
    this.freshCalls.set(key, unsafe);
    return unsafe;
  }
}

/** Instances permanently violated in every belief: nothing the agent does can repair them. */
function lostInstances(run: Run): Set<number> {
  let lost = lostByRun.get(run);
  if (!lost) {
    const found = new Set<number>();
    run.instances.forEach((instance, index) => {
      const automaton = instance.rule.automaton;
      if (run.beliefs.every((belief) => automaton.colour(belief[index] as number) === "PERM_VIOL"))
        found.add(index);
    });
    lost = found;
    lostByRun.set(run, lost);
  }
  return lost;
}

const lostByRun = new WeakMap<Run, Set<number>>();

/** The classes of the template's candidates at its run's beliefs, and the candidates no belief makes unsafe. */
function candidateClasses(template: StrategyTemplate): {
  classes: Map<CandidateCall, (CallClass | undefined)[]>;
  safe: CandidateCall[];
} {
  let known = classesByTemplate.get(template);
  if (!known) {
    const classes = new Map(
      template.candidates.map((candidate) => [
        candidate,
        template.run.beliefs.map((belief) => template.classifyCandidate(belief, candidate)),
      ]),
    );
    const safe = template.candidates.filter(
      (candidate) => !classes.get(candidate)?.some((entry) => entry === "unsafe" || entry === undefined),
    );
    known = { classes, safe };
    classesByTemplate.set(template, known);
  }
  return known;
}

const classesByTemplate = new WeakMap<
  StrategyTemplate,
  { classes: Map<CandidateCall, (CallClass | undefined)[]>; safe: CandidateCall[] }
>();

/** Whether a proposition's predicates read the history (then a call's letters depend on it). */
function readsHistory(policy: Policy): boolean {
  let reads = historyReaders.get(policy);
  if (reads === undefined) {
    reads = [...policy.propositions.values()].some((proposition) =>
      [proposition.when, proposition.outcome].some(
        (expression) =>
          expression !== undefined &&
          referencesOf(expression).some((reference) => HISTORY_FUNCTIONS.has(reference.kind)),
      ),
    );
    historyReaders.set(policy, reads);
  }
  return reads;
}

const HISTORY_FUNCTIONS = new Set(["last", "held", "count", "values"]);
const historyReaders = new WeakMap<Policy, boolean>();

/**
 * Per instance, the candidates that may fulfil its duty, in candidate order: those on its own
 * bindings, and for candidates without a binding, those it is an event of. Instances with the
 * same helpers share one array (the template memoizes answers per array).
 */
function helpingCandidates(template: StrategyTemplate): CandidateCall[][] {
  let helpers = helpersByCandidates.get(template.candidates);
  if (!helpers) {
    const shared = new Map<string, CandidateCall[]>();
    helpers = template.run.instances.map((instance, index) => {
      const ids = new Set(instance.bindings.map((binding) => binding.id));
      const positions = template.candidates.flatMap((candidate, position) =>
        (candidate.binding === undefined ? candidate.affected.includes(index) : ids.has(candidate.binding.id))
          ? [position]
          : [],
      );
      const key = positions.join(",");
      const list =
        shared.get(key) ?? positions.map((position) => template.candidates[position] as CandidateCall);
      shared.set(key, list);
      return list;
    });
    helpersByCandidates.set(template.candidates, helpers);
  }
  return helpers;
}

const helpersByCandidates = new WeakMap<readonly CandidateCall[], CandidateCall[][]>();

/** The call a candidate stands for, one object per candidate (runs memoize what they read from a call by the object). */
function candidateEvent(candidate: CandidateCall): ToolCallEvent {
  let event = candidateEvents.get(candidate);
  if (!event) {
    event = {
      id: "advice",
      name: candidate.tool,
      arguments: candidate.arguments,
      outcome: { kind: "pending" },
    };
    candidateEvents.set(candidate, event);
  }
  return event;
}

const candidateEvents = new WeakMap<CandidateCall, ToolCallEvent>();

function proposedEvent(proposed: ProposedCall): ToolCallEvent {
  return { id: "proposed", name: proposed.name, arguments: proposed.arguments, outcome: { kind: "pending" } };
}

/** States without repeats (by content), in first-seen order. */
function uniqueStates(states: Int32Array[]): Int32Array[] {
  if (states.length < 2) return states;
  const unique: Int32Array[] = [];
  for (const state of states) if (!unique.some((known) => sameState(known, state))) unique.push(state);
  return unique;
}

function sameState(left: Int32Array, right: Int32Array): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false;
  return true;
}

/** A call judged, before its advice and duties. */
interface Judged {
  proposed: ProposedCall;
  call: ToolCallEvent;
  findings: Findings;
  failClosed: string | undefined;
}

/** A decision's findings, one per rule and binding. */
class Findings {
  private readonly byKey = new Map<string, RuleFinding>();

  add(found: RuleFinding): void {
    this.byKey.set(`${found.rule}|${found.binding ?? ""}`, found);
  }

  addAll(found: RuleFinding[]): void {
    for (const entry of found) this.add(entry);
  }

  addInstance(instance: Instance, mode: Mode): void {
    this.add(finding(instance.rule.id, instance.rule.sentence, mode, "temporal", instance.bindings));
  }

  /** The rules to blame in states with no compliant finish. */
  addLost(template: StrategyTemplate, states: readonly Int32Array[]): void {
    for (const state of states) {
      if (template.distance(state) !== Number.POSITIVE_INFINITY) continue;
      const doomed = template.doomedInstances(state);
      // A trap without a single doomed rule: every rule with an open duty shares the blame.
      for (const index of doomed.length > 0 ? doomed : template.openInstances(state))
        this.addInstance(template.run.instances[index] as Instance, "block");
    }
  }

  list(): RuleFinding[] {
    return [...this.byKey.values()];
  }
}

function finding(
  rule: string,
  sentence: string,
  mode: Mode,
  kind: RuleFinding["kind"],
  bindings: readonly Binding[],
): RuleFinding {
  return { rule, sentence, mode, kind, ...bindingField(bindings) };
}

function bindingField(bindings: readonly Binding[]): { binding?: string } {
  const binding = bindingText(bindings);
  return binding === undefined ? {} : { binding };
}

/** `route(x="Toronto", y="Chicago")`, kept per bindings array (an instance's, asked on every decision). */
function bindingText(bindings: readonly Binding[]): string | undefined {
  if (bindings.length === 0) return undefined;
  let text = bindingTexts.get(bindings);
  if (text === undefined) {
    text = bindings.map(describeBinding).join(", ");
    bindingTexts.set(bindings, text);
  }
  return text;
}

const bindingTexts = new WeakMap<readonly Binding[], string>();

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

/** The top-level argument names an expression reads (`a.x`, `a.x.y` → `x`). */
function argumentsRead(expression: Expression | undefined): string[] {
  if (!expression) return [];
  return referencesOf(expression).flatMap((reference) =>
    reference.kind === "arguments" && typeof reference.path[0] === "string" ? [reference.path[0]] : [],
  );
}

/** The cache key of a history: its JSON, or undefined when it has none (reading it then reports what is wrong). */
function historyKey(history: unknown): string | undefined {
  try {
    return JSON.stringify(history);
  } catch {
    return undefined;
  }
}

function isTrace(value: unknown): value is Trace {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    "calls" in value &&
    "task" in value
  );
}

/** Blocked by argument constraints alone, and no candidate value repaired it: the solver may. */
export function needsSolver(decision: Decision): boolean {
  return (
    decision.verdict === "block" &&
    decision.advice?.kind !== "repair" &&
    decision.violations.length > 0 &&
    decision.violations.every((finding) => finding.kind === "constraint")
  );
}
