import { type FieldType, type Value, valuesEqual } from "../expression/index.js";
import { fitsDeclared } from "../smt/index.js";
import type { Parameter } from "./types.js";

/**
 * Why `value` is not of the parameter's declared type (`must be an integer, not the string "30"`),
 * or undefined when it is. `null` fits every type: it is how a grounding says "not known".
 */
function argumentTypeProblem(parameter: Parameter, value: unknown): string | undefined {
  if (value === null || fitsParameterType(parameter.type, value)) return undefined;
  return `must be ${typeText(parameter.type)}, not ${valueText(value)}`;
}

/** The arguments of `call` that name no parameter, and those of the wrong type, each with its field path. */
export function argumentProblems(
  parameters: readonly Parameter[],
  args: Record<string, unknown>,
  where: string,
): string[] {
  const byName = new Map(parameters.map((parameter) => [parameter.name, parameter]));
  return Object.entries(args).flatMap(([name, value]) => {
    const parameter = byName.get(name);
    if (!parameter)
      return [
        `${where}.${name} is not a parameter (${parameters.map((known) => known.name).join(", ") || "none declared"})`,
      ];
    const problem = argumentTypeProblem(parameter, value);
    return problem ? [`${where}.${name} ${problem}`] : [];
  });
}

/** Whether `value` is of a parameter's declared type: an enum's member, or of its JSON type. */
export function fitsParameterType(type: FieldType, value: unknown): boolean {
  if (typeof type === "object") return type.enum.some((member) => valuesEqual(member, value as Value));
  if (type === "array") return Array.isArray(value);
  if (type === "object") return typeof value === "object" && value !== null && !Array.isArray(value);
  return fitsDeclared(value as Value, type);
}

function typeText(type: FieldType): string {
  if (typeof type === "object")
    return `one of ${type.enum.map((member) => JSON.stringify(member)).join(", ")}`;
  return type === "integer" || type === "object" || type === "array" ? `an ${type}` : `a ${type}`;
}

function valueText(value: unknown): string {
  const kind = Array.isArray(value) ? "the array" : `the ${typeof value}`;
  const text = JSON.stringify(value);
  return `${kind} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}
