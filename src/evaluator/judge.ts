import { holdsIn } from "../expression/index.js";
import { type CandidateCall, Game, StrategyTemplate } from "../game/index.js";
import type { ConstraintSpec, Policy } from "../policy/index.js";
import type { Binding, Instance, Run, ToolCallEvent } from "../run/index.js";
import { Advisor } from "./advisor.js";
import { SearchBudget } from "./budget.js";
import { Duties } from "./duties.js";
import { BindingTexts, Findings } from "./findings.js";
import { PerRunAnswers } from "./per-run-answers.js";
import {
  type Decision,
  type Duty,
  type EvaluatorOptions,
  type ProposedCall,
  proposedEvent,
  type RuleFinding,
} from "./types.js";

/**
 * Decides calls on runs: whether a call may be made, which rules it breaks, and (when asked)
 * the duties it leaves open and advice for a blocked call. Owns the game and the templates of
 * the runs it is asked about.
 */
export class Judge {
  /** The policy's game: every template of this judge shares its candidates, components and distances. */
  readonly game: Game;
  readonly texts = new BindingTexts();
  readonly duties: Duties;
  readonly advisor: Advisor;
  // Keyed by run: the template answers every question about that run and goes with it.
  private readonly templates = new WeakMap<Run, StrategyTemplate>();

  constructor(
    readonly policy: Policy,
    readonly options: EvaluatorOptions,
  ) {
    this.game = new Game(policy);
    this.advisor = new Advisor(this);
    this.duties = new Duties(this.texts, this.advisor);
  }

  /** The game template at a run (shared by every question about it). */
  template(run: Run): StrategyTemplate {
    let template = this.templates.get(run);
    if (!template) {
      template = new StrategyTemplate(run, {
        ...this.options,
        exclude: run.lostInstances(),
        game: this.game,
      });
      this.templates.set(run, template);
    }
    return template;
  }

  /**
   * Whether `proposed` may be made after `run`; `withAdvice` adds the open duties and, for a
   * blocked call, advice found within `budget` (default: a budget of its own, `options.search`).
   */
  decide(run: Run, proposed: ProposedCall, withAdvice: boolean, budget?: SearchBudget): Decision {
    if (!this.policy.tools.has(proposed.name)) return this.undeclared(run, proposed, withAdvice);
    const call = proposedEvent(proposed);
    if (this.options.incremental === false || run.introducedBindings(call).length > 0)
      return this.decideByRuns(run, call, proposed, withAdvice, budget);
    const template = this.template(run);
    const move = template.moveOf(call, run.expectedCases(call));
    const exclude = run.lostInstances();
    const findings = new Findings(this.texts);
    // Block rules: what each outcome of the call leaves possible (the game).
    const outcomes = this.outcomes(template, run.beliefs, move);
    if (this.blocked(outcomes.lost)) {
      outcomes.after.forEach((states, caseIndex) => {
        if (outcomes.lost[caseIndex]) findings.addLost(template, states, template.noCompliantFinish());
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
    if (this.constrains(call.name)) findings.addAll(this.constraintFindings(run, call));
    const judged = { proposed, call, findings, failClosed: outcomes.failClosed };
    return this.conclude(run, judged, withAdvice, budget, (verdict) =>
      verdict === "allow"
        ? this.duties.at(template, after, () => run.after(call, run.expectedCases(call)))
        : this.duties.at(template, run.beliefs),
    );
  }

  /**
   * Whether `decide` blocks a call of the game's candidates that binds an entity the run has no
   * binding for yet (a lookup of a requested order binds the order itself). The game knows only
   * the run's bindings, so the rules of the new binding are not in its classes; `decide` replays
   * them.
   */
  blocksWithNewBinding(run: Run, call: ProposedCall): boolean {
    if (run.introducedBindings(proposedEvent(call)).length === 0) return false;
    return this.newBindingBlocks.answer(
      run,
      JSON.stringify([call.name, call.arguments]),
      () => this.decide(run, call, false).verdict === "block",
    );
  }

  private readonly newBindingBlocks = new PerRunAnswers();

  /** Whether a call whose outcome cases are lost as given is blocked. */
  blocked(lost: boolean[]): boolean {
    return this.options.strict ? lost.some(Boolean) : lost.every(Boolean);
  }

  /** Whether some argument constraint is about calls of `tool`. */
  constrains(tool: string): boolean {
    return this.policy.constraints.some((constraint) => constraint.on.tool === tool);
  }

  /**
   * Argument constraints, decided on the concrete arguments of a call proposed on `run` (the run
   * before it): their history functions read the calls made before this one, as the rules do.
   */
  constraintFindings(run: Run, call: ToolCallEvent): RuleFinding[] {
    const found: RuleFinding[] = [];
    const at = run.atCall(call);
    for (const constraint of this.policy.constraints) {
      for (const bindings of this.constraintTargets(run, constraint, call)) {
        if (!holdsIn(constraint.require, at.scopeFor(bindings, call.arguments))) {
          found.push(
            this.texts.finding(constraint.id, constraint.sentence, constraint.mode, "constraint", bindings),
          );
        }
      }
    }
    return found;
  }

  /**
   * Bindings for which the constraint applies to a call proposed on `run` (its proposition's
   * `when` holds, read on the history before the call, as the rules read it). The bindings
   * include those the call introduces.
   */
  constraintTargets(before: Run, constraint: ConstraintSpec, call: ToolCallEvent): Binding[][] {
    const proposition = constraint.on;
    if (proposition.tool !== call.name) return [];
    const run = before.atCall(call);
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

  /** A tool the policy does not declare is blocked (fail closed): nothing says what it may do. */
  private undeclared(run: Run, proposed: ProposedCall, withAdvice: boolean): Decision {
    return {
      verdict: "block",
      action: "block",
      call: proposed,
      violations: [],
      warnings: [],
      recorded: [],
      openDuties: withAdvice ? this.duties.at(this.template(run), run.beliefs) : [],
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
    const lost = after.map((states) =>
      lostIn(template, states, template.noCompliantFinish(), (reason) => {
        failClosed = reason;
      }),
    );
    return { after, lost, failClosed };
  }

  /** The reference computation: the run rebuilt after the call, for each outcome and for all. */
  private decideByRuns(
    run: Run,
    call: ToolCallEvent,
    proposed: ProposedCall,
    withAdvice: boolean,
    budget: SearchBudget | undefined,
  ): Decision {
    const findings = new Findings(this.texts);
    let failClosed: string | undefined;
    // Instances lost before this call stay out of the game, so an old violation does not block every later call.
    const exclude = run.lostInstances();
    const cases = run.expectedCases(call);
    // One run per outcome, and one for all of them together, sharing what the call introduces.
    const runs = run.afterEach(call, [...cases.map((outcomeCase) => [outcomeCase]), cases]);
    const after = runs.pop() as Run;
    const template = new StrategyTemplate(after, { ...this.options, exclude, game: this.game });
    const withoutFinish = this.template(run).noCompliantFinish();
    const lost = runs.map((outcome) =>
      lostIn(template, outcome.beliefs, withoutFinish, (reason) => {
        failClosed = reason;
      }),
    );
    if (this.blocked(lost)) {
      runs.forEach((outcome, caseIndex) => {
        if (lost[caseIndex]) findings.addLost(template, outcome.beliefs, withoutFinish);
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
    findings.addAll(this.constraintFindings(run, call));
    return this.conclude(run, { proposed, call, findings, failClosed }, withAdvice, budget, (verdict) => {
      const state = verdict === "allow" ? after : run;
      return this.duties.at(
        new StrategyTemplate(state, { ...this.options, exclude, game: this.game }),
        state.beliefs,
      );
    });
  }

  private conclude(
    run: Run,
    { proposed, call, findings, failClosed }: Judged,
    withAdvice: boolean,
    budget: SearchBudget | undefined,
    duties: (verdict: Decision["verdict"]) => Duty[],
  ): Decision {
    const all = findings.list();
    const violations = all.filter((finding) => finding.mode === "block");
    const verdict = violations.length > 0 || failClosed !== undefined ? "block" : "allow";
    const warnings = all.filter((finding) => finding.mode === "warn");
    const decision: Decision = {
      verdict,
      action: verdict === "block" ? "block" : warnings.length > 0 ? "warn" : "allow",
      call: proposed,
      violations,
      warnings,
      recorded: all.filter((finding) => finding.mode === "record"),
      openDuties: [],
    };
    if (failClosed !== undefined) decision.failClosed = failClosed;
    if (!withAdvice) return decision;
    decision.openDuties = duties(verdict);
    if (verdict === "block") {
      const onlyArguments =
        violations.length > 0 && violations.every((finding) => finding.kind === "constraint");
      const search = budget ?? new SearchBudget(this.options.search);
      const advice =
        (onlyArguments ? this.advisor.repair(run, proposed, search) : undefined) ??
        this.advisor.prerequisite(run, call, violations, search);
      if (advice) decision.advice = advice;
      const stopped = search.exhausted ?? search.partStopped;
      if (stopped !== undefined) decision.searchStopped = stopped;
    }
    return decision;
  }
}

/** A call judged, before its advice and duties. */
interface Judged {
  proposed: ProposedCall;
  call: ToolCallEvent;
  findings: Findings;
  failClosed: string | undefined;
}

/**
 * Whether some of the states after a call has no compliant finish; `withoutFinish`: the run had
 * none before the call, so whether some breaks a block rule for good. A search that gave up is
 * reported through `gaveUp` with its reason (the shield then fails closed).
 */
function lostIn(
  template: StrategyTemplate,
  states: readonly Int32Array[],
  withoutFinish: boolean,
  gaveUp: (reason: string) => void,
): boolean {
  if (withoutFinish) return states.some((state) => template.doomedInstances(state).length > 0);
  const distances = states.map((state) => template.distance(state));
  if (distances.includes(undefined)) gaveUp(`the game search exceeded ${template.maxStates} states`);
  return distances.includes(Number.POSITIVE_INFINITY);
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
