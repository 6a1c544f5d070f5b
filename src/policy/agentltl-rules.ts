import { MentorError } from "../errors/index.js";
import { type AgentltlTemplate, agentltlTemplates, type Formula } from "../logic/index.js";
import type { RawPolicy } from "./schema.js";
import type { YamlPath } from "./source.js";

type RawRule = RawPolicy["rules"][number];

/** What a rule of AgentLTL's catalogue needs from the policy compiler, each naming a field of the rule. */
export interface AgentltlRuleContext {
  /** The formula at the field (a proposition, usually), or undefined after reporting why not. */
  formula(text: string, field: YamlPath): Formula | undefined;
  problem(message: string, field: YamlPath): void;
}

export function isAgentltlTemplate(template: string | undefined): template is AgentltlTemplate {
  return template !== undefined && Object.hasOwn(agentltlTemplates, template);
}

/**
 * Which fields each template reads: `a` and `b` are formulas (`a` a list for `all` ones; `b?`
 * optional), `n` and `m` counts. `CalledWith` and `CalledWithResult` are `Called` of a
 * proposition whose `when` (arguments) or `outcome` (result) says what AgentLTL matches.
 */
const fields: Record<AgentltlTemplate, readonly ("a" | "all" | "b" | "b?" | "n" | "m" | "op")[]> = {
  Called: ["a"],
  CalledWith: ["a"],
  CalledWithResult: ["a"],
  CalledNTimes: ["a", "n", "op"],
  Before: ["a", "b"],
  After: ["a", "b"],
  AllBefore: ["all", "b"],
  BranchCalled: ["a", "b?"],
  CalledInOrder: ["all"],
  InstanceBefore: ["a", "n", "b", "m"],
  WithinSteps: ["a", "b", "n"],
};

/** A rule `template: <AgentLTL's name>` as its formula, or undefined after reporting each problem. */
export function agentltlRuleFormula(
  rule: RawRule,
  template: AgentltlTemplate,
  context: AgentltlRuleContext,
): Formula | undefined {
  const wanted = fields[template];
  let complete = true;
  const need = (present: boolean, field: string, what: string): void => {
    if (present) return;
    context.problem(`template ${template} needs \`${field}\` (${what})`, []);
    complete = false;
  };
  for (const field of ["b", "n", "m", "op"] as const) {
    const allowed = wanted.includes(field) || (field === "b" && wanted.includes("b?"));
    if (rule[field] !== undefined && !allowed) {
      context.problem(`template ${template} has no \`${field}\` (it takes ${describe(wanted)})`, [field]);
      complete = false;
    }
  }
  const list = wanted.includes("all");
  need(rule.a !== undefined, "a", list ? "a list of propositions" : "a proposition");
  if (rule.a !== undefined && Array.isArray(rule.a) !== list) {
    context.problem(`template ${template} takes ${list ? "a list" : "one formula"} as \`a\``, ["a"]);
    complete = false;
  }
  if (wanted.includes("b")) need(rule.b !== undefined, "b", "a proposition");
  if (wanted.includes("n")) need(rule.n !== undefined, "n", "a whole number");
  if (wanted.includes("m")) need(rule.m !== undefined, "m", "a whole number ≥ 1");
  if (!complete) return undefined;
  const texts = Array.isArray(rule.a) ? rule.a : [rule.a as string];
  const as = texts.map((text, index) => context.formula(text, list ? ["a", index] : ["a"]));
  const b = rule.b === undefined ? undefined : context.formula(rule.b, ["b"]);
  if (as.some((formula) => formula === undefined) || (rule.b !== undefined && b === undefined))
    return undefined;
  const [a] = as as Formula[];
  try {
    switch (template) {
      case "Called":
      case "CalledWith":
      case "CalledWithResult":
        return agentltlTemplates[template](a as Formula);
      case "CalledNTimes":
        return agentltlTemplates.CalledNTimes(a as Formula, rule.n as number, rule.op ?? "==");
      case "AllBefore":
        return agentltlTemplates.AllBefore(as as Formula[], b as Formula);
      case "CalledInOrder":
        return agentltlTemplates.CalledInOrder(as as Formula[]);
      case "BranchCalled":
        return agentltlTemplates.BranchCalled(a as Formula, b);
      case "InstanceBefore":
        return agentltlTemplates.InstanceBefore(
          a as Formula,
          rule.n as number,
          b as Formula,
          rule.m as number,
        );
      case "WithinSteps":
        return agentltlTemplates.WithinSteps(a as Formula, b as Formula, rule.n as number);
      default:
        return agentltlTemplates[template](a as Formula, b as Formula);
    }
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    context.problem(`template ${template}: ${error.message}`, ["n"]);
    return undefined;
  }
}

function describe(wanted: readonly string[]): string {
  return wanted
    .map((field) => (field === "all" ? "a (a list)" : field.replace("?", " (optional)")))
    .join(", ");
}
