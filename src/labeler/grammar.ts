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

/**
 * The label answers as a JSON schema: one of the labels or `none`, written as a JSON string
 * (`"short"`). The local model decodes with node-llama-cpp's grammar for this schema.
 */
export function labelSchema(labels: readonly string[]): { enum: string[] } {
  return { enum: [...labels, noneLabel] };
}

/**
 * A GBNF grammar admitting a JSON array of the task calls, each with all its fields typed
 * (grammars/task.gbnf). GBNF rather than a JSON schema: a string value must start with a letter,
 * digit or other non-punctuation character (no "…" placeholders) and numbers are bounded, which
 * node-llama-cpp's JSON-schema grammar cannot state.
 */
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
