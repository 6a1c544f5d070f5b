import { formatLocation } from "../errors/index.js";
import { type Expression, type FieldType, formatExpression, type PathSegment } from "../expression/index.js";
import type { ConstraintSpec, EntitySpec, Policy, PropositionSpec, ToolSpec } from "../policy/index.js";
import { groupBy, Run } from "../run/index.js";
import type { SolverClient, SolverTool } from "../smt/index.js";
import { type CandidateCall, candidateCalls } from "./candidates.js";
import { type ExploredState, groupGames } from "./group-game.js";
import { type LintFinding, type LintOptions, syntheticTask, vacuityFindings } from "./lint.js";

/**
 * Argument constraints that can never hold together, checked with the solver: per tool, the
 * `require` (and the `when` of its proposition) of every constraint on that tool, with task
 * fields and entity variables left free (any task, any binding). A set with no solution is an
 * error naming a smallest conflicting subset. Constraints that read the history or an outcome
 * are left out (their values are not known before a run), so the check is sound but not
 * complete. A solver timeout or error is a warning: the constraints were not checked. Then the
 * traps constraints make, and the propositions whose `when` can never hold (`impossibleWhens`).
 */
export async function lintConstraints(
  policy: Policy,
  solver: SolverClient,
  options: LintOptions = {},
): Promise<LintFinding[]> {
  const findings: LintFinding[] = [];
  const entities = entitiesByVariable(policy);
  // Constraints of a set the solver satisfied: every part of that set can hold too.
  const canHold = new Set<ConstraintSpec>();
  for (const [toolName, constraints] of byTool(policy.constraints)) {
    const tool = policy.tools.get(toolName);
    if (!tool) continue;
    const free = new Map<string, FieldType>();
    const checked = constraints.flatMap((constraint) => {
      const parts = [constraint.require, ...(constraint.on.when ? [constraint.on.when] : [])].map((part) =>
        freeConstants(part, policy, free, entities),
      );
      return parts.every((part) => part !== undefined) ? [{ constraint, parts: parts as Expression[] }] : [];
    });
    if (checked.length === 0) continue;
    const solverTool: SolverTool = {
      name: tool.name,
      parameters: [...tool.parameters, ...[...free].map(([name, type]) => ({ name, type }))],
    };
    const unsatisfiable = async (subset: typeof checked): Promise<boolean> => {
      const result = await solver.satisfiable({
        tool: solverTool,
        constraints: subset.flatMap((entry) => entry.parts),
      });
      if (result.status === "sat") for (const entry of subset) canHold.add(entry.constraint);
      return result.status === "unsat";
    };
    try {
      if (!(await unsatisfiable(checked))) continue;
      // Drop every constraint the conflict does not need.
      let core = checked;
      for (const entry of checked) {
        const without = core.filter((other) => other !== entry);
        if (without.length > 0 && (await unsatisfiable(without))) core = without;
      }
      const rules = core.map((entry) => entry.constraint.id);
      findings.push({
        severity: "error",
        kind: "unsatisfiable-constraints",
        rules,
        message:
          rules.length === 1
            ? `constraint ${rules[0]} on ${tool.name} can never hold`
            : `constraints ${rules.join(", ")} on ${tool.name} can never hold together`,
      });
    } catch (error) {
      findings.push({
        severity: "warning",
        kind: "unsatisfiable-constraints",
        rules: checked.map((entry) => entry.constraint.id),
        message: `the constraints on ${tool.name} were not checked: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }
  findings.push(...(await constraintTraps(policy, solver, options.maxStates ?? 5_000, entities, canHold)));
  findings.push(...(await impossibleWhens(policy, solver, entities)));
  return findings;
}

/**
 * Propositions a rule reads whose `when` holds for no arguments, task, binding and history
 * (`a.n > 5 && a.n < 3`), asked of the solver as `neverHold` asks it of constraints: each is an
 * error `dead-proposition` in every rule that reads it, and such a rule that can then never be
 * broken is `vacuous` (`vacuityFindings`). A solver that cannot answer makes a warning.
 */
async function impossibleWhens(
  policy: Policy,
  solver: SolverClient,
  entities: EntitiesByVariable,
): Promise<LintFinding[]> {
  const findings: LintFinding[] = [];
  const dead = new Map<PropositionSpec, string>();
  for (const proposition of new Set(policy.rules.flatMap((rule) => rule.propositions))) {
    const tool = policy.tools.get(proposition.tool);
    if (!proposition.when || !tool) continue;
    try {
      if (await neverHold(policy, solver, tool, [[proposition.when, proposition.bindingPattern]], entities))
        dead.set(proposition, `its when can never hold: "${proposition.whenText}"`);
    } catch (error) {
      findings.push({
        severity: "warning",
        kind: "dead-proposition",
        rules: [],
        message: `whether the when of ${proposition.key} can hold was not checked: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }
  for (const rule of policy.rules) {
    const atoms = new Map(
      rule.propositions.flatMap((proposition) => {
        const reason = dead.get(proposition);
        return reason === undefined ? [] : [[proposition.key, reason] as const];
      }),
    );
    if (atoms.size > 0) findings.push(...vacuityFindings(policy, rule, atoms, true));
  }
  return findings;
}

/**
 * Traps made by constraints: a state reachable without breaking a rule (and without impossible
 * calls) from which the game could still finish, but only through calls that no arguments make
 * compliant, because the constraints that apply to them never hold together for any task and
 * any history (`neverHold`). Searched per group of linked rules (`GroupGame`), each within
 * `maxStates` states: error `trap` at the group's first such state in breadth-first order, so the
 * example is a shortest one; it names the group's open duties there, the impossible calls that
 * progress there and their constraints with file and line. A solver that cannot answer makes a
 * warning.
 */
async function constraintTraps(
  policy: Policy,
  solver: SolverClient,
  maxStates: number,
  entities: EntitiesByVariable,
  canHold: ReadonlySet<ConstraintSpec>,
): Promise<LintFinding[]> {
  if (policy.constraints.length === 0) return [];
  const run = Run.start(policy, syntheticTask(policy));
  const candidates = candidateCalls(run);
  const findings: LintFinding[] = [];
  const impossible = new Map<CandidateCall, ConstraintSpec[]>();
  const verdicts = new Map<string, Promise<boolean>>();
  const constraintsOn = byTool(policy.constraints);
  for (const candidate of candidates) {
    const applicable = (constraintsOn.get(candidate.tool) ?? []).filter((constraint) =>
      appliesTo(constraint, candidate),
    );
    // Part of a set the solver satisfied (with the same free task fields and variables, history
    // left out): they can hold together, no need to ask again.
    if (applicable.length === 0 || applicable.every((constraint) => canHold.has(constraint))) continue;
    const key = applicable.map((constraint) => constraint.id).join("\u0000");
    const verdict =
      verdicts.get(key) ??
      neverHold(
        policy,
        solver,
        policy.tools.get(candidate.tool),
        applicable.flatMap((constraint) =>
          [constraint.require, ...(constraint.on.when ? [constraint.on.when] : [])].map(
            (part): Part => [part, constraint.on.bindingPattern],
          ),
        ),
        entities,
      );
    verdicts.set(key, verdict);
    try {
      if (await verdict) impossible.set(candidate, applicable);
    } catch (error) {
      verdicts.set(key, Promise.resolve(false));
      findings.push({
        severity: "warning",
        kind: "trap",
        rules: applicable.map((constraint) => constraint.id),
        message: `whether the constraints on ${candidate.tool} can hold was not checked: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }
  if (impossible.size === 0) return findings;

  for (const game of groupGames(run, candidates, { instances: "block", maxStates })) {
    const blocked = game.group.candidates.filter((candidate) => impossible.has(candidate));
    if (blocked.length === 0) continue;
    // Every state reachable with possible calls and without breaking a rule, in breadth-first order.
    const exploration = game.explore({
      skipDoomed: true,
      candidates: game.group.candidates.filter((candidate) => !impossible.has(candidate)),
    });
    if (!exploration.complete) {
      findings.push({
        severity: "warning",
        kind: "trap",
        rules: [
          ...new Set(blocked.flatMap((candidate) => impossible.get(candidate) ?? []).map(({ id }) => id)),
        ],
        message: `traps made by constraints were not searched: more than ${maxStates} states`,
      });
      continue;
    }
    // The states from which some outcomes let possible calls reach a compliant finish.
    const finishing = game.finishing(exploration);
    const trap = exploration.states.findIndex((node, at) => {
      if (finishing[at]) return false;
      const distance = game.distance(node.state);
      return distance !== undefined && distance !== Number.POSITIVE_INFINITY;
    });
    if (trap < 0) continue;
    const state = (exploration.states[trap] as ExploredState).state;
    const now = game.distance(state) as number;
    const progressing = blocked.filter((candidate) => {
      const after = candidate.cases.map((_, caseIndex) =>
        game.distance(game.successor(state, candidate, caseIndex)),
      );
      if (after.some((distance) => distance === undefined)) return false;
      if (after.every((distance) => distance === Number.POSITIVE_INFINITY)) return false;
      return after.some((distance) => (distance as number) < now);
    });
    const calls = progressing.length > 0 ? progressing : blocked;
    const constraints = [...new Set(calls.flatMap((candidate) => impossible.get(candidate) ?? []))];
    const duties = [
      ...new Set(
        game.blocks
          .filter((position) => !game.accepting(state, [position]))
          .map((position) => run.instances[game.instance(position)]?.rule.id as string),
      ),
    ];
    const path = game.path(exploration, trap);
    const where = path.length > 0 ? `after ${path.join(", ")}` : "from the start";
    findings.push({
      severity: "error",
      kind: "trap",
      rules: constraints.map((constraint) => constraint.id),
      message:
        `${where}, ${duties.length === 1 ? "rule" : "rules"} ${duties.join(", ")} can only be met by ` +
        `${[...new Set(calls.map((candidate) => candidate.tool))].join(", ")}, which no arguments make compliant ` +
        `for any task and history: ${constraints
          .map(
            (constraint) =>
              `constraint ${constraint.id} at ${formatLocation(constraint.location)}: "${constraint.requireText}"`,
          )
          .join("; ")}`,
      example: path,
      location: constraints[0]?.location,
    });
  }
  return findings;
}

/** Constraints by the tool they are on. */
function byTool(constraints: readonly ConstraintSpec[]): Map<string, ConstraintSpec[]> {
  return groupBy(constraints, (constraint) => constraint.on.tool);
}

/** Whether a constraint applies to a call of the game: same tool, its proposition's `when` holds, its entity named. */
function appliesTo(constraint: ConstraintSpec, candidate: CandidateCall): boolean {
  const on = constraint.on;
  if (on.tool !== candidate.tool) return false;
  if (on.whenText !== undefined && !candidate.whenTrue?.has(on.whenText)) return false;
  return on.entities.every((entity) => candidate.bindings.some((binding) => binding.entity === entity));
}

/** The entity that declares each variable (the first, in the policy's order). */
type EntitiesByVariable = ReadonlyMap<string, EntitySpec>;

function entitiesByVariable(policy: Policy): EntitiesByVariable {
  const entities = new Map<string, EntitySpec>();
  for (const entity of policy.entities.values())
    for (const variable of entity.variables) if (!entities.has(variable)) entities.set(variable, entity);
  return entities;
}

/** Type choices tried for a history value whose type the policy does not declare. */
const historyTypes: FieldType[] = ["string", "number", "boolean"];
/** More history values than this in one set of constraints: not checked (3^n solver calls). */
const maxHistoryValues = 4;

/** An expression on a call of a tool, with the binding pattern of the proposition it is read for. */
type Part = [Expression, Record<string, PathSegment[]>];

/**
 * Whether the parts (a set of constraints with their propositions' `when`, or one `when`) can
 * never hold together on a call of `tool`, for any arguments, task fields, entity variables and
 * history: those are free variables (`held` a boolean, `count` an integer, a field of `last(...)`
 * each of the types in `historyTypes` in turn, absent included). False when something cannot be
 * checked (outcomes, whole `last(...)` values, `values(...)`): only what is proven impossible counts.
 */
async function neverHold(
  policy: Policy,
  solver: SolverClient,
  tool: ToolSpec | undefined,
  given: readonly Part[],
  entities: EntitiesByVariable,
): Promise<boolean> {
  if (!tool) return false;
  const free = new Map<string, FieldType>();
  const history = new Set<string>();
  // An entity variable a `when` binds to an argument (`a.p == x`) is that argument: substituting it
  // keeps the question the same and spares the solver a comparison of two unknowns.
  const parts = given.map(([part, bound]) => freeConstants(part, policy, free, entities, { history, bound }));
  if (parts.some((part) => part === undefined) || history.size > maxHistoryValues) return false;
  const unknown = [...history];
  for (let choice = 0; choice < historyTypes.length ** unknown.length; choice++) {
    const types = unknown.map((name, index): [string, FieldType] => [
      name,
      historyTypes[Math.floor(choice / historyTypes.length ** index) % historyTypes.length] as FieldType,
    ]);
    const result = await solver.satisfiable({
      tool: {
        name: tool.name,
        parameters: [...tool.parameters, ...[...free, ...types].map(([name, type]) => ({ name, type }))],
      },
      constraints: parts as Expression[],
    });
    if (result.status !== "unsat") return false;
  }
  return true;
}

/**
 * The expression with task fields and entity variables turned into free arguments (named
 * `task.<call>.<field>` and `<variable>`, typed by the task's declaration), or undefined if it
 * reads something else that is only known during a run (history, outcome) or has no declared type.
 * With `runtime`, `held(...)`, `count(...)` and fields of `last(...)` become free arguments too
 * (named as written; the names of the `last(...)` fields, whose types are unknown, are added to
 * `runtime.history`), and the variables in `runtime.bound` become the arguments they are bound to.
 */
function freeConstants(
  expression: Expression,
  policy: Policy,
  free: Map<string, FieldType>,
  entities: EntitiesByVariable,
  runtime?: { history: Set<string>; bound: Record<string, PathSegment[]> },
): Expression | undefined {
  const history = runtime?.history;
  const taskField = (call: string, field: string): FieldType | undefined =>
    policy.taskCalls.get(call)?.parameters.find((parameter) => parameter.name === field)?.type;
  const substitute = (node: Expression): Expression | undefined => {
    switch (node.kind) {
      case "literal":
        return node;
      case "reference": {
        if (node.root === "arguments") return node;
        let name: string;
        let type: FieldType | undefined;
        if (node.root === "task" && node.path.length === 2) {
          name = `task.${node.path.join(".")}`;
          type = taskField(String(node.path[0]), String(node.path[1]));
        } else if (node.root === "variable" && node.path.length === 1) {
          name = String(node.path[0]);
          const argument = runtime?.bound[name];
          if (argument !== undefined) return { ...node, root: "arguments", path: argument };
          const entity = entities.get(name);
          const source = entity?.sources[0];
          const field = source?.bind[name];
          type = source && field ? taskField(source.taskCall, field) : undefined;
        } else {
          return undefined;
        }
        if (type === undefined) return undefined;
        free.set(name, type);
        return { ...node, root: "arguments", path: [name] };
      }
      case "list": {
        const elements = node.elements.map(substitute);
        return elements.every((element) => element !== undefined)
          ? { ...node, elements: elements as Expression[] }
          : undefined;
      }
      case "unary": {
        const operand = substitute(node.operand);
        return operand && { ...node, operand };
      }
      case "binary": {
        const left = substitute(node.left);
        const right = substitute(node.right);
        return left && right && { ...node, left, right };
      }
      case "method": {
        const target = substitute(node.target);
        const args = node.arguments.map(substitute);
        return target && args.every((argument) => argument !== undefined)
          ? { ...node, target, arguments: args as Expression[] }
          : undefined;
      }
      case "call": {
        if (history && (node.name === "held" || node.name === "count")) {
          const name = formatExpression(node);
          free.set(name, node.name === "held" ? "boolean" : "integer");
          return freeVariable(name, node);
        }
        if (node.name !== "len") return undefined;
        const args = node.arguments.map(substitute);
        return args.every((argument) => argument !== undefined)
          ? { ...node, arguments: args as Expression[] }
          : undefined;
      }
      case "member": {
        let base: Expression = node;
        while (base.kind === "member") base = base.object;
        if (!history || base.kind !== "call" || base.name !== "last") return undefined;
        const name = formatExpression(node);
        history.add(name);
        return freeVariable(name, node);
      }
    }
  };
  return substitute(expression);
}

/** A history value as a free variable: an argument reference named after the expression it replaces. */
function freeVariable(name: string, node: Expression): Expression {
  return { kind: "reference", root: "arguments", path: [name], offset: node.offset, length: node.length };
}
