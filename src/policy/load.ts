// One compiler pass over the policy file. Each section reads the ones before it (propositions read
// tools, the task and entities; rules and constraints read propositions), and every problem of
// every section is collected (PolicyProblems, which the compiler extends) and reported at once.

import { readFileSync } from "node:fs";
import { MentorError } from "../errors/index.js";
import {
  type CheckEnvironment,
  checkExpression,
  type Expression,
  type FieldType,
  parseExpression,
} from "../expression/index.js";
import { atomsOf, declareTemplates, type Formula, parseFormula } from "../logic/index.js";
import { agentltlRuleFormula, isAgentltlTemplate } from "./agentltl-rules.js";
import { bindingPatternOf } from "./binding-pattern.js";
import { compileEntities } from "./entities.js";
import { compileOutputFields, compileOutputLabeler, compileTaskGrounding } from "./labeling.js";
import { compileLtlHarnessRulebook, isLtlHarnessRulebook } from "./ltl-harness.js";
import { ruleAutomaton } from "./moves.js";
import { errorOffset, PolicyProblems, stripLocation } from "./problems.js";
import { policySchema, type RawParameter, type RawPolicy } from "./schema.js";
import {
  compileSettings,
  conditionHolds,
  readSettings,
  type SettingValues,
  substituteSettings,
} from "./settings.js";
import { modeOf, severityOf } from "./severity.js";
import { PolicySource, type YamlPath } from "./source.js";
import type {
  ConstraintSpec,
  EntitySpec,
  Parameter,
  Policy,
  PropositionSpec,
  RuleSpec,
  TaskCallSpec,
  ToolSpec,
} from "./types.js";

/** Reads, validates and compiles a policy file. Every problem is reported, each with file, line, column and rule id. */
export function loadPolicy(file: string): Policy {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new MentorError(
      "MNT_ERR_POLICY_FILE",
      `cannot read policy file ${file}: ${(error as Error).message}`,
    );
  }
  return parsePolicy(text, file);
}

/** Like `loadPolicy`, from text; `file` is named in errors. */
export function parsePolicy(text: string, file = "<policy>"): Policy {
  const source = new PolicySource(text, file);
  if (isLtlHarnessRulebook(source))
    return compileLtlHarnessRulebook(source, (policy) =>
      new PolicyCompiler(new PolicySource(policy, file)).compile(),
    );
  return new PolicyCompiler(source).compile();
}

/** The most variants of one policy kept for the system prompts seen (the oldest is dropped). */
const maxVariants = 64;
const variants = new WeakMap<Policy, Map<string, Policy>>();

/**
 * The policy a conversation's system prompt makes: its settings (docs/policy.md, "Settings from the
 * system prompt") read from `system`, compiled once per distinct set of values. A policy without
 * settings, or a prompt that gives the values it was compiled with, is returned as it is.
 */
export function policyForSystem(policy: Policy, system: string | undefined): Policy {
  if (policy.settings.specs.length === 0) return policy;
  const values = readSettings(policy.settings, system);
  const key = JSON.stringify(values);
  if (key === JSON.stringify(policy.settings.values)) return policy;
  const known = variants.get(policy) ?? new Map<string, Policy>();
  variants.set(policy, known);
  let variant = known.get(key);
  if (!variant) {
    variant = new PolicyCompiler(new PolicySource(policy.source, policy.file), values).compile();
    variants.set(variant, known);
    if (known.size >= maxVariants) known.delete(known.keys().next().value as string);
  }
  known.set(key, variant);
  return variant;
}

const propositionKeyPattern =
  /^([A-Za-z_][A-Za-z0-9_]*)(?:\(\s*([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*\))?$/;

class PolicyCompiler extends PolicyProblems {
  /** `values`: the settings to compile with; their defaults where not given. */
  constructor(
    source: PolicySource,
    private readonly values?: SettingValues,
  ) {
    super(source);
  }

  compile(): Policy {
    // The first syntax error only: the parser's later ones follow from it (an unclosed flow map
    // makes every line after it an error).
    const [syntax] = this.source.document.errors;
    if (syntax) {
      this.problems.push(
        new MentorError(
          "MNT_ERR_POLICY_YAML",
          syntax.message.split("\n")[0] ?? "",
          this.source.position(syntax.pos[0]),
        ),
      );
      this.fail();
    }
    if (this.source.document.contents === null) {
      this.problem(
        "MNT_ERR_POLICY_SCHEMA",
        "the file is empty; a policy is a YAML mapping with policy, manual, tools, propositions and rules (docs/policy.md)",
        [],
      );
      this.fail();
    }
    const document = this.plainValue() as Record<string, unknown> | null;
    const settings = compileSettings(document?.settings, document?.system_sections, this.report);
    const values = this.values ?? readSettings(settings, undefined);
    const parsed = policySchema.safeParse(substituteSettings(document, values, this.report));
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const path = issue.path as (string | number)[];
        this.problem("MNT_ERR_POLICY_SCHEMA", issue.message, path);
      }
      this.fail();
    }
    const raw = parsed.data as RawPolicy;
    const tools = this.compileTools(raw);
    const taskCalls = new Map(
      Object.entries(raw.task).map(([name, call]): [string, TaskCallSpec] => {
        const parameters = this.compileParameters(call.parameters);
        const grounding = compileTaskGrounding(
          name,
          parameters,
          call.grounding,
          ["task", name, "grounding"],
          this.report,
        );
        for (const [at, tool] of call.asks_for.entries())
          if (!tools.has(tool))
            this.problem(
              "MNT_ERR_POLICY_REFERENCE",
              `task ${name} asks_for ${tool}, which is not a declared tool`,
              ["task", name, "asks_for", at],
            );
        return [name, { name, description: call.description, parameters, grounding, asksFor: call.asks_for }];
      }),
    );
    const entities = compileEntities(raw, taskCalls, tools, this.report);
    const propositions = this.compilePropositions(raw, tools, taskCalls, entities);
    const rules = this.compileRules(raw, tools, propositions);
    const constraints = this.compileConstraints(raw, tools, taskCalls, entities, propositions);
    this.checkDuplicateIds(raw);
    if (raw.done.tool !== undefined && !tools.has(raw.done.tool))
      this.problem("MNT_ERR_POLICY_REFERENCE", `done.tool ${raw.done.tool} is not a declared tool`, [
        "done",
        "tool",
      ]);
    if (this.problems.length > 0) this.fail();
    return {
      name: raw.policy,
      description: raw.description,
      file: this.source.file,
      source: this.source.text,
      manual: raw.manual,
      settings: { ...settings, values },
      tools,
      taskCalls,
      entities,
      propositions,
      rules,
      constraints,
      maxDoneRefusals: raw.done.max_refusals,
      stuckAfter: raw.done.stuck_after,
      ...(raw.done.tool !== undefined ? { doneTool: raw.done.tool } : {}),
    };
  }

  private compileParameters(raw: Record<string, RawParameter>): Parameter[] {
    return Object.entries(raw).map(([name, parameter]) => {
      if (typeof parameter === "string") {
        return { name, type: parameter, description: "", jsonSchema: { type: parameter } };
      }
      const type: FieldType = parameter.enum ? { enum: parameter.enum } : (parameter.type ?? "any");
      const jsonSchema: Record<string, unknown> = {};
      if (parameter.type) jsonSchema.type = parameter.type;
      else if (parameter.enum)
        jsonSchema.type = typeof parameter.enum[0] === "number" ? "number" : typeof parameter.enum[0];
      if (parameter.enum) jsonSchema.enum = parameter.enum;
      if (parameter.description) jsonSchema.description = parameter.description;
      if (parameter.items !== undefined) jsonSchema.items = parameter.items;
      return { name, type, description: parameter.description ?? "", jsonSchema };
    });
  }

  private compileTools(raw: RawPolicy): Map<string, ToolSpec> {
    const tools = new Map<string, ToolSpec>();
    for (const [name, tool] of Object.entries(raw.tools)) {
      const parameters = this.compileParameters(tool.parameters);
      const names = parameters.map((parameter) => parameter.name);
      for (const [index, required] of (tool.required ?? []).entries()) {
        if (!names.includes(required)) {
          this.problem("MNT_ERR_POLICY_REFERENCE", `tool ${name} requires unknown parameter ${required}`, [
            "tools",
            name,
            "required",
            index,
          ]);
        }
      }
      for (const [index, repairable] of tool.repairable.entries()) {
        if (!names.includes(repairable)) {
          this.problem(
            "MNT_ERR_POLICY_REFERENCE",
            `tool ${name} marks unknown parameter ${repairable} repairable`,
            ["tools", name, "repairable", index],
          );
        }
      }
      if (tool.output === "text" && (!tool.labels || Object.keys(tool.labels).length === 0)) {
        this.problem("MNT_ERR_POLICY_SCHEMA", `tool ${name} has text output but declares no labels`, [
          "tools",
          name,
          "output",
        ]);
      }
      const labels = tool.labels ?? {};
      tools.set(name, {
        name,
        description: tool.description,
        parameters,
        required: tool.required ?? names,
        output: tool.output,
        labels,
        repairable: tool.repairable,
        volatile: tool.volatile,
        shared: tool.shared,
        labeler: compileOutputLabeler(
          { name, output: tool.output, labels },
          tool.labeler,
          ["tools", name, "labeler"],
          this.report,
        ),
        fields: compileOutputFields(
          { name, output: tool.output },
          tool.fields,
          ["tools", name, "fields"],
          this.report,
        ),
      });
    }
    return tools;
  }

  /** The environment's task and tool field types: the same for every expression of the policy. */
  private fieldTypes: Pick<CheckEnvironment, "task" | "tools"> | undefined;

  private environment(
    tools: Map<string, ToolSpec>,
    taskCalls: Map<string, TaskCallSpec>,
    entities: Map<string, EntitySpec>,
    entityNames: readonly string[],
    propositionNames: string[],
  ): CheckEnvironment {
    const fieldTypes = (parameters: Parameter[]): Record<string, FieldType> =>
      Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter.type]));
    const variables: Record<string, FieldType> = {};
    for (const entityName of entityNames) {
      const entity = entities.get(entityName);
      for (const source of entity?.sources ?? []) {
        const call = taskCalls.get(source.taskCall);
        for (const [variable, field] of Object.entries(source.bind)) {
          variables[variable] = call?.parameters.find((parameter) => parameter.name === field)?.type ?? "any";
        }
      }
      for (const output of entity?.outputs ?? [])
        for (const variable in output.bind) variables[variable] ??= "any";
    }
    // Built once: per expression they would cost as much as the whole policy.
    this.fieldTypes ??= {
      task: Object.fromEntries([...taskCalls].map(([name, call]) => [name, fieldTypes(call.parameters)])),
      tools: Object.fromEntries(
        [...tools].map(([name, tool]) => [
          name,
          { arguments: fieldTypes(tool.parameters), outcome: outcomeFields(tool, { withRead: true }) },
        ]),
      ),
    };
    return { variables, ...this.fieldTypes, propositions: propositionNames };
  }

  private compileExpression(
    text: string,
    path: YamlPath,
    environment: CheckEnvironment,
    rule?: string,
  ): Expression | undefined {
    let expression: Expression;
    try {
      expression = parseExpression(text);
    } catch (error) {
      if (!(error instanceof MentorError)) throw error;
      const offset = errorOffset(text, error.location);
      this.problem(error.code, stripLocation(error.message), path, { offsetInValue: offset, rule });
      return undefined;
    }
    for (const problem of checkExpression(expression, environment)) {
      this.problem("MNT_ERR_POLICY_REFERENCE", problem.message, path, {
        offsetInValue: problem.offset,
        rule,
      });
    }
    return expression;
  }

  private compilePropositions(
    raw: RawPolicy,
    tools: Map<string, ToolSpec>,
    taskCalls: Map<string, TaskCallSpec>,
    entities: Map<string, EntitySpec>,
  ): Map<string, PropositionSpec> {
    const propositions = new Map<string, PropositionSpec>();
    const names = Object.keys(raw.propositions).map((key) => propositionKeyPattern.exec(key)?.[1] ?? key);
    for (const [key, declaration] of Object.entries(raw.propositions)) {
      const path = ["propositions", key];
      const match = propositionKeyPattern.exec(key);
      if (!match) {
        this.problem(
          "MNT_ERR_POLICY_SCHEMA",
          `proposition ${JSON.stringify(key)} must look like name or name(entity, …)`,
          path,
          { key: true },
        );
        continue;
      }
      const name = match[1] as string;
      const entityNames = match[2] ? match[2].split(",").map((part) => part.trim()) : [];
      if (propositions.has(name)) {
        this.problem("MNT_ERR_POLICY_DUPLICATE", `proposition ${name} is declared twice`, path, {
          key: true,
        });
        continue;
      }
      for (const entityName of entityNames) {
        if (!entities.has(entityName)) {
          this.problem(
            "MNT_ERR_POLICY_REFERENCE",
            `proposition ${name} uses unknown entity ${entityName}`,
            path,
            { key: true },
          );
        }
      }
      const tool = tools.get(declaration.tool);
      if (!tool) {
        this.problem(
          "MNT_ERR_POLICY_REFERENCE",
          `proposition ${name} refers to unknown tool ${declaration.tool}`,
          [...path, "tool"],
        );
        continue;
      }
      const base = this.environment(tools, taskCalls, entities, entityNames, names);
      const argumentsTypes = Object.fromEntries(
        tool.parameters.map((parameter) => [parameter.name, parameter.type]),
      );
      const when =
        declaration.when === undefined
          ? undefined
          : this.compileExpression(declaration.when, [...path, "when"], {
              ...base,
              arguments: argumentsTypes,
            });
      const outcome =
        declaration.outcome === undefined
          ? undefined
          : this.compileExpression(declaration.outcome, [...path, "outcome"], {
              ...base,
              arguments: argumentsTypes,
              outcome: outcomeFields(tool, { withRead: false }),
            });
      const canonicalKey = entityNames.length > 0 ? `${name}(${entityNames.join(",")})` : name;
      propositions.set(name, {
        name,
        entities: entityNames,
        key: canonicalKey,
        tool: tool.name,
        when,
        whenText: declaration.when,
        outcome,
        outcomeText: declaration.outcome,
        bindingPattern: when ? bindingPatternOf(when) : {},
        location: this.source.locate(path, { key: true }),
      });
    }
    return propositions;
  }

  private parseRuleFormula(text: string, path: YamlPath, rule: string): Formula | undefined {
    try {
      return parseFormula(text);
    } catch (error) {
      if (!(error instanceof MentorError)) throw error;
      this.problem(error.code, stripLocation(error.message), path, {
        offsetInValue: errorOffset(text, error.location),
        rule,
      });
      return undefined;
    }
  }

  private compileRules(
    raw: RawPolicy,
    tools: Map<string, ToolSpec>,
    propositions: Map<string, PropositionSpec>,
  ): RuleSpec[] {
    const rules: RuleSpec[] = [];
    // Only the tools of a rule's propositions make a letter other than the empty one: a rule's
    // alphabet reads those, in the policy's order (its cost does not grow with the other tools).
    const toolOrder = new Map([...tools.keys()].map((name, index) => [name, index]));
    const toolsOf = (rulePropositions: readonly PropositionSpec[]): ToolSpec[] =>
      [...new Set(rulePropositions.map((proposition) => proposition.tool))]
        .sort((left, right) => (toolOrder.get(left) ?? 0) - (toolOrder.get(right) ?? 0))
        .map((name) => tools.get(name) as ToolSpec);
    raw.rules.forEach((rule, index) => {
      const path = ["rules", index];
      let formula: Formula | undefined;
      let formulaPath: YamlPath = [...path, "ltl"];
      let texts: [string, YamlPath][] = [];
      if ((rule.ltl === undefined) === (rule.template === undefined)) {
        this.problem("MNT_ERR_POLICY_SCHEMA", "give exactly one of `ltl` or `template`", path, {
          rule: rule.id,
        });
        return;
      }
      if (rule.ltl !== undefined) {
        formula = this.parseRuleFormula(rule.ltl, formulaPath, rule.id);
        texts = [[rule.ltl, formulaPath]];
      } else {
        formula = this.templateFormula(rule, path);
        formulaPath = [...path, "a"];
        texts = (["a", "b"] as const).flatMap((field): [string, YamlPath][] => {
          const value = rule[field];
          if (Array.isArray(value)) return value.map((text, at) => [text, [...path, field, at]]);
          return value === undefined ? [] : [[value, [...path, field]]];
        });
      }
      if (!formula) return;
      const ruleEntities = new Set<string>();
      let atomsOk = true;
      for (const atom of atomsOf(formula)) {
        const proposition = propositions.get(atom.name);
        const [text, atomPath] =
          texts.find(([candidate]) => findAtom(candidate, atom.name) >= 0) ??
          (texts[0] as [string, YamlPath]);
        const where = { offsetInValue: Math.max(0, findAtom(text, atom.name)), rule: rule.id };
        if (!proposition) {
          this.problem("MNT_ERR_POLICY_REFERENCE", `unknown proposition ${atom.name}`, atomPath, where);
          atomsOk = false;
          continue;
        }
        if (atom.args.join(",") !== proposition.entities.join(",")) {
          this.problem(
            "MNT_ERR_POLICY_ARITY",
            `${atom.key} does not match the declaration ${proposition.key}`,
            atomPath,
            where,
          );
          atomsOk = false;
          continue;
        }
        for (const entity of proposition.entities) ruleEntities.add(entity);
      }
      const sentence = rule.sentence ?? raw.manual[rule.id];
      if (sentence === undefined) {
        this.problem(
          "MNT_ERR_POLICY_REFERENCE",
          `rule ${rule.id} has no sentence in \`manual\` (add manual.${rule.id})`,
          [...path, "id"],
        );
      }
      const severity = severityOf(rule, path, rule.id, this.report);
      if (!atomsOk || sentence === undefined || !severity) return;
      const rulePropositions = atomsOf(formula).map((atom) => propositions.get(atom.name) as PropositionSpec);
      const active = conditionHolds(rule.if, [...path, "if"], this.report);
      try {
        const compiled: RuleSpec = {
          id: rule.id,
          formula,
          entities: [...ruleEntities],
          mode: modeOf(severity),
          severity,
          appliesTo: rule.applies_to,
          sentence,
          weight: rule.weight,
          location: this.source.locate(path),
          automaton: ruleAutomaton(
            formula,
            { name: `rule ${rule.id}`, location: this.source.locate(formulaPath) },
            toolsOf(rulePropositions),
            rulePropositions,
            [...propositions.values()].filter((proposition) =>
              proposition.entities.some((entity) => ruleEntities.has(entity)),
            ),
          ),
          propositions: rulePropositions,
        };
        if (active) rules.push(compiled);
      } catch (error) {
        if (!(error instanceof MentorError)) throw error;
        this.problem(error.code, error.message, formulaPath, { rule: rule.id });
      }
    });
    return rules;
  }

  private templateFormula(rule: RawPolicy["rules"][number], path: YamlPath): Formula | undefined {
    if (isAgentltlTemplate(rule.template))
      return agentltlRuleFormula(rule, rule.template, {
        formula: (text, field) => this.parseRuleFormula(text, [...path, ...field], rule.id),
        problem: (message, field) =>
          this.problem("MNT_ERR_POLICY_SCHEMA", message, [...path, ...field], { rule: rule.id }),
      });
    if (Array.isArray(rule.a)) {
      this.problem(
        "MNT_ERR_POLICY_SCHEMA",
        `template ${rule.template} takes one formula as \`a\`, not a list`,
        [...path, "a"],
        { rule: rule.id },
      );
      return undefined;
    }
    const template = rule.template as keyof typeof declareTemplates;
    const unary = ["existence", "absence", "exactly", "init"].includes(template);
    if (rule.a === undefined) {
      this.problem("MNT_ERR_POLICY_SCHEMA", `template ${template} needs \`a\``, path, { rule: rule.id });
      return undefined;
    }
    if (!unary && rule.b === undefined) {
      this.problem("MNT_ERR_POLICY_SCHEMA", `template ${template} needs \`a\` and \`b\``, path, {
        rule: rule.id,
      });
      return undefined;
    }
    if (template === "exactly" && rule.n === undefined) {
      this.problem("MNT_ERR_POLICY_SCHEMA", "template exactly needs `n`", path, { rule: rule.id });
      return undefined;
    }
    const a = this.parseRuleFormula(rule.a, [...path, "a"], rule.id);
    const b = rule.b === undefined ? undefined : this.parseRuleFormula(rule.b, [...path, "b"], rule.id);
    if (!a || (!unary && !b)) return undefined;
    switch (template) {
      case "existence":
      case "absence":
        return declareTemplates[template](a, rule.n);
      case "exactly":
        return declareTemplates.exactly(a, rule.n as number);
      case "init":
        return declareTemplates.init(a);
      default:
        return declareTemplates[template](a, b as Formula);
    }
  }

  private compileConstraints(
    raw: RawPolicy,
    tools: Map<string, ToolSpec>,
    taskCalls: Map<string, TaskCallSpec>,
    entities: Map<string, EntitySpec>,
    propositions: Map<string, PropositionSpec>,
  ): ConstraintSpec[] {
    const constraints: ConstraintSpec[] = [];
    const propositionNames = [...propositions.keys()];
    raw.constraints.forEach((constraint, index) => {
      const path = ["constraints", index];
      const match = propositionKeyPattern.exec(constraint.on.trim());
      const proposition = match ? propositions.get(match[1] as string) : undefined;
      if (!proposition) {
        this.problem(
          "MNT_ERR_POLICY_REFERENCE",
          `constraint on unknown proposition ${constraint.on}`,
          [...path, "on"],
          { rule: constraint.id },
        );
        return;
      }
      const tool = tools.get(proposition.tool) as ToolSpec;
      const environment = {
        ...this.environment(tools, taskCalls, entities, proposition.entities, propositionNames),
        arguments: Object.fromEntries(tool.parameters.map((parameter) => [parameter.name, parameter.type])),
      };
      const require = this.compileExpression(
        constraint.require,
        [...path, "require"],
        environment,
        constraint.id,
      );
      const sentence = constraint.sentence ?? raw.manual[constraint.id];
      if (sentence === undefined) {
        this.problem(
          "MNT_ERR_POLICY_REFERENCE",
          `constraint ${constraint.id} has no sentence in \`manual\``,
          [...path, "id"],
        );
      }
      const severity = severityOf(constraint, path, constraint.id, this.report);
      const active = conditionHolds(constraint.if, [...path, "if"], this.report);
      if (!require || sentence === undefined || !severity || !active) return;
      constraints.push({
        id: constraint.id,
        on: proposition,
        require,
        requireText: constraint.require,
        location: this.source.locate([...path, "require"]),
        mode: modeOf(severity),
        severity,
        sentence,
        weight: constraint.weight,
      });
    });
    return constraints;
  }

  private checkDuplicateIds(raw: RawPolicy): void {
    const seen = new Set<string>();
    const check = (id: string, path: YamlPath): void => {
      if (seen.has(id)) this.problem("MNT_ERR_POLICY_DUPLICATE", `duplicate id ${id}`, path, { rule: id });
      seen.add(id);
    };
    for (const [index, rule] of raw.rules.entries()) check(rule.id, ["rules", index, "id"]);
    for (const [index, constraint] of raw.constraints.entries())
      check(constraint.id, ["constraints", index, "id"]);
  }
}

/**
 * What a tool returns, as expressions read it: free JSON, or `{label}` for a text tool, with the
 * fields read from its text where history functions read it (a proposition's `o` is its label
 * alone: the game chooses labels, never the values read).
 */
function outcomeFields(tool: ToolSpec, options: { withRead: boolean }): Record<string, FieldType> | "any" {
  if (tool.output !== "text") return "any";
  const read = Object.entries(options.withRead ? (tool.fields ?? {}) : {}).map(
    ([name, field]) => [name, field.kind === "number" ? "number" : "string"] as const,
  );
  return { label: { enum: Object.keys(tool.labels) }, ...Object.fromEntries(read) };
}

/** The index of `name` used as an atom in a formula's text (not as part of a longer name), or -1. */
function findAtom(text: string, name: string): number {
  const match = new RegExp(`(?<![A-Za-z0-9_.])${name}(?![A-Za-z0-9_.])`).exec(text);
  return match ? match.index : -1;
}
