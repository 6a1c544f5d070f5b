import type { ErrorCode } from "../errors/index.js";
import type { Value } from "../expression/index.js";
import { type PatternProblem, patternProblems } from "./pattern-check.js";
import type { RawOutputField, RawOutputLabeler, RawTaskGrounding } from "./schema.js";
import type { YamlPath } from "./source.js";
import { TextPattern } from "./text-pattern.js";
import type {
  FieldRule,
  LabelRule,
  LabelTest,
  OutputField,
  OutputLabeler,
  Parameter,
  TaskGrounding,
  ToolSpec,
} from "./types.js";

/** Reports a problem at a place in the policy file (the compiler collects them). */
export type Report = (
  code: ErrorCode,
  message: string,
  path: YamlPath,
  options?: { key?: boolean; offsetInValue?: number; rule?: string },
) => void;

/** Compiles `tools.<name>.labeler`: every rule names a declared label and has exactly one valid test. */
export function compileOutputLabeler(
  tool: Pick<ToolSpec, "name" | "output" | "labels">,
  raw: RawOutputLabeler | undefined,
  path: YamlPath,
  report: Report,
): OutputLabeler {
  if ("none" in tool.labels)
    report(
      "MNT_ERR_POLICY_SCHEMA",
      `tool ${tool.name} declares a label named none; the labeler reserves it for "none of the labels"`,
      [...path.slice(0, -1), "labels", "none"],
    );
  if (raw === undefined) return { rules: [], llm: false };
  if (tool.output !== "text") {
    report("MNT_ERR_POLICY_SCHEMA", `tool ${tool.name} has a labeler but its output is not text`, path);
    return { rules: [], llm: false };
  }
  const rules: LabelRule[] = [];
  raw.rules.forEach((rule, index) => {
    const rulePath = [...path, "rules", index];
    if (!(rule.label in tool.labels)) {
      const known = Object.keys(tool.labels).join(", ");
      report(
        "MNT_ERR_POLICY_REFERENCE",
        `tool ${tool.name} has no label ${rule.label} (its labels: ${known})`,
        [...rulePath, "label"],
      );
      return;
    }
    const tests = (["json", "regex", "keywords", "number"] as const).filter((key) => rule[key] !== undefined);
    if (tests.length !== 1) {
      report(
        "MNT_ERR_POLICY_SCHEMA",
        `a labeling rule needs exactly one of json, regex, keywords, number (found ${tests.length === 0 ? "none" : tests.join(", ")})`,
        rulePath,
      );
      return;
    }
    const flags = rule.ignore_case ? "iu" : "u";
    let test: LabelTest | undefined;
    if (rule.json !== undefined) {
      const segments = jsonPath(rule.json.path);
      if (segments === undefined) {
        report(
          "MNT_ERR_POLICY_SCHEMA",
          `json path ${JSON.stringify(rule.json.path)} must look like $.field.list[0]`,
          [...rulePath, "json", "path"],
        );
        return;
      }
      test = { kind: "json", path: segments, equals: rule.json.equals };
    } else if (rule.regex !== undefined) {
      const pattern = compileRegex(rule.regex, flags, [...rulePath, "regex"], report);
      if (pattern) test = { kind: "regex", pattern };
    } else if (rule.keywords !== undefined) {
      test = { kind: "keywords", pattern: keywordPattern(rule.keywords) };
    } else if (rule.number !== undefined) {
      const bounds = { lt: rule.lt, lte: rule.lte, gt: rule.gt, gte: rule.gte };
      const given = Object.fromEntries(Object.entries(bounds).filter(([, value]) => value !== undefined));
      if (Object.keys(given).length === 0) {
        report("MNT_ERR_POLICY_SCHEMA", "a number rule needs a bound (lt, lte, gt or gte)", [
          ...rulePath,
          "number",
        ]);
        return;
      }
      const pattern = compileRegex(rule.number, flags, [...rulePath, "number"], report);
      if (pattern && groupCount(pattern) < 1) {
        report("MNT_ERR_POLICY_SCHEMA", "a number rule's regex needs a group around the number", [
          ...rulePath,
          "number",
        ]);
        return;
      }
      if (pattern) test = { kind: "number", pattern, scale: rule.scale ?? 1, bounds: given };
    }
    if (test) rules.push({ label: rule.label, test });
  });
  return { rules, llm: raw.llm };
}

/** Compiles `tools.<name>.fields`: text tools only, never `label`, exactly one of number and text, with a group. */
export function compileOutputFields(
  tool: Pick<ToolSpec, "name" | "output">,
  raw: Record<string, RawOutputField>,
  path: YamlPath,
  report: Report,
): Record<string, OutputField> {
  const fields: Record<string, OutputField> = {};
  if (Object.keys(raw).length > 0 && tool.output !== "text") {
    report(
      "MNT_ERR_POLICY_SCHEMA",
      `tool ${tool.name} reads fields from its output but its output is not text (a JSON output's fields are read as they are)`,
      path,
    );
    return fields;
  }
  for (const [name, field] of Object.entries(raw)) {
    const fieldPath = [...path, name];
    if (name === "label") {
      report(
        "MNT_ERR_POLICY_SCHEMA",
        `tool ${tool.name}: the field name label is the output's label`,
        fieldPath,
        {
          key: true,
        },
      );
      continue;
    }
    const kinds = (["number", "text"] as const).filter((kind) => field[kind] !== undefined);
    if (kinds.length !== 1) {
      report(
        "MNT_ERR_POLICY_SCHEMA",
        `output field ${name} needs exactly one of number, text (found ${kinds.length === 0 ? "none" : kinds.join(", ")})`,
        fieldPath,
      );
      continue;
    }
    const kind = kinds[0] as "number" | "text";
    const pattern = compileRegex(
      field[kind] as string,
      field.ignore_case ? "iu" : "u",
      [...fieldPath, kind],
      report,
    );
    if (pattern && groupCount(pattern) < 1) {
      report("MNT_ERR_POLICY_SCHEMA", `output field ${name}: its regex needs a group around the value`, [
        ...fieldPath,
        kind,
      ]);
      continue;
    }
    if (pattern) fields[name] = { kind, pattern };
  }
  return fields;
}

/** The values a text output gives the tool's fields: each field's first group, null where it does not match. */
export function outputFieldValues(tool: Pick<ToolSpec, "fields">, text: string): Record<string, Value> {
  const values: Record<string, Value> = {};
  for (const [name, field] of Object.entries(tool.fields ?? {})) {
    const captured = field.pattern.firstMatch(text)?.[1];
    if (captured === undefined) values[name] = null;
    else if (field.kind === "text") values[name] = captured;
    else values[name] = numberIn(captured) ?? null;
  }
  return values;
}

/** A number as an output writes it (`1,250.5`, `1 250`), or undefined where the text is not one. */
export function numberIn(text: string): number | undefined {
  const number = text.trim() === "" ? Number.NaN : Number(text.replace(/[,\s_]/g, ""));
  return Number.isFinite(number) ? number : undefined;
}

/** Compiles `task.<call>.grounding`: named groups and field rules name fields of the call, and every field gets filled. */
export function compileTaskGrounding(
  callName: string,
  parameters: readonly Parameter[],
  raw: RawTaskGrounding | undefined,
  path: YamlPath,
  report: Report,
): TaskGrounding | undefined {
  if (raw === undefined) return undefined;
  const names = parameters.map((parameter) => parameter.name);
  const covered = new Set<string>();
  const patterns: TextPattern[] = [];
  raw.patterns.forEach((written, index) => {
    const patternPath = [...path, "patterns", index];
    const insertions: Insertion[] = [];
    let grown = 0;
    const text = written.replace(
      /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g,
      (whole, name: string, offset: number) => {
        const fragment = raw.define[name];
        if (fragment === undefined)
          report("MNT_ERR_POLICY_REFERENCE", `${whole} is not defined in grounding.define`, patternPath);
        const inserted = `(?:${fragment ?? ""})`;
        insertions.push({ name, start: offset + grown, end: offset + grown + inserted.length });
        grown += inserted.length - whole.length;
        return inserted;
      },
    );
    const pattern = compileRegex(text, raw.ignore_case ? "iu" : "u", patternPath, report, insertions);
    if (!pattern) return;
    const groups = namedGroups(text);
    if (groups.length === 0) {
      report("MNT_ERR_POLICY_SCHEMA", "a task pattern needs named groups, e.g. (?<origin>…)", patternPath);
      return;
    }
    for (const group of groups) {
      if (!names.includes(group)) {
        report("MNT_ERR_POLICY_REFERENCE", `task call ${callName} has no field ${group}`, patternPath);
        return;
      }
      covered.add(group);
    }
    patterns.push(pattern);
  });
  const fields: Record<string, FieldRule> = {};
  for (const [field, rule] of Object.entries(raw.fields)) {
    const fieldPath = [...path, "fields", field];
    const parameter = parameters.find((candidate) => candidate.name === field);
    if (!parameter) {
      report("MNT_ERR_POLICY_REFERENCE", `task call ${callName} has no field ${field}`, fieldPath, {
        key: true,
      });
      continue;
    }
    const compiled = compileFieldRule(parameter, rule, fieldPath, report);
    if (compiled) {
      fields[field] = compiled;
      covered.add(field);
    }
  }
  if (raw.patterns.length > 0 || Object.keys(raw.fields).length > 0) {
    for (const name of names) {
      if (!covered.has(name)) {
        report(
          "MNT_ERR_POLICY_SCHEMA",
          `field ${name} of task call ${callName} is filled by no pattern group and no field rule`,
          path,
          { key: true },
        );
      }
    }
  }
  return {
    patterns,
    fields,
    llm: raw.llm,
    amends: raw.amends ? keywordPattern(raw.amends) : undefined,
    withdraws: raw.withdraws ? keywordPattern(raw.withdraws) : undefined,
  };
}

function compileFieldRule(
  parameter: Parameter,
  rule: RawTaskGrounding["fields"][string],
  path: YamlPath,
  report: Report,
): FieldRule | undefined {
  const flags = rule.ignore_case ? "iu" : "u";
  if ((rule.pattern === undefined) === (rule.keywords === undefined)) {
    report("MNT_ERR_POLICY_SCHEMA", "a field rule needs exactly one of pattern, keywords", path, {
      key: true,
    });
    return undefined;
  }
  const fallback = rule.default === undefined ? {} : { default: rule.default as Value };
  if (rule.pattern !== undefined) {
    const pattern = compileRegex(rule.pattern, flags, [...path, "pattern"], report);
    if (pattern && groupCount(pattern) < 1) {
      report("MNT_ERR_POLICY_SCHEMA", "a field pattern needs a group around the value", [...path, "pattern"]);
      return undefined;
    }
    return pattern ? { kind: "pattern", pattern, ...fallback } : undefined;
  }
  if (Array.isArray(rule.keywords)) {
    if (parameter.type !== "boolean") {
      report(
        "MNT_ERR_POLICY_SCHEMA",
        `a keyword list sets a boolean field; ${parameter.name} is not boolean (give value: [keywords] instead)`,
        [...path, "keywords"],
      );
      return undefined;
    }
    return {
      kind: "flag",
      any: keywordPattern(rule.keywords),
      unless: rule.unless ? keywordPattern(rule.unless) : undefined,
    };
  }
  const choices = Object.entries(rule.keywords ?? {}).map(([text, keywords]) => ({
    value: fieldValue(parameter, text),
    pattern: keywordPattern(keywords),
  }));
  for (const [index, choice] of choices.entries()) {
    if (choice.value === undefined) {
      const key = Object.keys(rule.keywords ?? {})[index] as string;
      report("MNT_ERR_POLICY_SCHEMA", `${JSON.stringify(key)} is not a value of field ${parameter.name}`, [
        ...path,
        "keywords",
        key,
      ]);
      return undefined;
    }
  }
  return { kind: "choice", choices: choices as { value: Value; pattern: TextPattern }[], ...fallback };
}

/**
 * A captured text as a value of the field's type, or undefined if it is not one (an enum field
 * accepts its values in any case; numbers may carry thousands separators).
 */
export function fieldValue(parameter: Pick<Parameter, "type" | "name">, text: string): Value | undefined {
  const trimmed = text.trim();
  const type = parameter.type;
  if (typeof type === "object" && "enum" in type) {
    const found = type.enum.find((value) => String(value).toLowerCase() === trimmed.toLowerCase());
    return found;
  }
  switch (type) {
    case "number":
    case "integer": {
      const value = numberIn(trimmed);
      return value === undefined || (type === "integer" && !Number.isInteger(value)) ? undefined : value;
    }
    case "boolean":
      return /^(true|yes)$/i.test(trimmed) ? true : /^(false|no)$/i.test(trimmed) ? false : undefined;
    default:
      return trimmed;
  }
}

/** Whole-word, any-case alternation of keywords; spaces in a keyword match any whitespace. */
export function keywordPattern(keywords: readonly string[]): TextPattern {
  const alternatives = keywords.map((keyword) =>
    keyword
      .trim()
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      .replace(/\s+/g, "\\s+"),
  );
  return new TextPattern(`(?<![\\p{L}\\p{N}_])(?:${alternatives.join("|")})(?![\\p{L}\\p{N}_])`, "iu");
}

/** Where a `{{name}}` fragment went in a task pattern (positions in the expanded text). */
interface Insertion {
  name: string;
  start: number;
  end: number;
}

/**
 * The pattern, or undefined after reporting that it is invalid; a part that can make matching
 * super-linear (pattern-check.ts) is reported too.
 */
export function compileRegex(
  text: string,
  flags: "u" | "iu",
  path: YamlPath,
  report: Report,
  insertions: readonly Insertion[] = [],
): TextPattern | undefined {
  let pattern: TextPattern;
  try {
    pattern = new TextPattern(text, flags);
  } catch (error) {
    report("MNT_ERR_POLICY_SCHEMA", `invalid regex: ${(error as Error).message}`, path);
    return undefined;
  }
  // A fragment inserted twice has its problem twice: reported once.
  const messages = patternProblems(text, flags === "iu").map(
    (problem) => `${placeOf(problem, insertions)}: ${problem.message}`,
  );
  for (const message of new Set(messages)) report("MNT_ERR_POLICY_PATTERN", message, path);
  // A pattern with problems is kept: the policy does not load, and its groups still count as filled.
  return pattern;
}

/** "at character 12 of the pattern", or "in {{gap}}" when the problem lies in an inserted fragment. */
function placeOf(problem: PatternProblem, insertions: readonly Insertion[]): string {
  const inside = insertions.find(
    (insertion) => insertion.start <= problem.start && problem.end <= insertion.end,
  );
  if (inside) return `in {{${inside.name}}}`;
  const before = insertions.filter((insertion) => insertion.end <= problem.start);
  const written = before.reduce(
    (position, insertion) => position - (insertion.end - insertion.start) + `{{${insertion.name}}}`.length,
    problem.start,
  );
  return `at character ${written + 1} of the pattern`;
}

function groupCount(pattern: TextPattern): number {
  return (new RegExp(`${pattern.source}|`, pattern.flags).exec("")?.length ?? 1) - 1;
}

function namedGroups(text: string): string[] {
  return [...text.matchAll(/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((match) => match[1] as string);
}

/** `$.a.b[0]`, `a.b[0]` or `$` → path segments; undefined if malformed. */
function jsonPath(text: string): (string | number)[] | undefined {
  const body = text.trim().replace(/^\$\.?/, "");
  if (body === "") return [];
  const segments: (string | number)[] = [];
  const part = /([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\.(?=[A-Za-z_])/y;
  let index = 0;
  while (index < body.length) {
    part.lastIndex = index;
    const match = part.exec(body);
    if (!match) return undefined;
    if (match[1] !== undefined) segments.push(match[1]);
    else if (match[2] !== undefined) segments.push(Number(match[2]));
    index = part.lastIndex;
  }
  return segments;
}
