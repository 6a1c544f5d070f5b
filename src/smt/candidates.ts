/**
 * The cheap part of a repair, in plain TypeScript before any solver call: a call that already
 * complies needs no repair, and changing one repairable argument to one of its candidate values
 * (enum members, then the caller's candidates) is checked with the evaluator directly. Either
 * is a repair with the fewest changed arguments that prefers candidates, as the solver's would
 * be; only when neither works does the request go to Z3.
 */
import { holdsIn, type Scope, type Value, valuesEqual } from "../expression/index.js";
import type { RepairRequest, RepairResult } from "./protocol.js";

/** At most this many candidate calls are evaluated before giving up to the solver. */
const maxEvaluations = 500;

export function repairWithCandidates(request: RepairRequest): RepairResult | undefined {
  const base: Scope = { ...request.scope };
  const complies = (args: Record<string, Value>) =>
    request.constraints.every((constraint) => holdsIn(constraint, { ...base, arguments: args }));
  if (complies(request.arguments))
    return { status: "repaired", arguments: { ...request.arguments }, changed: [] };
  const required = new Set(request.tool.required ?? []);
  let evaluations = 0;
  for (const name of request.repairable) {
    const parameter = request.tool.parameters.find((candidate) => candidate.name === name);
    if (parameter === undefined) continue;
    const members = typeof parameter.type === "object" ? parameter.type.enum : [];
    const values = [...members, ...(request.candidates?.[name] ?? [])];
    for (const value of values) {
      if (evaluations++ >= maxEvaluations) return undefined;
      if (value === null && required.has(name)) continue;
      if (members.length > 0 && !members.some((member) => valuesEqual(member, value))) continue;
      if (!fitsDeclared(value, parameter.type)) continue;
      if (valuesEqual(value, request.arguments[name] ?? null)) continue;
      const args = { ...request.arguments, [name]: value };
      if (value === null) delete args[name];
      if (complies(args)) return { status: "repaired", arguments: args, changed: [name] };
    }
  }
  return undefined;
}

/** Whether a value fits a parameter's declared type (enums and other types: checked elsewhere). */
export function fitsDeclared(
  value: Value,
  type: RepairRequest["tool"]["parameters"][number]["type"],
): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isSafeInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    default:
      return true;
  }
}
