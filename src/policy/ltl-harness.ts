import { isMap, stringify } from "yaml";
import { MentorError } from "../errors/index.js";
import { atomsOf, parseFormula } from "../logic/index.js";
import type { PolicySource, YamlPath } from "./source.js";
import type { Policy } from "./types.js";

/**
 * The LTL Guardrail Harness's rulebooks (ltl-harness 0.2.0, `engine/rulebook.py` and
 * `engine/formulas.py`), loaded as they are: a rulebook is read, checked with every problem
 * located in its own file, and written as the mentor policy that means the same (docs/policy.md,
 * "Coming from the LTL harness or AgentLTL").
 */

/** A YAML file is a rulebook when it has `activities` and no `policy`. */
export function isLtlHarnessRulebook(source: PolicySource): boolean {
  const contents = source.document.contents;
  return (
    source.document.errors.length === 0 &&
    isMap(contents) &&
    contents.has("activities") &&
    !contents.has("policy")
  );
}

/** The harness's DECLARE catalogue, by its names: mentor's template and the params each takes. */
const templates: Record<string, { template: string; params: readonly string[] }> = {
  Existence: { template: "existence", params: ["a"] },
  Absence: { template: "absence", params: ["a", "n"] },
  Response: { template: "response", params: ["a", "b"] },
  Precedence: { template: "precedence", params: ["a", "b"] },
  ChainResponse: { template: "chainResponse", params: ["a", "b"] },
  NotSuccession: { template: "notSuccession", params: ["a", "b"] },
  Init: { template: "init", params: ["a"] },
};

/** Postures, from the harness's "recorder (log only) → tripwire (alert) → seatbelt (deny)". */
const postures: Record<string, string> = { recorder: "record", tripwire: "warn", seatbelt: "block" };

const name = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The policy a rulebook means, compiled by `compile` (the policy compiler, given the policy's
 * text); its rules are located in the rulebook. Problems of the rulebook are all reported at once.
 */
export function compileLtlHarnessRulebook(
  source: PolicySource,
  compile: (policyText: string) => Policy,
): Policy {
  const problems: MentorError[] = [];
  const problem = (message: string, path: YamlPath, key = false): void => {
    problems.push(new MentorError("MNT_ERR_POLICY_SCHEMA", message, source.locate(path, { key })));
  };
  const raw = source.document.toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
  for (const key of Object.keys(raw))
    if (!["name", "version", "activities", "rules"].includes(key))
      problem(
        `unknown field ${key} of an ltl-harness rulebook (name, version, activities, rules)`,
        [key],
        true,
      );
  const activities = mapping(raw.activities);
  if (!activities || Object.keys(activities).length === 0)
    problem("the rulebook defines no activities", ["activities"]);
  const tools = new Map<string, { description: string }>();
  const propositions: Record<string, { tool: string; outcome?: string }> = {};
  const conditions = new Map<string, string[]>();
  for (const [activity, spec] of Object.entries(activities ?? {})) {
    const path = ["activities", activity];
    const fields = mapping(spec);
    if (!name.test(activity)) problem(`activity ${activity} must be a name (letters, digits, _)`, path, true);
    if (!fields || typeof fields.tool !== "string") {
      problem(`activity ${activity} needs \`tool\` (a tool name)`, path);
      continue;
    }
    for (const key of Object.keys(fields))
      if (key !== "tool" && key !== "result")
        problem(`unknown field ${key} of activity ${activity} (tool, result)`, [...path, key], true);
    const tool = fields.tool;
    if (!name.test(tool)) problem(`tool ${tool} must be a name (letters, digits, _)`, [...path, "tool"]);
    tools.set(tool, { description: "" });
    const earlier = conditions.get(tool) ?? [];
    conditions.set(tool, earlier);
    if (fields.result === undefined) {
      propositions[activity] = { tool };
      continue;
    }
    const condition = resultCondition(fields.result, [...path, "result"], problem);
    if (condition === undefined) continue;
    // The harness resolves a call to the first activity whose condition matches.
    propositions[activity] = {
      tool,
      outcome: [condition, ...earlier.map((other) => `!(${other})`)].join(" && "),
    };
    earlier.push(condition);
  }
  // An activity without a condition is the call when none of its tool's conditions matched (only the first such one).
  const unconditional = new Set<string>();
  for (const proposition of Object.values(propositions)) {
    const matched = conditions.get(proposition.tool) ?? [];
    if (proposition.outcome !== undefined) continue;
    if (unconditional.has(proposition.tool)) proposition.outcome = "false";
    else if (matched.length > 0)
      proposition.outcome = matched.map((condition) => `!(${condition})`).join(" && ");
    unconditional.add(proposition.tool);
  }
  const rules: Record<string, unknown>[] = [];
  const manual: Record<string, string> = {};
  const ids = new Map<string, string>();
  const rawRules = Array.isArray(raw.rules) ? raw.rules : [];
  if (raw.rules !== undefined && !Array.isArray(raw.rules)) problem("rules must be a list", ["rules"]);
  rawRules.forEach((entry: unknown, index: number) => {
    const rule = translateRule(entry, ["rules", index], Object.keys(propositions), problem);
    if (!rule) return;
    const other = ids.get(rule.id);
    if (other !== undefined)
      problem(`rule ids ${other} and ${rule.original} are both ${rule.id} in mentor`, ["rules", index, "id"]);
    ids.set(rule.id, rule.original);
    manual[rule.id] = rule.sentence;
    rules.push(rule.fields);
  });
  if (problems.length > 0) {
    const message =
      problems.length === 1
        ? (problems[0] as MentorError).message
        : `${problems.length} problems in ltl-harness rulebook ${source.file}:\n${problems.map((entry) => `  ${entry.message}`).join("\n")}`;
    throw new MentorError("MNT_ERR_POLICY_INVALID", message, undefined, problems);
  }
  const rulebookName = typeof raw.name === "string" ? raw.name : source.file;
  const policy = compile(
    stringify({
      policy: rulebookName.replace(/[^A-Za-z0-9_]/g, "_").replace(/^(?=[0-9])/, "_"),
      description: `ltl-harness rulebook ${rulebookName}${raw.version === undefined ? "" : ` v${raw.version}`}`,
      manual,
      tools: Object.fromEntries(tools),
      propositions,
      rules,
    }),
  );
  // Each rule is where the rulebook writes it.
  return {
    ...policy,
    rules: policy.rules.map((rule, index) => ({ ...rule, location: source.locate(["rules", index]) })),
  };
}

interface TranslatedRule {
  id: string;
  original: string;
  sentence: string;
  fields: Record<string, unknown>;
}

function translateRule(
  entry: unknown,
  path: YamlPath,
  activities: readonly string[],
  problem: (message: string, path: YamlPath, key?: boolean) => void,
): TranslatedRule | undefined {
  const rule = mapping(entry);
  if (!rule || typeof rule.id !== "string" || rule.id === "") {
    problem("a rule needs an `id`", path);
    return undefined;
  }
  const original = rule.id;
  const id = original.replace(/-/g, "_");
  const where = `rule ${original}: `;
  let ok = true;
  const bad = (message: string, field: YamlPath, key = false): void => {
    problem(`${where}${message}`, [...path, ...field], key);
    ok = false;
  };
  for (const key of Object.keys(rule))
    if (!["id", "description", "template", "params", "posture", "formula"].includes(key))
      bad(`unknown field ${key} (id, description, template, params, posture, formula)`, [key], true);
  if (!name.test(id)) bad("an id is letters, digits, _ and - (a - is _ in mentor)", ["id"]);
  const posture = rule.posture ?? "recorder";
  const mode = typeof posture === "string" ? postures[posture] : undefined;
  if (mode === undefined)
    bad(`unknown posture ${String(posture)} (recorder, tripwire, seatbelt)`, ["posture"]);
  const fields: Record<string, unknown> = { id, mode };
  if (typeof rule.formula === "string") {
    if (rule.template !== undefined || rule.params !== undefined)
      bad("give `formula` or `template` with `params`, not both", ["formula"]);
    try {
      const formula = parseFormula(rule.formula);
      for (const atom of atomsOf(formula))
        if (!activities.includes(atom.key))
          bad(`formula symbol ${atom.key} is not a declared activity`, ["formula"]);
    } catch (error) {
      if (!(error instanceof MentorError)) throw error;
      bad(`formula: ${error.message}`, ["formula"]);
    }
    fields.ltl = rule.formula;
  } else if (rule.formula !== undefined) {
    bad("formula must be a string", ["formula"]);
  } else {
    const spec = typeof rule.template === "string" ? templates[rule.template] : undefined;
    if (!spec) {
      bad(`unknown DECLARE template ${String(rule.template)} (${Object.keys(templates).join(", ")})`, [
        "template",
      ]);
      return undefined;
    }
    fields.template = spec.template;
    const params = mapping(rule.params) ?? {};
    for (const [key, value] of Object.entries(params)) {
      if (!spec.params.includes(key)) {
        bad(
          `template ${rule.template} has no param ${key} (it takes ${spec.params.join(", ")})`,
          ["params", key],
          true,
        );
        continue;
      }
      if (key === "n") {
        if (!Number.isInteger(value) || (value as number) < 0)
          bad(`params.n must be a whole number ≥ 0`, ["params", "n"]);
        fields.n = value;
        continue;
      }
      const names = Array.isArray(value) ? value : [value];
      names.forEach((activity, at) => {
        if (typeof activity !== "string" || !activities.includes(activity))
          bad(`param ${key} references unknown activity ${String(activity)}`, [
            "params",
            key,
            ...(Array.isArray(value) ? [at] : []),
          ]);
      });
      // A list means any of them.
      fields[key] = names.join(" | ");
    }
    for (const key of spec.params)
      if (params[key] === undefined) bad(`template ${rule.template} needs params.${key}`, ["params"]);
    const overlap = [params.a, params.b].every((value) => value !== undefined)
      ? [params.a].flat().filter((activity) => [params.b].flat().includes(activity))
      : [];
    if (overlap.length > 0) bad(`activities ${overlap.join(", ")} appear in both a and b`, ["params"]);
  }
  if (!ok) return undefined;
  const description =
    typeof rule.description === "string" && rule.description !== "" ? rule.description : undefined;
  return { id, original, sentence: description ?? `rule ${original}`, fields };
}

/** The harness's `result: {path, equals}` as an outcome expression, `o.path == value`. */
function resultCondition(
  value: unknown,
  path: YamlPath,
  problem: (message: string, path: YamlPath) => void,
): string | undefined {
  const condition = mapping(value);
  if (!condition || typeof condition.path !== "string" || !("equals" in condition)) {
    problem("a result condition needs `path` and `equals`", path);
    return undefined;
  }
  const segments = condition.path.split(".");
  if (!segments.every((segment) => name.test(segment))) {
    problem(`result path ${condition.path} must be names joined by .`, [...path, "path"]);
    return undefined;
  }
  const equals = condition.equals;
  if (equals !== null && !["string", "number", "boolean"].includes(typeof equals)) {
    problem("result equals must be a string, number, boolean or null", [...path, "equals"]);
    return undefined;
  }
  return `o.${segments.join(".")} == ${JSON.stringify(equals)}`;
}

function mapping(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
