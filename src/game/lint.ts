import type { SourceLocation } from "../errors/index.js";
import { referencesOf, type Value } from "../expression/index.js";
import { Run, type TaskCall } from "../monitor/index.js";
import type { Policy } from "../policy/index.js";
import type { CandidateCall } from "./candidates.js";
import { StrategyTemplate } from "./template.js";

export interface LintFinding {
  severity: "error" | "warning";
  kind:
    | "contradiction"
    | "trap"
    | "vacuous"
    | "dead-proposition"
    | "shadowed"
    | "unsatisfiable-constraints"
    | "unused";
  rules: string[];
  message: string;
  /** For traps: the shortest sequence of calls that leads into one. */
  example?: string[];
  /** For findings about one constraint: where it is written. */
  location?: SourceLocation;
}

export interface LintOptions {
  /** Joint states the trap search may visit. Default 5,000. */
  maxStates?: number;
}

/**
 * Static checks of a policy, played on a run with one binding per entity:
 * - error `contradiction`: no compliant run exists at all;
 * - error `trap`: a state reachable without breaking any single rule from which no compliant
 *   finish exists (rules that only conflict in combination), with a shortest example;
 * - warning `vacuous`: a rule no run can break;
 * - warning `dead-proposition`: a proposition of a rule that no call can make true;
 * - warning `shadowed`: a rule that is only ever broken together with another rule.
 */
export function lintPolicy(policy: Policy, options: LintOptions = {}): LintFinding[] {
  const findings: LintFinding[] = [];
  const run = Run.start(policy, syntheticTask(policy));
  const template = new StrategyTemplate(run, { maxStates: options.maxStates ?? 5_000 });
  const initial = run.beliefs[0] as Int32Array;
  const ruleIds = (indices: number[]): string[] => [
    ...new Set(indices.map((index) => run.instances[index]?.rule.id as string)),
  ];

  const maxStates = options.maxStates ?? 5_000;
  const start = template.distance(initial);
  if (start === Number.POSITIVE_INFINITY) {
    const rules = ruleIds(conflictingInstances(template, initial));
    findings.push({
      severity: "error",
      kind: "contradiction",
      rules,
      message: `no compliant run exists: ${rulesWhere(policy, rules)} cannot all be satisfied`,
    });
  } else {
    const trap = findTrap(template, initial, maxStates);
    if (trap) {
      const rules = ruleIds(conflictingInstances(template, trap.state));
      findings.push({
        severity: "error",
        kind: "trap",
        rules,
        message: `after ${trap.path.join(", ")} no compliant finish exists, though no single rule is broken: ${rulesWhere(policy, rules)} conflict there`,
        example: trap.path,
      });
    }
  }

  policy.rules.forEach((rule) => {
    const automaton = rule.automaton;
    if (automaton.colour(automaton.initial) === "PERM_SAT") {
      findings.push({
        severity: "warning",
        kind: "vacuous",
        rules: [rule.id],
        message: `rule ${rule.id} can never be broken`,
      });
    }
    const letters = automaton.alphabet;
    automaton.atoms.forEach((atom, bit) => {
      if (!letters.some((mask) => (mask >>> bit) & 1)) {
        findings.push({
          severity: "warning",
          kind: "dead-proposition",
          rules: [rule.id],
          message: `in rule ${rule.id}, ${atom.key} can never hold (no call and outcome of its tool makes it true)`,
        });
      }
    });
  });

  findings.push(...shadowedRules(template, initial));
  findings.push(...unusedDeclarations(policy));
  return findings;
}

/**
 * Manual sentences no rule or constraint cites (by its id, an id `<sentence>_…`, or the sentence's
 * id named in its own `sentence`), and propositions no rule, constraint or `held()` reads. A
 * proposition with entities whose tool `last`, `count` or `values` reads is used: it ties that
 * tool's calls to bindings, and so decides which calls those functions see.
 */
function unusedDeclarations(policy: Policy): LintFinding[] {
  const entries = [...policy.rules, ...policy.constraints];
  const citesSentence = (id: string) =>
    entries.some(
      (entry) =>
        entry.id === id ||
        entry.id.startsWith(`${id}_`) ||
        new RegExp(`(^|[^A-Za-z0-9_])${id}([^A-Za-z0-9_]|$)`).test(entry.sentence),
    );
  const read = new Set([
    ...policy.rules.flatMap((rule) => rule.propositions.map((proposition) => proposition.name)),
    ...policy.constraints.map((constraint) => constraint.on.name),
  ]);
  const expressions = [
    ...policy.constraints.map((constraint) => constraint.require),
    ...[...policy.propositions.values()].flatMap((proposition) => [proposition.when, proposition.outcome]),
  ];
  const toolsInHistory = new Set<string>();
  for (const expression of expressions)
    for (const reference of expression ? referencesOf(expression) : []) {
      const [name] = reference.path;
      if (typeof name !== "string") continue;
      if (reference.kind === "held") read.add(name);
      else if (reference.kind === "last" || reference.kind === "count" || reference.kind === "values")
        toolsInHistory.add(name);
    }
  for (const proposition of policy.propositions.values())
    if (proposition.entities.length > 0 && toolsInHistory.has(proposition.tool)) read.add(proposition.name);
  return [
    ...Object.keys(policy.manual)
      .filter((id) => !citesSentence(id))
      .map((id) => ({
        severity: "warning" as const,
        kind: "unused" as const,
        rules: [],
        message: `manual sentence ${id} is cited by no rule or constraint (formalize it, or say in a comment why not)`,
      })),
    ...[...policy.propositions.values()]
      .filter((proposition) => !read.has(proposition.name))
      .map((proposition) => ({
        severity: "warning" as const,
        kind: "unused" as const,
        rules: [],
        message: `proposition ${proposition.key} is read by no rule or constraint`,
      })),
  ];
}

/**
 * A smallest set of block-mode instances that together leave `state` no compliant finish: each
 * is dropped in turn while the others still have none (minimal: none can go, though another
 * set may be smaller).
 */
function conflictingInstances(template: StrategyTemplate, state: Int32Array): number[] {
  const { run, maxStates, game } = template;
  const all = run.instances.map((_, index) => index);
  let kept = all.filter((index) => run.instances[index]?.rule.mode === "block");
  for (const candidate of [...kept]) {
    const without = kept.filter((index) => index !== candidate);
    const exclude = new Set(all.filter((index) => !without.includes(index)));
    if (new StrategyTemplate(run, { maxStates, exclude, game }).distance(state) === Number.POSITIVE_INFINITY)
      kept = without;
  }
  return kept;
}

/** `R2 (policy.yaml:31:5) and R3 (policy.yaml:32:5)`. */
function rulesWhere(policy: Policy, ids: readonly string[]): string {
  const named = ids.map((id) => {
    const rule = policy.rules.find((candidate) => candidate.id === id);
    if (!rule) return id;
    const { file, line, column } = rule.location;
    return `${id} (${[file, line, column].filter((part) => part !== undefined).join(":")})`;
  });
  return named.length <= 1
    ? `rule ${named.join("")}`
    : `rules ${named.slice(0, -1).join(", ")} and ${named.at(-1)}`;
}

/** One task call of each kind an entity is bound from, with placeholder arguments. */
export function syntheticTask(policy: Policy): TaskCall[] {
  const names = new Set(
    [...policy.entities.values()].flatMap((entity) => entity.sources.map((source) => source.taskCall)),
  );
  return [...names].map((name) => {
    const call = policy.taskCalls.get(name);
    const args: Record<string, Value> = {};
    for (const parameter of call?.parameters ?? []) {
      const type = parameter.type;
      args[parameter.name] =
        typeof type === "object"
          ? (type.enum[0] ?? null)
          : type === "boolean"
            ? false
            : type === "number" || type === "integer"
              ? 0
              : `<${parameter.name}>`;
    }
    return { name, arguments: args };
  });
}

export function describeCandidate(candidate: CandidateCall, caseIndex: number): string {
  const args = Object.entries(candidate.arguments).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  const outcome = candidate.cases.length > 1 ? ` → ${candidate.cases[caseIndex]?.description}` : "";
  return `${candidate.tool}(${args.join(", ")})${outcome}`;
}

/** Breadth-first over states where no single rule is lost; the first with infinite distance is a trap. */
function findTrap(
  template: StrategyTemplate,
  initial: Int32Array,
  maxStates: number,
): { state: Int32Array; path: string[] } | undefined {
  const seen = new Set([initial.join(",")]);
  let layer: { state: Int32Array; path: string[] }[] = [{ state: initial, path: [] }];
  while (layer.length > 0 && seen.size <= maxStates) {
    const next: typeof layer = [];
    for (const { state, path } of layer) {
      for (const candidate of template.candidates) {
        for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
          const successor = template.successor(state, candidate, caseIndex);
          const key = successor.join(",");
          if (seen.has(key) || template.doomedInstances(successor).length > 0) continue;
          seen.add(key);
          const step = { state: successor, path: [...path, describeCandidate(candidate, caseIndex)] };
          if (template.distance(successor) === Number.POSITIVE_INFINITY) return step;
          next.push(step);
        }
      }
    }
    layer = next;
  }
  return undefined;
}

/** Rule A is shadowed by rule B if no reachable state has A lost while B is not (and A can be lost). */
function shadowedRules(template: StrategyTemplate, initial: Int32Array): LintFinding[] {
  const run = template.run;
  const lostSomewhere = new Set<number>();
  const lostAlone = new Map<number, Set<number>>();
  const colourLost = (state: Int32Array, index: number): boolean =>
    run.instances[index]?.rule.automaton.colour(state[index] as number) === "PERM_VIOL";
  const seen = new Set([initial.join(",")]);
  const queue = [initial];
  while (queue.length > 0 && seen.size <= 5_000) {
    const state = queue.shift() as Int32Array;
    const lost = run.instances.map((_, index) => colourLost(state, index));
    lost.forEach((isLost, index) => {
      if (!isLost) return;
      lostSomewhere.add(index);
      const others = lostAlone.get(index) ?? new Set<number>();
      lost.forEach((otherLost, other) => {
        if (!otherLost) others.add(other);
      });
      lostAlone.set(index, others);
    });
    for (const candidate of template.candidates) {
      for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
        const successor = template.successor(state, candidate, caseIndex);
        const key = successor.join(",");
        if (!seen.has(key)) {
          seen.add(key);
          queue.push(successor);
        }
      }
    }
  }
  const findings: LintFinding[] = [];
  for (const index of lostSomewhere) {
    const instance = run.instances[index];
    if (!instance || instance.rule.mode === "block") continue;
    for (const [other, otherInstance] of run.instances.entries()) {
      if (other === index || otherInstance.rule.mode !== "block") continue;
      if (!lostAlone.get(index)?.has(other)) {
        findings.push({
          severity: "warning",
          kind: "shadowed",
          rules: [instance.rule.id, otherInstance.rule.id],
          message: `rule ${instance.rule.id} (${instance.rule.mode}) is only ever broken together with rule ${otherInstance.rule.id} (block), which already stops it`,
        });
      }
    }
  }
  return findings;
}
