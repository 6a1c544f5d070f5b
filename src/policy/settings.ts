// Settings read from the conversation's system prompt: one policy for a manual whose deployments
// render it with their own figures and clauses (a limit, a threshold, whether an action needs a
// login). A policy writes `${name}` where a setting's value goes and `if:` on the rules and
// constraints a clause switches on; each conversation gets the policy its system prompt makes.

import { evaluateExpression, parseExpression } from "../expression/index.js";
import { compileRegex, type Report } from "./labeling.js";
import { settingsSchema } from "./schema.js";
import type { YamlPath } from "./source.js";
import type { TextPattern } from "./text-pattern.js";

export type SettingValue = number | boolean;
export type SettingValues = Record<string, SettingValue>;

export interface SettingSpec {
  name: string;
  kind: "number" | "says";
  pattern: TextPattern;
  section?: string;
  default: SettingValue;
}

export interface PolicySettings {
  specs: SettingSpec[];
  /** A line of the prompt that matches it starts a section, its name in the group `name`. */
  sections?: TextPattern;
  /** The values this policy was compiled with. */
  values: SettingValues;
}

/** Checks the `settings` and `system_sections` sections; each problem is reported at its path. */
export function compileSettings(
  raw: unknown,
  sectionsRaw: unknown,
  report: Report,
): Omit<PolicySettings, "values"> {
  const specs: SettingSpec[] = [];
  const parsed = settingsSchema.safeParse(raw ?? {});
  // A malformed section is reported by the policy's schema.
  if (!parsed.success) return { specs };
  const sections =
    sectionsRaw === undefined ? undefined : regex(sectionsRaw, false, ["system_sections"], report);
  if (sections && !/\(\?<name>/.test(sections.source))
    report("MNT_ERR_POLICY_SCHEMA", "system_sections needs a named group `name` (the section's name)", [
      "system_sections",
    ]);
  for (const [name, setting] of Object.entries(parsed.data)) {
    const path = ["settings", name];
    const kind = setting.number !== undefined ? "number" : "says";
    if ((setting.number === undefined) === (setting.says === undefined)) {
      report("MNT_ERR_POLICY_SCHEMA", "give exactly one of `number` or `says`", path);
      continue;
    }
    if (typeof setting.default !== (kind === "number" ? "number" : "boolean")) {
      report(
        "MNT_ERR_POLICY_SCHEMA",
        `the default of a \`${kind}\` setting is a ${kind === "number" ? "number" : "boolean"}`,
        [...path, "default"],
      );
      continue;
    }
    if (setting.in_section !== undefined && sectionsRaw === undefined)
      report(
        "MNT_ERR_POLICY_SCHEMA",
        "in_section needs `system_sections` (how the prompt is cut into sections)",
        [...path, "in_section"],
      );
    const pattern = regex(setting.number ?? setting.says, setting.ignore_case, [...path, kind], report);
    if (!pattern) continue;
    specs.push({
      name,
      kind,
      pattern,
      default: setting.default,
      ...(setting.in_section !== undefined ? { section: setting.in_section } : {}),
    });
  }
  return { specs, ...(sections ? { sections } : {}) };
}

function regex(
  source: unknown,
  ignoreCase: boolean,
  path: YamlPath,
  report: Report,
): TextPattern | undefined {
  if (typeof source === "string") return compileRegex(source, ignoreCase ? "iu" : "u", path, report);
  report("MNT_ERR_POLICY_SCHEMA", "must be a regular expression (a string)", path);
  return undefined;
}

/**
 * The settings' values for a system prompt: a `number` is its pattern's first group at the first
 * match (the default where none matches), a `says` whether its pattern matches; both within their
 * section if they name one. Without a prompt every setting keeps its default.
 */
export function readSettings(
  settings: Omit<PolicySettings, "values">,
  system: string | undefined,
): SettingValues {
  const values: SettingValues = {};
  // The prompt is cut into sections once, not once per setting (a policy may read dozens).
  const sections =
    system !== undefined && settings.sections ? sectionTexts(system, settings.sections) : undefined;
  for (const spec of settings.specs) {
    const text =
      system === undefined
        ? undefined
        : spec.section === undefined || !sections
          ? system
          : (sections.get(spec.section) ?? "");
    if (text === undefined) values[spec.name] = spec.default;
    else if (spec.kind === "says") values[spec.name] = spec.pattern.test(text);
    else {
      const found = spec.pattern.firstMatch(text)?.[1];
      const number = Number(found?.replace(/,/g, ""));
      values[spec.name] = found !== undefined && Number.isFinite(number) ? number : spec.default;
    }
  }
  return values;
}

/** Each section's text: the lines after its header up to the next header (the first section of a name counts). */
function sectionTexts(system: string, sections: TextPattern): Map<string, string> {
  const texts = new Map<string, string>();
  let name: string | undefined;
  let lines: string[] = [];
  const close = () => {
    if (name !== undefined && !texts.has(name)) texts.set(name, lines.join("\n"));
  };
  for (const line of system.split("\n")) {
    const header = sections.firstMatch(line)?.groups?.name;
    if (header === undefined) {
      lines.push(line);
      continue;
    }
    close();
    name = header;
    lines = [];
  }
  close();
  return texts;
}

const placeholder = /(?<!\\)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The policy document with every `${name}` replaced by the setting's value (a string that is only
 * the placeholder becomes the value itself, a number or a boolean). `settings` itself is left as
 * written. An unknown name is reported where it is written.
 */
export function substituteSettings(document: unknown, values: SettingValues, report: Report): unknown {
  const visit = (value: unknown, path: YamlPath): unknown => {
    if (typeof value === "string") return substitute(value, path);
    if (Array.isArray(value)) return value.map((item, index) => visit(item, [...path, index]));
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        path.length === 0 && key === "settings" ? item : visit(item, [...path, key]),
      ]),
    );
  };
  const substitute = (text: string, path: YamlPath): unknown => {
    const whole = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(text);
    if (whole && (whole[1] as string) in values) return values[whole[1] as string];
    return text.replace(placeholder, (match, name: string) => {
      if (name in values) return String(values[name]);
      report(
        "MNT_ERR_POLICY_REFERENCE",
        `unknown setting ${name} in ${match} (declare it under settings)`,
        path,
        {
          offsetInValue: text.indexOf(match),
        },
      );
      return match;
    });
  };
  return visit(document, []);
}

/** Whether a rule's or constraint's `if` holds: a boolean, or an expression over literals once the settings are in. */
export function conditionHolds(
  condition: boolean | string | undefined,
  path: YamlPath,
  report: Report,
): boolean {
  if (condition === undefined || typeof condition === "boolean") return condition ?? true;
  try {
    const value = evaluateExpression(parseExpression(condition), {});
    if (typeof value === "boolean") return value;
    report("MNT_ERR_POLICY_SCHEMA", `if: ${condition} is not true or false`, path);
  } catch (error) {
    report("MNT_ERR_POLICY_SCHEMA", `if: ${(error as Error).message}`, path);
  }
  return true;
}
