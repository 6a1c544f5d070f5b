import { valuesEqual } from "../expression/index.js";
import type { Policy, Severity } from "../policy/index.js";
import type { Action, Decision, ProposedCall, RuleFinding, Stop } from "./types.js";

/**
 * What severities remember of a run besides its calls: refusals per `escalate` rule, the last
 * refusal an `override` rule decided, approvals (for `ask`) and a latched stop. It changes only
 * by the run's entries, so a run's messages (or a monitor's log) rebuild it exactly. Plain data:
 * it is part of a monitor's JSON.
 */
export interface EnforcementState {
  /** `escalate` rule id → the refusals it decided in the whole run (since an escalation to ask). */
  cumulative: Record<string, number>;
  /** `escalate` rule id → the refusals it decided since the last made call. */
  consecutive: Record<string, number>;
  /** The last refusal an `override` rule decided, until a call is made: the call and those rules. */
  lastRefusal?: { call: ProposedCall; rules: string[] };
  /** Calls a person approved since the last made call. */
  approved: ProposedCall[];
  stopped?: Stop;
}

export function emptyEnforcement(): EnforcementState {
  return { cumulative: {}, consecutive: {}, approved: [] };
}

/**
 * Strongest first (AgentLTL's order): a call broken by rules of several severities gets the
 * action of the strongest; among rules of one severity, the most severe action.
 */
const severityRank: readonly Severity["kind"][] = ["stop", "block", "ask", "escalate", "override"];
const actionRank: readonly Action[] = ["stop", "block", "ask", "retry", "warn", "allow"];

/** The severities of a policy's rules and constraints, by id (ids are unique across both). */
export class Severities {
  private readonly byId = new Map<string, Severity>();

  constructor(policy: Policy) {
    for (const rule of policy.rules) this.byId.set(rule.id, rule.severity);
    for (const constraint of policy.constraints) this.byId.set(constraint.id, constraint.severity);
  }

  of(id: string): Severity {
    return this.byId.get(id) ?? { kind: "block" };
  }

  /** Whether any rule needs the refusals of the run (escalate, override), not only its calls. */
  get countsRefusals(): boolean {
    return [...this.byId.values()].some(
      (severity) => severity.kind === "escalate" || severity.kind === "override",
    );
  }

  /**
   * The decision on a call as the severities of the rules it breaks say, given what the run
   * remembers: the judge's verdict refines into an action, and a refusal may be waived (an
   * override, an approval).
   */
  apply(decision: Decision, state: EnforcementState): Decision {
    if (state.stopped) {
      return { ...decision, verdict: "block", action: "stop", stopped: state.stopped };
    }
    if (decision.verdict === "allow") return decision;
    const refusing: RuleFinding[] = [];
    const overridden: RuleFinding[] = [];
    const approved: RuleFinding[] = [];
    const escalated: string[] = [];
    const actions: { severity: Severity["kind"]; action: Action }[] =
      decision.failClosed !== undefined ? [{ severity: "block", action: "block" }] : [];
    for (const finding of decision.violations) {
      const severity = this.of(finding.rule);
      let action: Action | undefined;
      switch (severity.kind) {
        case "stop":
          action = "stop";
          break;
        case "ask":
          if (state.approved.some((call) => sameCall(call, decision.call))) approved.push(finding);
          else action = "ask";
          break;
        case "override": {
          const last = state.lastRefusal;
          if (last?.rules.includes(finding.rule) && sameCall(last.call, decision.call))
            overridden.push(finding);
          else action = "block";
          break;
        }
        case "escalate":
          if (escalates(severity, state, finding.rule)) {
            escalated.push(finding.rule);
            action = severity.to;
          } else action = "retry";
          break;
        default:
          action = "block";
      }
      if (action === undefined) continue;
      refusing.push(finding);
      actions.push({ severity: severity.kind, action });
    }
    const result: Decision = { ...decision, violations: refusing };
    if (overridden.length > 0) {
      result.overridden = unique(overridden.map((finding) => finding.rule));
      result.warnings = [...decision.warnings, ...overridden];
    }
    if (approved.length > 0) {
      result.approved = unique(approved.map((finding) => finding.rule));
      result.recorded = [...decision.recorded, ...approved];
    }
    if (escalated.length > 0) result.escalated = unique(escalated);
    const overridable = refusing.filter((finding) => this.of(finding.rule).kind === "override");
    if (overridable.length > 0) result.overridable = unique(overridable.map((finding) => finding.rule));
    if (actions.length === 0) {
      result.verdict = "allow";
      result.action = result.warnings.length > 0 ? "warn" : "allow";
      delete result.advice;
      return result;
    }
    const strongest = severityRank.find((kind) => actions.some((entry) => entry.severity === kind));
    const theirs = actions.filter((entry) => entry.severity === strongest).map((entry) => entry.action);
    result.action = actionRank.find((action) => theirs.includes(action)) as Action;
    return result;
  }

  /**
   * The state after a refused call (its decision as `apply` gave it). Only the rules of the
   * strongest severity count (as in AgentLTL): an `escalate` rule's refusal counts when no
   * stronger rule decided the call, and an `override` refusal can be overridden only when it
   * decided it. A refusal of a stopped run changes nothing.
   */
  refused(state: EnforcementState, decision: Decision): EnforcementState {
    if (state.stopped) return state;
    const kinds = new Set(decision.violations.map((finding) => this.of(finding.rule).kind));
    if (decision.failClosed !== undefined) kinds.add("block");
    const strongest = severityRank.find((kind) => kinds.has(kind));
    const deciding = unique(
      decision.violations
        .filter((finding) => this.of(finding.rule).kind === strongest)
        .map((finding) => finding.rule),
    );
    const next: EnforcementState = { ...state };
    if (strongest === "escalate") {
      next.consecutive = { ...state.consecutive };
      next.cumulative = { ...state.cumulative };
      for (const rule of deciding) {
        const severity = this.of(rule);
        // An escalation to `ask` hands the rule to a person: its count starts again.
        const restart =
          severity.kind === "escalate" && severity.to === "ask" && decision.escalated?.includes(rule);
        next.consecutive[rule] = restart ? 0 : (state.consecutive[rule] ?? 0) + 1;
        next.cumulative[rule] = restart ? 0 : (state.cumulative[rule] ?? 0) + 1;
      }
    }
    if (strongest === "override") next.lastRefusal = { call: decision.call, rules: deciding };
    if (decision.action === "stop") {
      const rules = decision.violations
        .filter((finding) => this.stops(finding.rule, decision))
        .map((finding) => finding.rule);
      next.stopped = { rules: unique(rules), call: decision.call };
    }
    return next;
  }

  /** The state after a made call: refusals in a row end, approvals are used up. */
  made(state: EnforcementState): EnforcementState {
    const next: EnforcementState = { ...state, consecutive: {}, approved: [] };
    delete next.lastRefusal;
    return next;
  }

  approve(state: EnforcementState, call: ProposedCall): EnforcementState {
    return { ...state, approved: [...state.approved, call] };
  }

  /** A stop with no call: the server's stop message, or a client that stops the run itself. */
  stop(state: EnforcementState, stop: Stop): EnforcementState {
    return state.stopped ? state : { ...state, stopped: stop };
  }

  /** Lifts a latched stop; the counts and an override's chance stay (as in AgentLTL). */
  resume(state: EnforcementState): EnforcementState {
    const next: EnforcementState = { ...state };
    delete next.stopped;
    return next;
  }

  /** Whether a rule's severity gave `stop` in a decision. */
  private stops(rule: string, decision: Decision): boolean {
    const severity = this.of(rule);
    return (
      severity.kind === "stop" || (severity.kind === "escalate" && (decision.escalated ?? []).includes(rule))
    );
  }
}

/** Whether an `escalate` rule's earlier refusals reach its bound (the call proposed now escalates). */
function escalates(
  severity: Extract<Severity, { kind: "escalate" }>,
  state: EnforcementState,
  rule: string,
): boolean {
  const inRow = state.consecutive[rule] ?? 0;
  const inRun = state.cumulative[rule] ?? 0;
  switch (severity.counting) {
    case "consecutive":
      return inRow >= severity.after;
    case "cumulative":
      return inRun >= severity.after;
    case "hybrid":
      return inRow >= severity.after || inRun >= severity.total;
  }
}

/** The identical call: same tool, same arguments (as JSON values). */
export function sameCall(left: ProposedCall, right: ProposedCall): boolean {
  return left.name === right.name && valuesEqual(left.arguments, right.arguments);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
