import type { SourceLocation } from "../errors/index.js";
import { isHistoryFunctionName, referencesOf, type Value } from "../expression/index.js";
import { Automaton } from "../logic/index.js";
import type { Policy, RuleSpec } from "../policy/index.js";
import { Run, type TaskCall } from "../run/index.js";
import { candidateCalls } from "./candidates.js";
import { type Exploration, type ExploredState, type GroupGame, groupGames } from "./group-game.js";

export interface LintFinding {
  severity: "error" | "warning";
  kind:
    | "contradiction"
    | "trap"
    | "vacuous"
    | "dead-proposition"
    | "shadowed"
    | "unsatisfiable-constraints"
    | "unused"
    | "unpinned"
    | "unchecked";
  rules: string[];
  message: string;
  /** For traps: the shortest sequence of calls that leads into one. */
  example?: string[];
  /** For findings about one rule, constraint or proposition: where it is written. */
  location?: SourceLocation;
}

export interface LintOptions {
  /** States each group's search may visit (see `lintPolicy`). Default 5,000. */
  maxStates?: number;
}

/**
 * Static checks of a policy, played on a run with one binding per entity:
 * - error `contradiction`: no compliant run exists at all;
 * - error `trap`: a state reachable without breaking any single rule from which no compliant
 *   finish exists (rules that only conflict in combination), with a shortest example;
 * - error `vacuous`: a rule no run can break (it constrains nothing);
 * - error `dead-proposition`: a proposition of a rule that no call its instances read can make
 *   true (see `deadAtoms`; `lintConstraints` adds those whose `when` can never hold);
 * - warning `unpinned`: a proposition whose `when` does not say which binding a call names;
 * - warning `shadowed`: a rule that is only ever broken together with another rule;
 * - warning `unchecked`: rules whose game has more than `maxStates` states, so that the checks
 *   above could not finish for them.
 *
 * The game checks run per group of rule instances that some call links (`GroupGame`): rules no
 * call links cannot conflict, trap or shadow one another, and each group gets its own budget of
 * `maxStates` states, so the cost grows with the policy's groups, not with their product.
 */
export function lintPolicy(policy: Policy, options: LintOptions = {}): LintFinding[] {
  const maxStates = options.maxStates ?? 5_000;
  const run = Run.start(policy, syntheticTask(policy));
  const candidates = candidateCalls(run);
  const ruleIds = (indices: readonly number[]): string[] => [
    ...new Set(indices.map((index) => run.instances[index]?.rule.id as string)),
  ];
  const findings: LintFinding[] = [];
  const unchecked: LintFinding[] = [];
  const notChecked = (instances: readonly number[], checks: string): void => {
    const rules = ruleIds(instances);
    unchecked.push({
      severity: "warning",
      kind: "unchecked",
      rules,
      message: `${rulesWhere(policy, rules)} ${rules.length === 1 ? "was" : "were"} not checked for ${checks}: their game has more than ${maxStates} states`,
    });
  };

  for (const game of groupGames(run, candidates, { instances: "block", maxStates })) {
    const exploration = game.explore({ skipDoomed: true });
    const finishing = game.finishing(exploration);
    // Cut by the budget: a state that reaches no finish among the explored ones may reach one
    // past them (a finish found is certain; a trap is not).
    if (!exploration.complete) {
      notChecked(game.group.instances, finishing[0] ? "traps" : "contradictions and traps");
      continue;
    }
    if (!finishing[0]) {
      const rules = ruleIds(conflictingInstances(game, game.start()));
      findings.push({
        severity: "error",
        kind: "contradiction",
        rules,
        message: `no compliant run exists: ${rulesWhere(policy, rules)} cannot all be satisfied`,
      });
      continue;
    }
    // Breadth-first order: the first state with no compliant finish has a shortest example.
    const trap = finishing.indexOf(false);
    if (trap < 0) continue;
    const state = exploration.states[trap] as ExploredState;
    const path = game.path(exploration, trap);
    const rules = ruleIds(conflictingInstances(game, state.state));
    findings.push({
      severity: "error",
      kind: "trap",
      rules,
      message: `after ${path.join(", ")} no compliant finish exists, though no single rule is broken: ${rulesWhere(policy, rules)} conflict there`,
      example: path,
    });
  }

  for (const rule of policy.rules) findings.push(...vacuityFindings(policy, rule, deadAtoms(policy, rule)));
  findings.push(...unpinnedEntities(policy));

  for (const game of groupGames(run, candidates, { instances: "all", maxStates })) {
    // Shadowing is of a warn or record rule by a block rule of its group.
    const modes = new Set(game.group.instances.map((index) => run.instances[index]?.rule.mode));
    if (!modes.has("block") || modes.size === 1) continue;
    const exploration = game.explore({ skipDoomed: false });
    if (exploration.complete) findings.push(...shadowedRules(game, exploration));
    else notChecked(game.group.instances, "shadowing");
  }
  findings.push(...unusedDeclarations(policy));
  findings.push(...unchecked);
  return findings;
}

/**
 * The atoms of a rule that no letter its instances can read makes true, with why: no call of the
 * proposition's tool and no outcome makes it true, or (a proposition without entities in a rule
 * over entities) no call of its tool names a binding of the rule, so no instance ever reads it.
 */
function deadAtoms(policy: Policy, rule: RuleSpec): Map<string, string> {
  const automaton = rule.automaton;
  const dead = new Map<string, string>();
  automaton.atoms.forEach((atom, bit) => {
    if (automaton.alphabet.some((mask) => (mask >>> bit) & 1)) return;
    const tool = policy.propositions.get(atom.name)?.tool ?? atom.name;
    const entities = rule.entities.join(" or ");
    dead.set(
      atom.key,
      atom.args.length === 0 && rule.entities.length > 0
        ? `${atom.key} has no entity, and no ${tool} call names a ${entities} (no proposition over ${entities} on ${tool}), while each instance of the rule is about one ${entities} and reads only the calls that name it`
        : `no call of ${tool} and no outcome of it makes it true`,
    );
  });
  return dead;
}

/**
 * Errors for a rule's atoms that can never hold (`dead`: atom key → why) and, if with them
 * the rule can never be broken, `vacuous`. A rule already vacuous over its own alphabet is
 * reported only where `dead` is read from that alphabet (`lintPolicy`), not again.
 */
export function vacuityFindings(
  policy: Policy,
  rule: RuleSpec,
  dead: ReadonlyMap<string, string>,
  alreadyReported = false,
): LintFinding[] {
  const where = rulesWhere(policy, [rule.id]);
  const findings: LintFinding[] = [...dead].map(([key, reason]) => ({
    severity: "error",
    kind: "dead-proposition",
    rules: [rule.id],
    message: `in ${where}, ${key} can never hold: ${reason}`,
    location: rule.location,
  }));
  const { automaton } = rule;
  if (alreadyReported && automaton.colour(automaton.initial) === "PERM_SAT") return findings;
  const deadBits = automaton.atoms.flatMap((atom, bit) => (dead.has(atom.key) ? [bit] : []));
  const letters = automaton.alphabet
    .filter((mask) => deadBits.every((bit) => !((mask >>> bit) & 1)))
    .map((mask) => automaton.atoms.filter((_, bit) => (mask >>> bit) & 1).map((atom) => atom.key));
  const live = deadBits.length === 0 ? automaton : new Automaton(rule.formula, { alphabet: letters });
  if (live.colour(live.initial) === "PERM_SAT")
    findings.push({
      severity: "error",
      kind: "vacuous",
      rules: [rule.id],
      message: `${where} can never be broken${dead.size > 0 ? ` (${[...dead.keys()].join(", ")} can never hold in it)` : ""}: it constrains nothing`,
      location: rule.location,
    });
  return findings;
}

/**
 * Propositions a rule reads whose `when` does not say which binding of an entity a call names (no
 * `a.<argument> == <variable>` for each of its variables): a call of their tool names every
 * binding of that entity for which the `when` holds, so it is an event of every such binding's
 * instances (a note of kind counselling is about every prescription), which is rarely what was
 * meant. A proposition without `when` says so on purpose (a transfer to a person is about every
 * open request) and is not reported.
 */
function unpinnedEntities(policy: Policy): LintFinding[] {
  const read = new Set(policy.rules.flatMap((rule) => rule.propositions));
  return [...read].flatMap((proposition) =>
    proposition.entities.flatMap((name) => {
      const entity = policy.entities.get(name);
      if (!entity || !proposition.when) return [];
      if (entity.variables.every((variable) => variable in proposition.bindingPattern)) return [];
      const pattern = entity.variables.map((variable) => `a.<argument> == ${variable}`).join(" && ");
      return [
        {
          severity: "warning" as const,
          kind: "unpinned" as const,
          rules: policy.rules
            .filter((rule) => rule.propositions.includes(proposition))
            .map((rule) => rule.id),
          message: `proposition ${proposition.key}${proposition.location ? ` (${placeOf(proposition.location)})` : ""} does not say which ${name} a ${proposition.tool} call is about (its when has no ${pattern}): every ${proposition.tool} call it holds for is about every ${name}`,
          ...(proposition.location ? { location: proposition.location } : {}),
        },
      ];
    }),
  );
}

/**
 * Manual sentences no rule or constraint cites (by its id, an id `<sentence>_…`, or the sentence's
 * id named in its own `sentence`), and propositions no rule, constraint or `held()` reads. A
 * proposition with entities whose tool `last`, `outcomes`, `count` or `values` reads is used: it ties that
 * tool's calls to bindings, and so decides which calls those functions see.
 */
function unusedDeclarations(policy: Policy): LintFinding[] {
  // What cites a sentence id (a name): an entry's id, the part of an entry's id before one of its
  // `_`, a name in an entry's sentence. Gathered once: per sentence they would cost the policy.
  const cited = new Set<string>();
  for (const entry of [...policy.rules, ...policy.constraints]) {
    cited.add(entry.id);
    for (let at = entry.id.indexOf("_"); at >= 0; at = entry.id.indexOf("_", at + 1))
      cited.add(entry.id.slice(0, at));
    for (const name of entry.sentence.split(/[^A-Za-z0-9_]+/)) cited.add(name);
  }
  const citesSentence = (id: string) => cited.has(id);
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
      else if (isHistoryFunctionName(reference.kind)) toolsInHistory.add(name);
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
 * A smallest set of a group's block-mode instances that together leave `state` no compliant
 * finish: each is dropped in turn while the others still have none (minimal: none can go, though
 * another set may be smaller). The run's instance indices.
 */
function conflictingInstances(game: GroupGame, state: Int32Array): number[] {
  let kept = game.blocks;
  for (const candidate of [...kept]) {
    const without = kept.filter((position) => position !== candidate);
    if (game.distance(state, { positions: without }) === Number.POSITIVE_INFINITY) kept = without;
  }
  return kept.map((position) => game.instance(position));
}

/** `R2 (policy.yaml:31:5) and R3 (policy.yaml:32:5)`. */
function rulesWhere(policy: Policy, ids: readonly string[]): string {
  const named = ids.map((id) => {
    const rule = policy.rules.find((candidate) => candidate.id === id);
    return rule ? `${id} (${placeOf(rule.location)})` : id;
  });
  return named.length <= 1
    ? `rule ${named.join("")}`
    : `rules ${named.slice(0, -1).join(", ")} and ${named.at(-1)}`;
}

/** `policy.yaml:31:5`. */
function placeOf({ file, line, column }: SourceLocation): string {
  return [file, line, column].filter((part) => part !== undefined).join(":");
}

/**
 * One task call of each kind an entity is bound from, with placeholder arguments. A string
 * parameter several of them share gets a value per call (`<request_loan.username>`): the same
 * value would make every call of the policy name every entity keyed by it, and the game over all
 * of them at once grows past what lint can explore.
 */
export function syntheticTask(policy: Policy): TaskCall[] {
  const names = new Set(
    [...policy.entities.values()].flatMap((entity) => entity.sources.map((source) => source.taskCall)),
  );
  const uses = new Map<string, number>();
  for (const name of names)
    for (const { name: parameter } of policy.taskCalls.get(name)?.parameters ?? [])
      uses.set(parameter, (uses.get(parameter) ?? 0) + 1);
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
              : (uses.get(parameter.name) ?? 0) > 1
                ? `<${name}.${parameter.name}>`
                : `<${parameter.name}>`;
    }
    return { name, arguments: args };
  });
}

/**
 * Rule A (not block) is shadowed by rule B (block, in A's group) if no reachable state has A lost
 * while B is not (and A can be lost). Rules in groups no call links are never shadowed: each
 * can be lost while the other keeps its state.
 */
function shadowedRules(game: GroupGame, exploration: Exploration): LintFinding[] {
  const { run, group } = game;
  const lostSomewhere = new Set<number>();
  const lostAlone = new Map<number, Set<number>>();
  for (const { state } of exploration.states) {
    const lost = group.instances.map((_, position) => game.lost(state, position));
    lost.forEach((isLost, position) => {
      if (!isLost) return;
      lostSomewhere.add(position);
      const others = lostAlone.get(position) ?? new Set<number>();
      lost.forEach((otherLost, other) => {
        if (!otherLost) others.add(other);
      });
      lostAlone.set(position, others);
    });
  }
  const findings: LintFinding[] = [];
  for (const position of lostSomewhere) {
    const instance = run.instances[game.instance(position)];
    if (!instance || instance.rule.mode === "block") continue;
    for (const other of game.blocks) {
      if (other === position || lostAlone.get(position)?.has(other)) continue;
      const otherInstance = run.instances[game.instance(other)];
      if (!otherInstance) continue;
      findings.push({
        severity: "warning",
        kind: "shadowed",
        rules: [instance.rule.id, otherInstance.rule.id],
        message: `rule ${instance.rule.id} (${instance.rule.mode}) is only ever broken together with rule ${otherInstance.rule.id} (block), which already stops it`,
      });
    }
  }
  return findings;
}
