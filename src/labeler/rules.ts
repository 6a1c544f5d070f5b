import type { Value } from "../expression/index.js";
import {
  type FieldRule,
  fieldValue,
  type LabelTest,
  numberIn,
  type Parameter,
  type TaskCallSpec,
  type TextPattern,
  type ToolSpec,
} from "../policy/index.js";
import type { TaskCall } from "../run/index.js";

/** The label of the first of the tool's rules that matches the output, or undefined if none does. */
export function labelByRules(tool: ToolSpec, text: string): string | undefined {
  // The output read as JSON once, by the first json rule that asks: undefined when it is not JSON.
  let json: { value: unknown } | undefined | null = null;
  const parsed = (): { value: unknown } | undefined => {
    if (json === null) {
      try {
        json = { value: JSON.parse(text) };
      } catch {
        json = undefined;
      }
    }
    return json;
  };
  return tool.labeler.rules.find((rule) => testMatches(rule.test, text, parsed))?.label;
}

function testMatches(test: LabelTest, text: string, parsed: () => { value: unknown } | undefined): boolean {
  switch (test.kind) {
    case "regex":
    case "keywords":
      return test.pattern.test(text);
    case "json": {
      const json = parsed();
      if (!json) return false;
      let value = json.value;
      for (const segment of test.path) {
        if (typeof value !== "object" || value === null) return false;
        value = (value as Record<string | number, unknown>)[segment];
      }
      return value === test.equals;
    }
    case "number": {
      const match = test.pattern.firstMatch(text);
      const number = match?.[1] === undefined ? undefined : numberIn(match[1]);
      if (number === undefined) return false;
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
  const fields = new FieldReader(text);
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
          captured !== undefined ? fieldValue(parameter, captured) : fields.value(spec, parameter.name, part);
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
  // Sorted by start (then end); they do not overlap, so their ends are sorted too.
  let kept: Capture[] = [];
  for (const pattern of patterns) {
    // The matches of one pattern do not overlap each other.
    const added = pattern
      .allMatches(text)
      .map((match) => ({
        start: match.index,
        end: match.index + match[0].length,
        groups: Object.fromEntries(
          Object.entries(match.groups ?? {}).filter(
            (entry): entry is [string, string] => entry[1] !== undefined,
          ),
        ),
      }))
      .filter((capture) => !overlapsAny(kept, capture));
    kept = merged(kept, added);
  }
  return kept.map((match, index) => ({
    groups: match.groups,
    part: text.slice(match.start, kept[index + 1]?.start ?? text.length),
  }));
}

interface Capture {
  start: number;
  end: number;
  groups: Record<string, string>;
}

/** Whether the capture overlaps one of `sorted`: the last that starts before its end reaches furthest. */
function overlapsAny(sorted: readonly Capture[], capture: Capture): boolean {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((sorted[middle] as Capture).start < capture.end) low = middle + 1;
    else high = middle;
  }
  const before = sorted[low - 1];
  return before !== undefined && capture.start < before.end;
}

function merged(left: readonly Capture[], right: readonly Capture[]): Capture[] {
  const result: Capture[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const a = left[i];
    const b = right[j];
    if (
      b === undefined ||
      (a !== undefined && (a.start < b.start || (a.start === b.start && a.end <= b.end)))
    ) {
      result.push(a as Capture);
      i++;
    } else {
      result.push(b);
      j++;
    }
  }
  return result;
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
  const fields = new FieldReader(text);
  return calls.map((call) => {
    const spec = specs.find((candidate) => candidate.name === call.name);
    const decided = Object.keys(spec?.grounding?.fields ?? {}).flatMap((field) => {
      const value = spec ? fields.value(spec, field) : undefined;
      return value === undefined ? [] : [[field, value] as const];
    });
    return { name: call.name, arguments: { ...call.arguments, ...Object.fromEntries(decided) } };
  });
}

/**
 * The field rules read on one request: a value first in a call's own part of the text (a flag
 * reads the whole text only), then in the whole text, read once for every call.
 */
class FieldReader {
  private readonly inText = new Map<FieldRule, Value | undefined>();

  constructor(private readonly text: string) {}

  value(spec: TaskCallSpec, field: string, part = this.text): Value | undefined {
    const rule = spec.grounding?.fields[field];
    const parameter = spec.parameters.find((candidate) => candidate.name === field);
    if (!rule || !parameter) return undefined;
    if (rule.kind !== "flag" && part !== this.text) {
      const inPart = readField(rule, parameter, part);
      if (inPart.found) return inPart.value;
    }
    if (!this.inText.has(rule)) {
      const inText = readField(rule, parameter, this.text);
      this.inText.set(rule, inText.found ? inText.value : rule.kind === "flag" ? undefined : rule.default);
    }
    return this.inText.get(rule);
  }
}

/** What a field rule finds in a text; `found` false when nothing there decides the field. */
function readField(rule: FieldRule, parameter: Parameter, text: string): { found: boolean; value?: Value } {
  switch (rule.kind) {
    case "flag":
      return { found: true, value: rule.any.test(text) && !rule.unless?.test(text) };
    case "choice": {
      const choice = rule.choices.find((candidate) => candidate.pattern.test(text));
      return choice ? { found: true, value: choice.value } : { found: false };
    }
    case "pattern": {
      const match = rule.pattern.firstMatch(text);
      if (!match) return { found: false };
      const captured = match.groups?.[parameter.name] ?? match[1];
      return { found: true, value: captured === undefined ? rule.default : fieldValue(parameter, captured) };
    }
  }
}

/**
 * A later message's task calls marked by the task's `amends` and `withdraws` words: a call of a
 * task whose withdraw words occur withdraws (its arguments say which standing call), one whose
 * amend words occur amends; where withdraw words occur and no call of that task was grounded, the
 * latest standing call of it is withdrawn (`arguments: {}`). Other results are kept as they are.
 */
export function withChanges<R extends { value: unknown; source: string } | { error: string; source: string }>(
  specs: readonly TaskCallSpec[],
  result: R,
  text: string,
): R {
  const calls = "value" in result && Array.isArray(result.value) ? (result.value as TaskCall[]) : [];
  const grounding = (name: string) => specs.find((spec) => spec.name === name)?.grounding;
  const marked = calls.map((call) =>
    grounding(call.name)?.withdraws?.test(text)
      ? { ...call, withdraws: true }
      : grounding(call.name)?.amends?.test(text)
        ? { ...call, amends: true }
        : call,
  );
  const withdrawn = specs
    .filter((spec) => spec.grounding?.withdraws?.test(text) && !calls.some((call) => call.name === spec.name))
    .map((spec) => ({ name: spec.name, arguments: {}, withdraws: true }));
  const changed = marked.some((call, index) => call !== calls[index]) || withdrawn.length > 0;
  if (!changed) return result;
  return { value: [...marked, ...withdrawn], source: "value" in result ? result.source : "rule" } as R;
}
