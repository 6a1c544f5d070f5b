import type { Value } from "../expression/index.js";
import type { TaskCall } from "../monitor/index.js";
import {
  fieldValue,
  type LabelTest,
  type TaskCallSpec,
  type TextPattern,
  type ToolSpec,
} from "../policy/index.js";

/** The label of the first of the tool's rules that matches the output, or undefined if none does. */
export function labelByRules(tool: ToolSpec, text: string): string | undefined {
  return tool.labeler.rules.find((rule) => testMatches(rule.test, text))?.label;
}

function testMatches(test: LabelTest, text: string): boolean {
  switch (test.kind) {
    case "regex":
    case "keywords":
      return test.pattern.test(text);
    case "json": {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return false;
      }
      for (const segment of test.path) {
        if (typeof value !== "object" || value === null) return false;
        value = (value as Record<string | number, unknown>)[segment];
      }
      return value === test.equals;
    }
    case "number": {
      const match = test.pattern.firstMatch(text);
      const number = Number((match?.[1] ?? "").replace(/[,\s_]/g, ""));
      if (!match || match[1] === undefined || !Number.isFinite(number)) return false;
      const value = number * test.scale;
      const { lt, lte, gt, gte } = test.bounds;
      return (
        (lt === undefined || value < lt) &&
        (lte === undefined || value <= lte) &&
        (gt === undefined || value > gt) &&
        (gte === undefined || value >= gte)
      );
    }
  }
}

/** What the patterns found in a request: calls, nothing, or a call they could not complete. */
export type RuleGrounding =
  | { kind: "calls"; calls: TaskCall[] }
  | { kind: "none" }
  | { kind: "error"; error: string };

/**
 * Grounds the request with the policy's patterns: every match of a task call's patterns (matches
 * overlapping an earlier one are dropped) is one call; fields its groups leave open come from the
 * call's field rules: a keyword flag over the whole text; a value first in the call's own part of
 * the text (from its match to the next), then in the whole text. A call whose fields cannot all be filled is an error, never a guess.
 */
export function groundByRules(taskCalls: Iterable<TaskCallSpec>, text: string): RuleGrounding {
  const calls: TaskCall[] = [];
  for (const spec of taskCalls) {
    const grounding = spec.grounding;
    if (!grounding || (grounding.patterns.length === 0 && Object.keys(grounding.fields).length === 0))
      continue;
    const captures =
      grounding.patterns.length === 0
        ? [{ groups: {} as Record<string, string>, part: text }]
        : patternCaptures(grounding.patterns, text);
    for (const { groups, part } of captures) {
      const argumentsOf: Record<string, Value> = {};
      for (const parameter of spec.parameters) {
        const captured = groups[parameter.name];
        const value =
          captured !== undefined
            ? fieldValue(parameter, captured)
            : fieldByRule(spec, parameter.name, part, text);
        if (value === undefined) {
          const why =
            captured !== undefined ? `${JSON.stringify(captured)} is not a valid value` : "not found";
          return { kind: "error", error: `${spec.name}: field ${parameter.name} ${why} in the request` };
        }
        argumentsOf[parameter.name] = value;
      }
      calls.push({ name: spec.name, arguments: argumentsOf });
    }
  }
  return calls.length > 0 ? { kind: "calls", calls: distinct(calls) } : { kind: "none" };
}

/**
 * The named groups of every non-overlapping match, in text order (earlier patterns win overlaps),
 * each with its part of the text: from the match to the next match.
 */
function patternCaptures(
  patterns: readonly TextPattern[],
  text: string,
): { groups: Record<string, string>; part: string }[] {
  const kept: { start: number; end: number; groups: Record<string, string> }[] = [];
  for (const pattern of patterns) {
    for (const match of pattern.allMatches(text)) {
      const start = match.index;
      const end = start + match[0].length;
      if (kept.some((other) => start < other.end && other.start < end)) continue;
      const groups = Object.fromEntries(
        Object.entries(match.groups ?? {}).filter(
          (entry): entry is [string, string] => entry[1] !== undefined,
        ),
      );
      kept.push({ start, end, groups });
    }
  }
  kept.sort((left, right) => left.start - right.start);
  return kept.map((match, index) => ({
    groups: match.groups,
    part: text.slice(match.start, kept[index + 1]?.start ?? text.length),
  }));
}

/** Calls without repeats (one binding is one call, however often it is written). */
export function distinct(calls: readonly TaskCall[]): TaskCall[] {
  const seen = new Set<string>();
  return calls.filter((call) => {
    const key = JSON.stringify(call);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Replaces the fields of calls (grounded by a model) that the policy's field rules decide on the
 * request, so a keyword flag such as `urgent` never depends on the model.
 */
export function applyFieldRules(
  specs: readonly TaskCallSpec[],
  calls: readonly TaskCall[],
  text: string,
): TaskCall[] {
  return calls.map((call) => {
    const spec = specs.find((candidate) => candidate.name === call.name);
    const decided = Object.keys(spec?.grounding?.fields ?? {}).flatMap((field) => {
      const value = spec ? fieldByRule(spec, field, text, text) : undefined;
      return value === undefined ? [] : [[field, value] as const];
    });
    return { name: call.name, arguments: { ...call.arguments, ...Object.fromEntries(decided) } };
  });
}

function fieldByRule(spec: TaskCallSpec, field: string, part: string, text: string): Value | undefined {
  const rule = spec.grounding?.fields[field];
  const parameter = spec.parameters.find((candidate) => candidate.name === field);
  if (!rule || !parameter) return undefined;
  switch (rule.kind) {
    case "flag":
      return rule.any.test(text) && !rule.unless?.test(text);
    case "choice":
      return (
        rule.choices.find((choice) => choice.pattern.test(part))?.value ??
        rule.choices.find((choice) => choice.pattern.test(text))?.value ??
        rule.default
      );
    case "pattern": {
      const match = rule.pattern.firstMatch(part) ?? rule.pattern.firstMatch(text);
      const captured = match?.groups?.[field] ?? match?.[1];
      return captured === undefined ? rule.default : fieldValue(parameter, captured);
    }
  }
}
