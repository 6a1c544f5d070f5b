import type { Value } from "../expression/index.js";
import type { Parameter, TaskCallSpec } from "../policy/index.js";
import type { TaskCall } from "../run/index.js";
import { maxGroundedCalls, noneLabel } from "./grammar.js";

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** A model's label answer (`long`, `"long"` or `{"label": "long"}`): a declared label, null for none, or an error. */
export function parseLabel(raw: string, labels: readonly string[]): Parsed<string | null> {
  let text = raw.trim();
  if (text.startsWith("{") || text.startsWith('"')) {
    try {
      const value = JSON.parse(text) as unknown;
      text = typeof value === "string" ? value : String((value as { label?: unknown })?.label ?? "");
    } catch {
      return { ok: false, error: `the answer is not valid JSON: ${preview(raw)}` };
    }
  }
  if (text === noneLabel) return { ok: true, value: null };
  if (labels.includes(text)) return { ok: true, value: text };
  return {
    ok: false,
    error: `the answer ${preview(raw)} is not one of ${[...labels, noneLabel].join(", ")}`,
  };
}

/** A model's task answer (`[…]` or `{"calls": […]}`): calls that match the policy's task calls exactly, or an error. */
export function parseCalls(raw: string, specs: readonly TaskCallSpec[]): Parsed<TaskCall[]> {
  let value: unknown;
  try {
    value = JSON.parse(raw.trim());
  } catch {
    return { ok: false, error: `the answer is not valid JSON: ${preview(raw)}` };
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value) && "calls" in value)
    value = (value as { calls: unknown }).calls;
  if (!Array.isArray(value)) return { ok: false, error: "the answer is not a JSON array of calls" };
  if (value.length > maxGroundedCalls) return { ok: false, error: `more than ${maxGroundedCalls} calls` };
  const calls: TaskCall[] = [];
  for (const [index, item] of value.entries()) {
    const problem = callProblem(item, specs);
    if (problem) return { ok: false, error: `call ${index}: ${problem}` };
    calls.push(item as TaskCall);
  }
  return { ok: true, value: calls };
}

function callProblem(item: unknown, specs: readonly TaskCallSpec[]): string | undefined {
  const call = item as { name?: unknown; arguments?: unknown };
  if (typeof call !== "object" || call === null) return "not an object";
  const spec = specs.find((candidate) => candidate.name === call.name);
  if (!spec)
    return `${JSON.stringify(call.name)} is not a task call (${specs.map((s) => s.name).join(", ")})`;
  const extraKeys = Object.keys(call).filter((key) => key !== "name" && key !== "arguments");
  if (extraKeys.length > 0) return `unexpected keys ${extraKeys.join(", ")}`;
  const argumentsOf = call.arguments;
  if (typeof argumentsOf !== "object" || argumentsOf === null || Array.isArray(argumentsOf))
    return "arguments must be an object";
  const values = argumentsOf as Record<string, Value>;
  for (const key of Object.keys(values)) {
    if (!spec.parameters.some((parameter) => parameter.name === key))
      return `${spec.name} has no field ${key}`;
  }
  for (const parameter of spec.parameters) {
    if (!(parameter.name in values)) return `field ${parameter.name} is missing`;
    if (!hasType(values[parameter.name] as Value, parameter))
      return `field ${parameter.name} is not of type ${JSON.stringify(parameter.type)}`;
  }
  return undefined;
}

/**
 * A string value starts with a letter, a digit or another non-punctuation character, so a
 * placeholder ("…", "?", "-", "，") is no value; grammars/task.gbnf admits the same first characters
 * (ASCII, general and CJK/full-width punctuation excluded).
 */
const valueStart =
  /^[^\p{Cc}\x20-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E\u2000-\u206F\u3000-\u303F\uFF00-\uFF0F\uFF1A-\uFF20]/u;

function hasType(value: Value, parameter: Parameter): boolean {
  const type = parameter.type;
  if (typeof type === "object") return type.enum.includes(value as never);
  switch (type) {
    case "string":
      return typeof value === "string" && valueStart.test(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

function preview(raw: string): string {
  return JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
}
