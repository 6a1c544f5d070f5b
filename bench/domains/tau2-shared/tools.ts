import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MentorError } from "../../../src/errors/index.js";
import type { ChatTool, ParameterSchema } from "../../../src/openai/index.js";
import type { Database, Row } from "./database.js";

/** A tool's refusal (not found, wrong status, insufficient balance…): returned to the agent as a tool error. */
export class ToolError extends Error {}

/** The record `id` of `table`, or a tool error naming it (`order #W1 not found`). */
export function requireRecord(database: Database, table: string, id: string, noun: string): Row {
  const found = database.get(table, id);
  if (!found) throw new ToolError(`${noun} ${id} not found`);
  return found;
}

/** Reads and parses a JSON data file, or fails naming the file. */
export function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new MentorError("MNT_ERR_BENCH_DATA", `cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new MentorError("MNT_ERR_BENCH_DATA", `${file} is not JSON: ${(error as Error).message}`);
  }
}

interface SchemaEntry {
  name: string;
  description: string;
  parameters: ParameterSchema & { properties: Record<string, ParameterSchema>; required?: string[] };
}

/**
 * The domain's tools as OpenAI tools, from tau2's `tool_schemas.json` (`<domain>/tools.py`).
 * tau2 writes Python-typed parameters (enums, nested objects) as `{type: object, x-python-type}`;
 * those take their JSON Schema from tau-bench v1's OpenAI schema of the same tool and parameter.
 */
export function tau2Tools(dataDir: string, domain: string, v1File: string): ChatTool[] {
  const schemasFile = join(dataDir, "tau2", "tool_schemas.json");
  const all = readJson(schemasFile) as Record<string, SchemaEntry[]>;
  const entries = all[`${domain}/tools.py`];
  if (!Array.isArray(entries)) {
    throw new MentorError("MNT_ERR_BENCH_DATA", `${schemasFile} has no list "${domain}/tools.py"`);
  }
  const v1 = v1Tools(join(dataDir, v1File));
  return entries.map((entry) => {
    const properties: Record<string, ParameterSchema> = {};
    for (const [name, schema] of Object.entries(entry.parameters.properties)) {
      properties[name] = pythonTyped(schema)
        ? resolvedFromV1(v1, entry.name, name, schemasFile)
        : { ...schema, ...itemsWithoutPythonType(schema, v1, entry.name, name, schemasFile) };
    }
    return {
      type: "function" as const,
      function: {
        name: entry.name,
        description: entry.description,
        parameters: { type: "object", properties, required: entry.parameters.required ?? [] },
      },
    };
  });
}

/** tau-bench v1's tools of a domain, by name. */
export function v1Tools(file: string): Map<string, ChatTool> {
  const list = readJson(file) as ChatTool[];
  if (!Array.isArray(list)) throw new MentorError("MNT_ERR_BENCH_DATA", `${file} must be a list of tools`);
  return new Map(list.map((tool) => [tool.function.name, tool]));
}

function pythonTyped(schema: ParameterSchema): boolean {
  return "x-python-type" in schema;
}

function itemsWithoutPythonType(
  schema: ParameterSchema,
  v1: Map<string, ChatTool>,
  tool: string,
  parameter: string,
  file: string,
): ParameterSchema {
  const items = schema.items as ParameterSchema | undefined;
  if (!items || !pythonTyped(items)) return {};
  const resolved = resolvedFromV1(v1, tool, parameter, file);
  return { items: resolved.items };
}

function resolvedFromV1(
  v1: Map<string, ChatTool>,
  tool: string,
  parameter: string,
  file: string,
): ParameterSchema {
  const schema = v1.get(tool)?.function.parameters?.properties?.[parameter];
  if (!schema) {
    throw new MentorError(
      "MNT_ERR_BENCH_DATA",
      `${file}: ${tool}.${parameter} has a Python type and tau-bench v1 has no schema for it`,
    );
  }
  return schema;
}

/** Why arguments do not fit a tool's schema, or undefined when they do. */
export function argumentProblem(tool: ChatTool, args: Record<string, unknown>): string | undefined {
  const schema = tool.function.parameters ?? {};
  const properties = schema.properties ?? {};
  for (const name of (schema.required as string[] | undefined) ?? []) {
    if (args[name] === undefined) return `missing argument ${name}`;
  }
  for (const [name, value] of Object.entries(args)) {
    const property = properties[name];
    if (!property) return `unknown argument ${name}`;
    const problem = valueProblem(property, value, name);
    if (problem) return problem;
  }
  return undefined;
}

function valueProblem(schema: ParameterSchema, value: unknown, path: string): string | undefined {
  if (schema.enum && !schema.enum.some((member) => member === value)) {
    return `${path} must be one of ${schema.enum.map((member) => JSON.stringify(member)).join(", ")}`;
  }
  switch (schema.type) {
    case "string":
      return typeof value === "string" ? undefined : `${path} must be a string`;
    case "integer":
      return Number.isInteger(value) ? undefined : `${path} must be an integer`;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : `${path} must be a number`;
    case "array": {
      if (!Array.isArray(value)) return `${path} must be a list`;
      const items = schema.items as ParameterSchema | undefined;
      for (const [index, item] of value.entries()) {
        const problem = items ? valueProblem(items, item, `${path}[${index}]`) : undefined;
        if (problem) return problem;
      }
      return undefined;
    }
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return `${path} must be an object`;
      }
      const record = value as Record<string, unknown>;
      for (const name of (schema.required as string[] | undefined) ?? []) {
        if (record[name] === undefined) return `${path} lacks ${name}`;
      }
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (record[name] === undefined) continue;
        const problem = valueProblem(property, record[name], `${path}.${name}`);
        if (problem) return problem;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The `calculate` tool: + - * / and parentheses over decimal numbers, evaluated by a small
 * recursive-descent parser (never `eval`), rounded to 2 decimals.
 */
export function calculate(expression: string): number {
  if (!/^[0-9+\-*/(). ]*$/.test(expression)) throw new ToolError("invalid characters in expression");
  let position = 0;
  const peek = (): string | undefined => {
    while (expression[position] === " ") position++;
    return expression[position];
  };
  const sum = (): number => {
    let value = product();
    for (let next = peek(); next === "+" || next === "-"; next = peek()) {
      position++;
      value = next === "+" ? value + product() : value - product();
    }
    return value;
  };
  const product = (): number => {
    let value = factor();
    for (let next = peek(); next === "*" || next === "/"; next = peek()) {
      position++;
      value = next === "*" ? value * factor() : value / factor();
    }
    return value;
  };
  const factor = (): number => {
    const next = peek();
    if (next === "-") {
      position++;
      return -factor();
    }
    if (next === "(") {
      position++;
      const value = sum();
      if (peek() !== ")") throw new ToolError(`expected ) at ${position} in expression`);
      position++;
      return value;
    }
    const number = /^\d+(\.\d+)?|^\.\d+/.exec(expression.slice(position));
    if (!number) throw new ToolError(`expected a number at ${position} in expression`);
    position += number[0].length;
    return Number(number[0]);
  };
  const value = sum();
  if (peek() !== undefined) throw new ToolError(`unexpected ${peek()} at ${position} in expression`);
  if (!Number.isFinite(value)) throw new ToolError("the expression divides by zero");
  return roundCents(value);
}

export function roundCents(value: number): number {
  return Math.round(value * 100) / 100;
}
