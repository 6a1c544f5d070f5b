import { readFileSync } from "node:fs";
import type { Parameter, TaskCallSpec } from "../policy/index.js";

const grammarsDirectory = new URL("../../../grammars/", import.meta.url);

/** The "none" choice: the output fits none of the declared labels. */
export const noneLabel = "none";

/** At most this many pseudo calls in one grounded request. */
export const maxGroundedCalls = 4;

/** A template's rules (its comment lines dropped: they mention the placeholders). */
function template(name: string): string {
  return readFileSync(new URL(name, grammarsDirectory), "utf8")
    .split("\n")
    .filter((line) => !line.startsWith("#"))
    .join("\n");
}

/** GBNF literal for a text. */
function literal(text: string): string {
  return JSON.stringify(text);
}

/** A grammar admitting exactly one of the labels or `none` (grammars/label.gbnf). */
export function labelGrammar(labels: readonly string[]): string {
  return template("label.gbnf").replace("{{labels}}", [...labels, noneLabel].map(literal).join(" | "));
}

/** A grammar admitting a JSON array of the task calls, each with all its fields typed (grammars/task.gbnf). */
export function taskGrammar(calls: readonly TaskCallSpec[]): string {
  const alternatives = calls.map((call) => {
    const parts: string[] = [literal(`{"name": ${JSON.stringify(call.name)}, "arguments": {`)];
    call.parameters.forEach((parameter, index) => {
      parts.push(
        literal(`${index > 0 ? ", " : ""}${JSON.stringify(parameter.name)}: `),
        valueRule(parameter),
      );
    });
    parts.push(literal("}}"));
    return `( ${parts.join(" ")} )`;
  });
  return template("task.gbnf")
    .replace("{{more_calls}}", String(maxGroundedCalls - 1))
    .replace("{{calls}}", alternatives.length > 0 ? alternatives.join(" | ") : '"null"');
}

function valueRule(parameter: Parameter): string {
  const type = parameter.type;
  if (typeof type === "object" && "enum" in type)
    return `( ${type.enum.map((value) => literal(JSON.stringify(value))).join(" | ")} )`;
  switch (type) {
    case "string":
    case "number":
    case "integer":
    case "boolean":
      return type;
    default:
      return "value";
  }
}
