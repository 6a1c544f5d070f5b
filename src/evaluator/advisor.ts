import { isHistoryFunctionName, referencesOf, type Value, valuesEqual } from "../expression/index.js";
import { aimedAmong, type CandidateCall, type StrategyTemplate } from "../game/index.js";
import type { ConstraintSpec, ToolSpec } from "../policy/index.js";
import type { Binding, Instance, OutcomeCase, Run, ToolCallEvent } from "../run/index.js";
import type { SolverClient } from "../smt/index.js";
import { argumentLimits } from "./argument-limits.js";
import { blockedForGood } from "./blocked-for-good.js";
import { SearchBudget } from "./budget.js";
import { fillArguments, unknownArguments, withKnownArguments } from "./fill.js";
import type { Judge } from "./judge.js";
import { fittedLists } from "./list-repair.js";
import { boundValues, nearestFirst } from "./nearest.js";
import { requestedWays } from "./requested.js";
import { type Advice, type Decision, type ProposedCall, proposedEvent, type RuleFinding } from "./types.js";

/**
 * Advice for a blocked call: the same call with repaired arguments (from candidate values, or
 * from the solver), a prerequisite call to make first, or an alternative to it.
 */
export class Advisor {
  // Keyed by candidate: candidates belong to the game's instance arrays, and their moves and calls go with them.
  private readonly enablerMoves = new WeakMap<CandidateCall, CandidateCall[]>();
  private readonly madeEvents = new WeakMap<Run, Map<CandidateCall, MadeCall>>();
  private readonly candidateEvents = new WeakMap<
    CandidateCall,
    Map<OutcomeCase | undefined, ToolCallEvent>
  >();
  private historyRead: boolean | undefined;

  constructor(private readonly judge: Judge) {}

  /**
   * The same call with the fewest repairable arguments changed so that every constraint holds
   * and no rule is broken; candidate values come from the argument's enum, the task, earlier
   * calls and, for a number, the bounds the constraints compare it with, a number's nearest the
   * proposed value first (`nearestFirst`). Each attempt spends one decision of `budget`.
   */
  repair(run: Run, proposed: ProposedCall, budget: SearchBudget): Advice | undefined {
    const tool = this.judge.policy.tools.get(proposed.name);
    if (!tool) return undefined;
    const isList = (name: string) =>
      tool.parameters.find((parameter) => parameter.name === name)?.type === "array";
    const lists = tool.repairable.filter(isList);
    if (lists.length > 0) {
      const limits = new Map(
        argumentLimits(this.judge, run, proposed.name).map((entry) => [entry.argument, entry.limits]),
      );
      const fitted = fittedLists(proposed.arguments, limits, lists);
      if (fitted && budget.spend()) {
        const candidate = { name: proposed.name, arguments: { ...proposed.arguments, ...fitted } };
        if (this.judge.decide(run, candidate, false).verdict === "allow")
          return { kind: "repair", call: candidate };
      }
    }
    const options = tool.repairable
      .filter((name) => !isList(name))
      .map((name) => ({
        name,
        values: this.repairOrder(run, tool, name, proposed).filter(
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
      if (!budget.spend()) return undefined;
      const candidate = { name: proposed.name, arguments: { ...proposed.arguments, ...change } };
      if (this.judge.decide(run, candidate, false).verdict === "allow")
        return { kind: "repair", call: candidate };
    }
    return undefined;
  }

  /**
   * `decision` (of `proposed` on `run`), and for a call blocked only by argument constraints that
   * the concrete search could not repair, a repair from the solver: only the tool's repairable
   * arguments change, preferring values from the enum, the task, the history and the advice. The
   * solver's answer must pass `decide` before it becomes the advice. A solver timeout or error
   * leaves the call blocked and says so in `failClosed`.
   */
  async repairWithSolver(
    run: Run,
    proposed: ProposedCall,
    decision: Decision,
    solver: SolverClient,
  ): Promise<Decision> {
    const tool = this.judge.policy.tools.get(proposed.name);
    const onlyArguments =
      decision.violations.length > 0 && decision.violations.every((found) => found.kind === "constraint");
    if (!tool || tool.repairable.length === 0 || !onlyArguments || decision.advice?.kind === "repair")
      return decision;
    const call = proposedEvent(proposed);
    // The scope `decide` judges the call in: the history before it, the bindings it introduces.
    const at = run.atCall(call);
    // The solver takes one scope per request: constraints are grouped by the bindings they apply for.
    const groups = new Map<string, { bindings: Binding[]; constraints: ConstraintSpec[] }>();
    for (const constraint of this.judge.policy.constraints) {
      for (const bindings of this.judge.constraintTargets(run, constraint, call)) {
        const key = bindings.map((binding) => binding.id).join(",");
        const group = groups.get(key) ?? { bindings, constraints: [] };
        group.constraints.push(constraint);
        groups.set(key, group);
      }
    }
    const candidates = Object.fromEntries(
      tool.repairable.map((name) => [
        name,
        this.repairOrder(run, tool, name, proposed, { advice: decision.advice }),
      ]),
    );
    try {
      for (const { bindings, constraints } of groups.values()) {
        const result = await solver.repair({
          tool: { name: tool.name, parameters: tool.parameters, required: tool.required },
          arguments: proposed.arguments,
          constraints: constraints.map((constraint) => constraint.require),
          scope: at.scopeFor(bindings, proposed.arguments),
          repairable: tool.repairable,
          candidates,
        });
        if (result.status !== "repaired" || result.changed.length === 0) continue;
        const repaired = { name: proposed.name, arguments: result.arguments };
        if (this.judge.decide(run, repaired, false).verdict === "allow") {
          decision.advice = { kind: "repair", call: repaired };
          break;
        }
      }
    } catch (error) {
      decision.failClosed = `the solver could not repair the call: ${error instanceof Error ? error.message : String(error)}`;
    }
    return decision;
  }

  /** A repair's candidate values (`repairValues` and the constraints' bounds), nearest the proposed value first. */
  private repairOrder(
    run: Run,
    tool: ToolSpec,
    name: string,
    proposed: ProposedCall,
    more?: { advice: Advice | undefined },
  ): Value[] {
    return nearestFirst(
      [...repairValues(run, tool, name, more), ...boundValues(this.judge.policy, tool, name)],
      proposed.arguments[name],
    );
  }

  /**
   * What to do about a blocked call other than repairing it: a safe call after which (for some
   * outcome) the blocked call would be allowed, on the bindings of the rules it is an event of;
   * failing that, one after which fewer of the rules that block it still do and one more call can
   * allow it (the first of two checks it needs) — both prerequisites that unblock it; failing
   * that, a call that progresses towards finishing: a prerequisite if fewer of the same rules
   * block the call after it, else an alternative. Never the blocked call itself; the advised
   * call's required arguments are filled (`fillArguments`). Every hypothetical decision spends
   * one of `budget`; once it is spent no further step is tried (a progressing call may still be
   * advised, without `unblocks`). `towardAsked`: a blocked call that serves a duty another way than
   * the request asked for gets that way (`askedInstead`) before a progressing call.
   */
  prerequisite(
    run: Run,
    call: ToolCallEvent,
    violations: readonly RuleFinding[],
    budget: SearchBudget,
    towardAsked = true,
  ): Advice | undefined {
    const template = this.judge.template(run);
    const named = relatedBindings(run, call);
    const onNamed = aimedAmong(named);
    const beliefClasses = template.classesAtBeliefs();
    const classes = beliefClasses.classes;
    // Bindings that differ only in their task call (a route asked for by train and by plane)
    // give the same concrete call: it is judged once. The blocked call itself (its arguments
    // those of a candidate, and maybe more) is never its own advice. A candidate that leaves out
    // an argument naming another entity is judged as the agent would make it, with the known value
    // (an order's lookup by the user the task names: allowed once that user is logged in, where
    // the lookup by no user stays blocked).
    const allowedNow = (candidates: readonly CandidateCall[]): CandidateCall[] =>
      distinctCalls(candidates).filter((candidate) => {
        if (isSameCall(candidate, call)) return false;
        const made = this.madeEvent(run, candidate);
        return made === this.candidateEvent(candidate)
          ? !this.judge.blocksWithNewBinding(run, made)
          : budget.spend() && this.judge.decide(run, made, false).verdict === "allow";
      });
    // A prerequisite acts on the bindings of the rules the blocked call is an event of (or on none).
    // Calls the agent can make with what is known come first: of two checks that unblock a call
    // (an account's existence, a login), the one whose arguments nobody has to ask for.
    const safeOnNamed = beliefClasses.safe.filter(onNamed);
    const related = executableFirst(
      allowedNow(safeOnNamed),
      (candidate) =>
        unknownArguments(
          this.judge,
          run,
          { name: candidate.tool, arguments: candidate.arguments },
          candidate.bindings,
        ).length === 0,
    );
    const proposed = { name: call.name, arguments: call.arguments };
    // The template judges from the run's states when the letters and instances stay those of
    // the run: no history function decides a letter and the call introduces no binding.
    const move =
      this.judge.options.incremental !== false &&
      !this.readsHistory() &&
      run.introducedBindings(call).length === 0
        ? template.moveOf(call, run.expectedCases(call))
        : undefined;
    // A call blocked by rules of order is unblocked by a step after which only its own arguments
    // (constraints, which a repair changes) still block it.
    const ordered = violations.some((finding) => finding.kind === "temporal");
    const enabler = related.find((candidate) =>
      candidate.cases.some(
        (outcomeCase, caseIndex) =>
          budget.spend() &&
          (move
            ? this.allowedAfter(run, template, candidate, caseIndex, call, move, ordered)
            : this.clearsAfter(
                run,
                run.after(this.madeEvent(run, candidate, outcomeCase), [outcomeCase]),
                proposed,
                ordered,
              )),
      ),
    );
    // A step: after it, fewer of the same rules block the call, and one more call can allow it.
    const blocking = new Set(violations.map((finding) => finding.rule));
    const lessBlocked = (after: Run): boolean => {
      const decision = this.judge.decide(after, proposed, false);
      const still = decision.violations.map((finding) => finding.rule);
      return (
        decision.failClosed === undefined &&
        still.length < blocking.size &&
        still.every((rule) => blocking.has(rule))
      );
    };
    // The second call: one allowed now, or one the first step allows (an order's lookup by the
    // user, after the user's login).
    const later = [
      ...related,
      ...distinctCalls(safeOnNamed).filter(
        (candidate) =>
          !related.includes(candidate) && this.madeEvent(run, candidate) !== this.candidateEvent(candidate),
      ),
    ];
    const allowedAfterOneMore = (after: Run, spend: () => boolean): boolean =>
      later.some(
        (candidate) =>
          (related.includes(candidate) ||
            (spend() &&
              this.judge.decide(after, this.madeEvent(run, candidate), false).verdict === "allow")) &&
          candidate.cases.some(
            (outcomeCase) =>
              spend() &&
              this.judge.decide(
                after.after(this.madeEvent(run, candidate, outcomeCase), [outcomeCase]),
                proposed,
                false,
              ).verdict === "allow",
          ),
      );
    // Several rules block it: the steps after which fewer of them block (a login before a
    // cancellation that also needs the order checked), unless a rule blocks it whatever comes first.
    const whole =
      move ??
      (run.introducedBindings(call).length === 0
        ? template.moveOf(call, run.expectedCases(call))
        : undefined);
    const forGood =
      enabler === undefined &&
      whole !== undefined &&
      this.judge.blocked(whole.cases.map((_, caseIndex) => blockedForGood(run, whole, caseIndex)));
    const fewerSteps =
      enabler === undefined && blocking.size > 1 && !forGood
        ? related.filter((candidate) =>
            candidate.cases.some(
              (outcomeCase) =>
                budget.spend() &&
                lessBlocked(run.after(this.madeEvent(run, candidate, outcomeCase), [outcomeCase])),
            ),
          )
        : [];
    // The one after which one more call allows it unblocks it (within a share of the budget, so
    // that the searches after it keep theirs); else the first of them is the step toward it, and
    // the bounded search for a sequence starts from it only (from every allowed call, a policy
    // with many tools cuts it before three steps).
    const oneMore = budget.part(STEP_DECISIONS, "the search for a step that one more call completes");
    const step =
      enabler ??
      fewerSteps.find((candidate) =>
        candidate.cases.some((outcomeCase) => {
          if (!oneMore()) return false;
          const after = run.after(this.madeEvent(run, candidate, outcomeCase), [outcomeCase]);
          return lessBlocked(after) && allowedAfterOneMore(after, oneMore);
        }),
      );
    const fewer = step === undefined ? fewerSteps[0] : undefined;
    // No single step: the first of the shortest sequence of steps after which the call is allowed.
    const searched =
      step === undefined && ordered && !forGood
        ? this.firstOfSequence(run, template, fewer ? [fewer] : related, onNamed, call, whole, budget)
        : undefined;
    const sequence = searched !== "cut" ? searched : undefined;
    // The way the request asked for, where the blocked call serves a duty another way (a renewal
    // while refills remain: the dispense, or the step that unblocks it).
    const asked =
      towardAsked && step === undefined && sequence === undefined
        ? this.askedInstead(run, template, call, budget)
        : undefined;
    if (asked?.advice) return asked.advice;
    // A constraint that reads what a lookup not made yet would answer: the lookup first.
    const reading =
      step === undefined && sequence === undefined
        ? this.readFirst(run, proposed, violations, named, onNamed, allowedNow(beliefClasses.safe), budget)
        : undefined;
    if (reading) return reading;
    const progressing = (candidate: CandidateCall): boolean =>
      classes.get(candidate)?.every((entry) => entry === "progressing") ?? false;
    const chosen =
      step ??
      sequence?.first ??
      fewer ??
      related.find(progressing) ??
      allowedNow(beliefClasses.safe).find(progressing);
    if (chosen === undefined) return undefined;
    const filled = fillArguments(
      this.judge,
      run,
      { name: chosen.tool, arguments: chosen.arguments },
      chosen.bindings,
      budget,
      { for: proposed },
    );
    // A progressing call after which fewer of the same rules block the call is a step toward it
    // (a lookup before a dispense that also needs a check), not another way (`fewer` is one by
    // construction: not judged again, nor charged to the budget).
    const toward =
      chosen === fewer ||
      (chosen !== step &&
        chosen !== sequence?.first &&
        chosen.cases.some(
          (outcomeCase) =>
            budget.spend() && lessBlocked(run.after(this.madeEvent(run, chosen, outcomeCase), [outcomeCase])),
        ));
    const advice: Advice =
      chosen === step
        ? { kind: "prerequisite", call: filled.call, unblocks: true }
        : chosen === sequence?.first
          ? { kind: "prerequisite", call: filled.call, unblocks: true, steps: sequence.steps }
          : { kind: toward ? "prerequisite" : "alternative", call: filled.call };
    if (filled.missing.length > 0) advice.missing = filled.missing;
    if (advice.kind === "alternative" && asked?.blockedIsAsked)
      advice.reason = `${call.name} is the way the request asked for, and no call makes it allowed now (${violations.map((finding) => finding.rule).join(", ")})`;
    return advice;
  }

  /**
   * For a call blocked by constraints that read what a tool's calls answered or were asked, where
   * another call of it may change that — `last('tool')` before any answered call of it;
   * `outcomes('tool')` and `values('tool', …)`, which gather every call's, while a call that
   * repeats none is left (the product of the exchange's other item) — an allowed call of that tool
   * to make first, on the bindings the blocked call names, filled as advice is (the values of the
   * records that mention the blocked call's first): a prerequisite that `reads` for those
   * constraints. Its answer decides whether the call is allowed: a hypothetical call answers with
   * a label at most, never the values a constraint compares.
   */
  private readFirst(
    run: Run,
    blocked: ProposedCall,
    violations: readonly RuleFinding[],
    named: readonly Binding[],
    onNamed: (candidate: CandidateCall) => boolean,
    allowed: readonly CandidateCall[],
    budget: SearchBudget,
  ): Advice | undefined {
    const unread = new Map<string, string[]>();
    for (const finding of violations) {
      if (finding.kind !== "constraint") continue;
      const constraint = this.judge.policy.constraints.find((entry) => entry.id === finding.rule);
      for (const reference of constraint ? referencesOf(constraint.require) : []) {
        const tool = reference.path[0];
        if (!callsRead.has(reference.kind) || typeof tool !== "string") continue;
        if (reference.kind === "last" && this.answered(run, tool)) continue;
        unread.set(tool, [...(unread.get(tool) ?? []), finding.rule]);
      }
    }
    // Per tool, its game candidate: one on the bindings the blocked call names, else its first.
    // The lookups of bindings come first, those the blocked call names before others (the
    // order's, whose items the product lookups are of), else in the order the constraints read them.
    const reads = [...unread].map(([tool, rules]) => {
      const own = allowed.filter((candidate) => candidate.tool === tool);
      const onBindings = own.find((entry) => entry.bindings.length > 0 && onNamed(entry));
      const rank = onBindings ? 2 : own.some((entry) => entry.bindings.length > 0) ? 1 : 0;
      return { tool, rules, candidate: onBindings ?? own[0], rank };
    });
    reads.sort((left, right) => right.rank - left.rank);
    for (const { tool, rules, candidate } of reads) {
      // A lookup no rule mentions is no candidate of the game: its call is filled from the
      // bindings the blocked call names (a major's record for the major asked for).
      const answered = this.answered(run, tool);
      const filled = fillArguments(
        this.judge,
        run,
        { name: tool, arguments: candidate?.arguments ?? {} },
        candidate?.bindings ?? named,
        budget,
        { for: blocked, fresh: answered },
      );
      // A tool already answered is advised again only as a call that adds what it did not tell.
      if (answered && (filled.missing.length > 0 || run.observed(tool, filled.call.arguments))) continue;
      if (!candidate && (!budget.spend() || this.judge.decide(run, filled.call, false).verdict !== "allow"))
        continue;
      const advice: Advice = { kind: "prerequisite", call: filled.call, reads: [...new Set(rules)] };
      if (filled.missing.length > 0) advice.missing = filled.missing;
      return advice;
    }
    return undefined;
  }

  /** Whether the run made a call of `tool` that was answered (a label, or JSON). */
  private answered(run: Run, tool: string): boolean {
    return run.calls.some(
      (call) => call.name === tool && (call.outcome.kind === "json" || call.outcome.kind === "label"),
    );
  }

  /**
   * For a call that serves an open duty (it is an event of the duty's instance): where the request
   * asked for another way (`requestedWays`) that is still possible, the advice toward it — an
   * alternative where it is allowed now, else the step that unblocks it (a prerequisite of that
   * way, not of the blocked call: no `unblocks`). `blockedIsAsked`: the blocked call is itself the
   * way asked for.
   */
  private askedInstead(
    run: Run,
    template: StrategyTemplate,
    call: ToolCallEvent,
    budget: SearchBudget,
  ): { advice?: Advice; blockedIsAsked: boolean } {
    const helpers = template.helpingCandidates();
    let blockedIsAsked = false;
    for (const index of run.introducedBindings(call).length > 0 ? [] : run.instancesFor(call)) {
      const instance = run.instances[index] as Instance;
      if (instance.rule.mode === "record") continue;
      if (run.beliefs.every((belief) => instance.rule.automaton.isAccepting(belief[index] as number)))
        continue;
      const ways = requestedWays(this.judge.policy, instance, index, helpers[index] ?? []);
      if (ways.some((way) => way.tool === call.name)) {
        blockedIsAsked = true;
        continue;
      }
      for (const way of ways) {
        const toward = this.toward(run, { name: way.tool, arguments: way.arguments }, way.bindings, budget);
        if (!toward || toward.call.name === call.name) continue;
        const advice: Advice =
          toward.kind === "alternative"
            ? { kind: "alternative", call: toward.call }
            : { kind: "prerequisite", call: toward.call };
        if (toward.missing) advice.missing = toward.missing;
        return { advice, blockedIsAsked };
      }
    }
    return { blockedIsAsked };
  }

  /**
   * The first call of the shortest sequence of two to `SEQUENCE_STEPS` calls after which a call
   * blocked by rules of order is cleared (`clearsAfter`), each call allowed where it is made, on
   * the runs after them (so the incremental and the reference computations give the same answer).
   * The first call is one of `firsts` (allowed now); the later ones are the game's candidates on
   * the blocked call's bindings (`onNamed`), each made once, as the agent would make them (`madeEvent`); where the
   * template can read the call's `move`, every step touches one of its components
   * (`touchesSameComponent`). Breadth first, so the first found is a shortest; it spends at most
   * `SEQUENCE_DECISIONS` of `budget`, and answers `cut` when that bound (or the budget) is hit
   * before it could tell (the budget's `partStopped` says so).
   */
  private firstOfSequence(
    run: Run,
    template: StrategyTemplate,
    firsts: readonly CandidateCall[],
    onNamed: (candidate: CandidateCall) => boolean,
    call: ToolCallEvent,
    move: CandidateCall | undefined,
    budget: SearchBudget,
  ): { first: CandidateCall; steps: number } | "cut" | undefined {
    const spend = budget.part(
      SEQUENCE_DECISIONS,
      "the search for a sequence of steps that unblocks the call",
    );
    // A step that touches none of the call's components cannot change whether it is allowed.
    const linked = (candidate: CandidateCall): boolean =>
      move === undefined || template.touchesSameComponent(candidate, move);
    const proposed = { name: call.name, arguments: call.arguments };
    const later = distinctCalls(
      template.candidates.filter((candidate) => linked(candidate) && onNamed(candidate)),
    ).filter((candidate) => !isSameCall(candidate, call));
    let paths = firsts.filter(linked).flatMap((first) =>
      first.cases.map((outcomeCase) => ({
        first,
        after: run.after(this.madeEvent(run, first, outcomeCase), [outcomeCase]),
        made: [first],
      })),
    );
    for (let length = 2; length <= SEQUENCE_STEPS; length++) {
      const longer: typeof paths = [];
      for (const path of paths) {
        for (const candidate of later) {
          if (path.made.includes(candidate)) continue;
          if (!spend()) return "cut";
          if (this.judge.decide(path.after, this.madeEvent(run, candidate), false).verdict !== "allow")
            continue;
          for (const outcomeCase of candidate.cases) {
            if (!spend()) return "cut";
            const after = path.after.after(this.madeEvent(run, candidate, outcomeCase), [outcomeCase]);
            if (this.clearsAfter(path.after, after, proposed, true))
              return { first: path.first, steps: length };
            longer.push({ first: path.first, after, made: [...path.made, candidate] });
          }
        }
      }
      paths = longer;
    }
    return undefined;
  }

  /** `call` with its required arguments filled (`fillArguments`), within a budget of its own. */
  fill(
    run: Run,
    call: ProposedCall,
    bindings: readonly Binding[],
  ): { call: ProposedCall; missing: string[] } {
    return fillArguments(this.judge, run, call, bindings, new SearchBudget(this.judge.options.search));
  }

  /**
   * The call to make toward `call` on `run` while it is still possible: `call` itself (filled)
   * where it is allowed, else a prerequisite: the step that unblocks it (`unblocks`, one or more
   * steps), reads what its constraints read (`reads`), or leaves fewer of the rules blocking it;
   * undefined where none is found (it is impossible, or the search ran out).
   */
  toward(
    run: Run,
    call: ProposedCall,
    bindings: readonly Binding[],
    budget = new SearchBudget(this.judge.options.search),
  ): Advice | undefined {
    const filled = fillArguments(this.judge, run, call, bindings, budget, { target: true });
    const decision = this.judge.decide(run, filled.call, false);
    if (decision.verdict === "allow")
      return {
        kind: "alternative",
        call: filled.call,
        ...(filled.missing.length > 0 ? { missing: filled.missing } : {}),
      };
    if (decision.failClosed !== undefined) return undefined;
    // Only a step toward the call itself (another duty's way asked for is no step toward it; no
    // cycle), never another way to meet its duty.
    const advice = this.prerequisite(run, proposedEvent(filled.call), decision.violations, budget, false);
    return advice?.kind === "prerequisite" ? advice : undefined;
  }

  /** Whether a call (with its move) would be allowed after a candidate call with one of its outcomes. */
  private allowedAfter(
    run: Run,
    template: StrategyTemplate,
    candidate: CandidateCall,
    caseIndex: number,
    call: ToolCallEvent,
    move: CandidateCall,
    ordered: boolean,
  ): boolean {
    const event = this.candidateEvent(candidate);
    const outcomeCase = candidate.cases[caseIndex] as OutcomeCase;
    const rebuilt = (): boolean =>
      this.clearsAfter(
        run,
        run.after(this.madeEvent(run, candidate, outcomeCase), [outcomeCase]),
        call,
        ordered,
      );
    // The template steps the candidate's own move: a call made with more arguments is judged on
    // the run after it.
    if (this.madeEvent(run, candidate) !== event || run.introducedBindings(event).length > 0)
      return rebuilt();
    const step = this.enablerMove(template, candidate, event, caseIndex);
    const masks = step.effects[0] as Int32Array;
    // Instances the candidate loses for good would leave the game for the call: rebuild then. An
    // outcome that breaks a block rule is no way to allow the call (it would only leave the game).
    const exclude = run.lostInstances();
    const lostNow = step.affected.filter((index, position) => {
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
    if (lostNow.some((index) => run.instances[index]?.rule.mode === "block")) return false;
    if (lostNow.length > 0) return rebuilt();
    // The call's outcomes after the candidate's, judged from the components the two touch.
    let failClosed = false;
    const lost = move.cases.map((_, moveCase) => {
      const steps = [
        { move: step, caseIndex: 0 },
        { move, caseIndex: moveCase },
      ];
      const lostAfter = run.beliefs.map((belief) => template.lostAfterSteps(belief, steps));
      if (lostAfter.includes(undefined)) failClosed = true;
      return lostAfter.includes(true);
    });
    if (failClosed || this.judge.blocked(lost)) return false;
    if (ordered || !this.judge.constrains(call.name)) return true;
    return this.judge
      .constraintFindings(run.after(this.candidateEvent(candidate, outcomeCase), []), call)
      .every((found) => found.mode !== "block");
  }

  /**
   * Whether `call` is cleared (see `clears`) on `after`, a run after a step from `run` — never when
   * the step broke a block rule for good (its instance would only have left the game).
   */
  private clearsAfter(run: Run, after: Run, call: ProposedCall, ordered: boolean): boolean {
    const before = run.lostInstances();
    for (const index of after.lostInstances())
      if (!before.has(index) && after.instances[index]?.rule.mode === "block") return false;
    return clears(this.judge.decide(after, call, false), ordered);
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

  /**
   * The call a candidate stands for, one object per candidate and outcome case (runs memoize what
   * they read from a call by the object). With a text tool's case, the call answered with that
   * label, so that what reads the history after it (`last('tool').label`, `held`) reads it: a
   * constraint on the label a lookup returns is cleared by the lookup. Values its fields would
   * read stay unknown (null). Otherwise the answer is pending.
   */
  private candidateEvent(candidate: CandidateCall, outcomeCase?: OutcomeCase): ToolCallEvent {
    let events = this.candidateEvents.get(candidate);
    if (!events) {
      events = new Map();
      this.candidateEvents.set(candidate, events);
    }
    const label = labelOf(outcomeCase);
    const key = label === undefined ? undefined : outcomeCase;
    let event = events.get(key);
    if (!event) {
      event = {
        id: "advice",
        name: candidate.tool,
        arguments: candidate.arguments,
        outcome: label === undefined ? { kind: "pending" } : { kind: "label", label },
      };
      events.set(key, event);
    }
    return event;
  }

  /**
   * The call the agent would make for a candidate aimed at a binding, on `run`
   * (`withKnownArguments`: an order's lookup with the user the task names), as `candidateEvent`
   * gives it: one object per run, candidate and outcome case. The candidate's own event where
   * nothing is added, and for a candidate without arguments (it stands for calls of any
   * arguments, not for the one the task's values would make).
   */
  private madeEvent(run: Run, candidate: CandidateCall, outcomeCase?: OutcomeCase): ToolCallEvent {
    const event = this.candidateEvent(candidate, outcomeCase);
    const byCandidate = this.madeEvents.get(run) ?? new Map<CandidateCall, MadeCall>();
    this.madeEvents.set(run, byCandidate);
    let made = byCandidate.get(candidate);
    if (!made) {
      const call = { name: candidate.tool, arguments: candidate.arguments };
      const completed =
        Object.keys(call.arguments).length === 0
          ? call
          : withKnownArguments(this.judge, run, call, candidate.bindings);
      made = { arguments: completed === call ? undefined : completed.arguments, events: new Map() };
      byCandidate.set(candidate, made);
    }
    if (made.arguments === undefined) return event;
    let madeEvent = made.events.get(event);
    if (!madeEvent) {
      madeEvent = { ...event, arguments: made.arguments };
      made.events.set(event, madeEvent);
    }
    return madeEvent;
  }

  /** Whether a proposition's predicates read the history (then a call's letters depend on it). */
  private readsHistory(): boolean {
    this.historyRead ??= [...this.judge.policy.propositions.values()].some((proposition) =>
      [proposition.when, proposition.outcome].some(
        (expression) =>
          expression !== undefined &&
          referencesOf(expression).some((reference) => isHistoryFunctionName(reference.kind)),
      ),
    );
    return this.historyRead;
  }
}

/** The history functions that read a tool's calls: what they answered, or what they were asked. */
const callsRead: ReadonlySet<string> = new Set(["last", "outcomes", "values"]);

/** A text tool's outcome case: its label (null: none of the labels); undefined for other cases. */
function labelOf(outcomeCase: OutcomeCase | undefined): string | null | undefined {
  const value = outcomeCase?.value;
  if (
    outcomeCase?.abstract !== undefined ||
    value === null ||
    typeof value !== "object" ||
    Array.isArray(value)
  )
    return undefined;
  const label = value.label;
  return typeof label === "string" || label === null ? label : undefined;
}

/** A candidate's arguments as the agent would make the call (undefined: its own), and its events with them, by its own. */
interface MadeCall {
  arguments: Record<string, Value> | undefined;
  events: Map<ToolCallEvent, ToolCallEvent>;
}

/** The longest sequence of steps the advice looks for before a blocked call, and its share of the search budget. */
const SEQUENCE_STEPS = 3;
const SEQUENCE_DECISIONS = 200;
/** Decisions the search for a step that one more call completes may spend. */
const STEP_DECISIONS = 200;

/**
 * The bindings (in run order) a call names and those the instances it is an event of monitor with
 * them (a dispense of a prescription is an event of the rule that asks for the patient's reported
 * allergy to be recorded first: the allergy's binding is related).
 */
function relatedBindings(run: Run, call: ToolCallEvent): Binding[] {
  const ids = new Set(run.namedBindings(call).map((binding) => binding.id));
  if (run.introducedBindings(call).length === 0)
    for (const index of run.instancesFor(call)) {
      const instance = run.instances[index] as Instance;
      if (instance.bindings.some((binding) => ids.has(binding.id)))
        for (const binding of instance.bindings) ids.add(binding.id);
    }
  return run.bindings.filter((binding) => ids.has(binding.id));
}

/** Whether a candidate is the call itself: the same tool, and each of its arguments the call's. */
function isSameCall(candidate: CandidateCall, call: ToolCallEvent): boolean {
  return (
    candidate.tool === call.name &&
    Object.entries(candidate.arguments).every(([name, value]) =>
      valuesEqual(call.arguments[name] ?? null, value),
    )
  );
}

/** The candidates with one per concrete call (tool and arguments), the first of each kept. */
function distinctCalls(candidates: readonly CandidateCall[]): CandidateCall[] {
  const seen = new Set<string>();
  return candidates.filter((candidate) => {
    const key = JSON.stringify([candidate.tool, candidate.arguments]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Values a repair of an argument prefers: the enum's members (true and false for a boolean), the task's scalar fields, and
 * the values the tool's earlier calls gave it; for the solver (`more`) also the advised call's
 * value and the scalar fields of earlier outcomes (what lookups returned).
 */
export function repairValues(
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
  if (parameter && typeof parameter.type === "object") for (const member of parameter.type.enum) push(member);
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
    for (const value of Object.values(outcome)) if (value === null || typeof value !== "object") push(value);
  }
  return values;
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

/**
 * Whether a decision after a prerequisite clears the call: allowed, or (`ordered`: the call was
 * blocked by rules of order) blocked only by argument constraints, which a repair of its own
 * arguments settles.
 */
function clears(decision: Decision, ordered: boolean): boolean {
  if (decision.verdict === "allow") return true;
  return (
    ordered &&
    decision.failClosed === undefined &&
    decision.violations.every((finding) => finding.kind === "constraint")
  );
}

/** `candidates` in their order, those `executable` first. */
function executableFirst(
  candidates: readonly CandidateCall[],
  executable: (candidate: CandidateCall) => boolean,
): CandidateCall[] {
  const [now, later] = [[], []] as [CandidateCall[], CandidateCall[]];
  for (const candidate of candidates) (executable(candidate) ? now : later).push(candidate);
  return [...now, ...later];
}
