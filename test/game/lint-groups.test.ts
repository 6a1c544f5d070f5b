import assert from "node:assert/strict";
import { test } from "node:test";
import { seededRandom } from "../../src/base/random.js";
import { type LintFinding, lintPolicy, StrategyTemplate } from "../../src/game/index.js";
import { syntheticTask } from "../../src/game/lint.js";
import { type Policy, parsePolicy } from "../../src/policy/index.js";
import { type Instance, Run } from "../../src/run/index.js";

// lintPolicy checks each group of linked rules on its own (src/game/group-game.ts). On random
// small policies it must find what the whole policy's joint game finds (the reference, searched
// without a budget): a contradiction exactly when no compliant run exists, else a trap exactly
// when one is reachable, the shortest example as long as the joint game's shortest, and the same
// shadowed pairs.

const TEMPLATES = [
  "existence",
  "absence",
  "response",
  "precedence",
  "chainResponse",
  "notSuccession",
  "respondedExistence",
  "notCoExistence",
  "choice",
  "succession",
];
const UNARY = new Set(["existence", "absence"]);

function randomPolicy(seed: number): Policy {
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const tools = ["t0", "t1", "t2", "t3", "t4"];
  const propositions = tools.flatMap((tool) => [tool, `${tool}_ok`]);
  const rules = Array.from({ length: 2 + Math.floor(next() * 4) }, (_, index) => {
    const template = pick(TEMPLATES);
    const mode = pick(["block", "block", "block", "warn", "record"]);
    const b = UNARY.has(template) ? "" : `, b: ${pick(propositions)}`;
    return `  - {id: R${index}, template: ${template}, a: ${pick(propositions)}${b}, mode: ${mode}}`;
  });
  const text = [
    "policy: random",
    "manual:",
    ...rules.map((_, index) => `  R${index}: Rule ${index}.`),
    "tools:",
    ...tools.map((tool) => `  ${tool}: {}`),
    "propositions:",
    ...tools.flatMap((tool) => [
      `  ${tool}: {tool: ${tool}}`,
      `  ${tool}_ok: {tool: ${tool}, outcome: "o.ok == true"}`,
    ]),
    "rules:",
    ...rules,
  ].join("\n");
  return parsePolicy(`${text}\n`, `random-${seed}.yaml`);
}

/** What the joint game of the whole policy says (the breadth-first searches lint made before groups). */
function reference(policy: Policy): { contradiction: boolean; trapDepth?: number; shadowed: string[] } {
  const run = Run.start(policy, syntheticTask(policy));
  const template = new StrategyTemplate(run, { maxStates: 1_000_000 });
  const initial = run.beliefs[0] as Int32Array;
  const contradiction = template.distance(initial) === Number.POSITIVE_INFINITY;
  let trapDepth: number | undefined;
  if (!contradiction) {
    const seen = new Set([initial.join(",")]);
    let layer = [initial];
    search: for (let depth = 1; layer.length > 0; depth++) {
      const next: Int32Array[] = [];
      for (const state of layer)
        for (const candidate of template.candidates)
          for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
            const successor = template.successor(state, candidate, caseIndex);
            const key = successor.join(",");
            if (seen.has(key) || template.doomedInstances(successor).length > 0) continue;
            seen.add(key);
            if (template.distance(successor) === Number.POSITIVE_INFINITY) {
              trapDepth = depth;
              break search;
            }
            next.push(successor);
          }
      layer = next;
    }
  }
  // Shadowed: A (not block) is lost in some reachable state, and B (block) is lost in every one of them.
  const lost = (state: Int32Array, index: number) =>
    (run.instances[index] as Instance).rule.automaton.colour(state[index] as number) === "PERM_VIOL";
  const seen = new Set([initial.join(",")]);
  const queue = [initial];
  const lostSomewhere = new Set<number>();
  const lostAlone = new Map<number, Set<number>>();
  for (let at = 0; at < queue.length; at++) {
    const state = queue[at] as Int32Array;
    run.instances.forEach((_, index) => {
      if (!lost(state, index)) return;
      lostSomewhere.add(index);
      const others = lostAlone.get(index) ?? new Set<number>();
      run.instances.forEach((__, other) => {
        if (!lost(state, other)) others.add(other);
      });
      lostAlone.set(index, others);
    });
    for (const candidate of template.candidates)
      for (let caseIndex = 0; caseIndex < candidate.cases.length; caseIndex++) {
        const successor = template.successor(state, candidate, caseIndex);
        if (seen.has(successor.join(","))) continue;
        seen.add(successor.join(","));
        queue.push(successor);
      }
  }
  const shadowed: string[] = [];
  for (const index of lostSomewhere) {
    const rule = (run.instances[index] as Instance).rule;
    if (rule.mode === "block") continue;
    run.instances.forEach((other, otherIndex) => {
      if (otherIndex !== index && other.rule.mode === "block" && !lostAlone.get(index)?.has(otherIndex))
        shadowed.push(`${rule.id}>${other.rule.id}`);
    });
  }
  return { contradiction, ...(trapDepth === undefined ? {} : { trapDepth }), shadowed: shadowed.sort() };
}

function byGroups(findings: LintFinding[]): {
  contradiction: boolean;
  trapDepth?: number;
  shadowed: string[];
} {
  const contradiction = findings.some((finding) => finding.kind === "contradiction");
  const depths = findings
    .filter((finding) => finding.kind === "trap")
    .map((finding) => finding.example?.length as number);
  return {
    contradiction,
    ...(contradiction || depths.length === 0 ? {} : { trapDepth: Math.min(...depths) }),
    shadowed: findings
      .filter((finding) => finding.kind === "shadowed")
      .map((finding) => finding.rules.join(">"))
      .sort(),
  };
}

test("lint by groups finds the joint game's contradictions, shortest traps and shadowed rules (300 random policies)", () => {
  const kinds = new Set<string>();
  for (let seed = 1; seed <= 300; seed++) {
    const policy = randomPolicy(seed);
    const findings = lintPolicy(policy);
    assert.ok(!findings.some((finding) => finding.kind === "unchecked"), `seed ${seed}: within the budget`);
    for (const finding of findings) kinds.add(finding.kind);
    assert.deepEqual(byGroups(findings), reference(policy), `seed ${seed}`);
  }
  // The random policies reach every verdict the comparison is about.
  for (const kind of ["contradiction", "trap", "shadowed"]) assert.ok(kinds.has(kind), kind);
});
