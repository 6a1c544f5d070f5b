import type { ChatTool, ParameterSchema, ToolChoice } from "../../openai/index.js";
import { type ShieldSets, turnSets } from "../token/index.js";
import { type CallSyntax, hermesSyntax, toolCallGrammar } from "./grammar.js";

/**
 * What an OpenAI-compatible engine can enforce of the token shield, per request (docs/server.md,
 * "The token shield over an upstream"): the tools, `tool_choice`, the argument schemas and,
 * where the engine takes one, a GBNF grammar. The η boost is not among them (see the docs).
 */
export interface UpstreamShieldOptions {
  /** The shield's sets at this point of the run. */
  sets: ShieldSets;
  /** The request's tools and tool_choice. */
  tools: readonly ChatTool[];
  toolChoice: ToolChoice;
  /** Whether several calls may be written in one message. Default true. */
  parallelToolCalls?: boolean;
  /**
   * `gbnf`: also a GBNF grammar of the whole answer (llama.cpp's server, llama-cpp-python), in the
   * call syntax below. Default: none.
   */
  grammar?: "gbnf";
  /** The model's call syntax, for the grammar. Default Hermes (`<tool_call>` JSON `</tool_call>`: Qwen 2.5/3, Hermes). */
  syntax?: CallSyntax;
}

/** The request fields that carry the shield upstream, or why nothing may be generated. */
export type UpstreamShield =
  | {
      /** Only the tools that are safe now, their argument schemas narrowed. */
      tools: ChatTool[];
      toolChoice: ToolChoice;
      /** The GBNF grammar of the answer (with `grammar: "gbnf"` and calls possible). */
      grammar?: string;
      refusal?: undefined;
    }
  | { refusal: string };

/**
 * The shield's sets turned into an upstream request: tools the shield finds unsafe (and those it
 * does not allow) are not sent; `tool_choice: "auto"` becomes `"required"` while ending the turn is
 * not allowed (open duties); an argument whose values are an allow-list (a declared enum, or the
 * shield's `allowed`) gets `enum` of the allowed ones, a free string with unsafe values gets
 * `not: {enum: unsafe}`, the limits a constraint puts on one argument go up as JSON Schema's
 * (`minimum`, `maximum`, their exclusive forms, `minItems`, `items.enum`, and `maxItems` for
 * counted items: all the counts together); a tool left with no allowed value
 * for an argument is not sent. With a
 * grammar, `tool_choice` goes up as `"none"` (llama.cpp's server refuses a grammar with tools
 * otherwise; the tools are still in the prompt) and the grammar decides whether a call is required.
 */
export function upstreamShield(options: UpstreamShieldOptions): UpstreamShield {
  const { sets, toolChoice } = options;
  const base = {
    tools: options.tools.map((tool) => tool.function.name),
    toolChoice,
    ...(options.parallelToolCalls !== undefined ? { parallelToolCalls: options.parallelToolCalls } : {}),
  };
  const turn = turnSets({ ...base, sets });
  if (turn.refusal !== undefined) return { refusal: turn.refusal };
  const allowed = new Set(turn.allowed);
  const tools = options.tools
    .filter((tool) => allowed.has(tool.function.name))
    .map((tool) => narrowTool(tool, sets))
    .filter((tool): tool is ChatTool => tool !== undefined);
  if (tools.length === 0) {
    // Under none, or every allowed tool lost its last allowed value to the narrowing (as if none were allowed).
    const narrowed = turnSets({ ...base, sets: { ...sets, allowedTools: [] } });
    return narrowed.refusal !== undefined ? { refusal: narrowed.refusal } : { tools, toolChoice: "none" };
  }
  const mustCall = turn.callRequired || !turn.endAllowed;
  if (options.grammar !== "gbnf") return { tools, toolChoice: plainToolChoice(toolChoice, mustCall) };
  const grammar = toolCallGrammar({
    tools,
    mustCall,
    parallel: turn.maxCalls > 1,
    syntax: options.syntax ?? hermesSyntax,
  });
  return { tools, toolChoice: "none", grammar };
}

/**
 * A `tool_choice` in the forms every OpenAI-compatible engine reads (`allowed_tools` is recent:
 * llama.cpp and others refuse or ignore it), for a request whose `tools` are already the ones
 * that may be called: `none` and a named function as they are, else `required` where the turn
 * must call and `auto` where it may.
 */
export function plainToolChoice(toolChoice: ToolChoice, mustCall: boolean): ToolChoice {
  if (toolChoice === "none" || (typeof toolChoice === "object" && toolChoice.type === "function"))
    return toolChoice;
  return mustCall ? "required" : "auto";
}

/** The tool with its argument schemas narrowed to the allowed values, or undefined when an argument has none. */
function narrowTool(tool: ChatTool, sets: ShieldSets): ChatTool | undefined {
  const entries = (sets.arguments ?? []).filter((entry) => entry.tool === tool.function.name);
  const properties = tool.function.parameters?.properties;
  if (entries.length === 0 || properties === undefined) return tool;
  const narrowed: Record<string, ParameterSchema> = { ...properties };
  for (const entry of entries) {
    const schema = properties[entry.argument];
    if (schema === undefined) continue;
    const unsafe = new Set(entry.unsafe ?? []);
    const declared = enumTexts(schema);
    // The shield's allowed values among the declared ones (the declared ones where none is).
    const within = entry.allowed?.filter((value) => declared?.includes(value) ?? true);
    const allowList = within !== undefined && within.length > 0 ? within : declared;
    if (allowList !== undefined) {
      const allowed = allowList.filter((value) => !unsafe.has(value));
      if (allowed.length === 0) return undefined;
      const values = allowed.map((text) => jsonValue(text, schema));
      narrowed[entry.argument] = { ...schema, enum: values };
    } else if (unsafe.size > 0 && isStringSchema(schema)) {
      narrowed[entry.argument] = { ...schema, not: { enum: [...unsafe] } };
    }
    const { minimum, exclusiveMinimum, maximum, exclusiveMaximum, minItems } = entry;
    const limits = Object.entries({ minimum, exclusiveMinimum, maximum, exclusiveMaximum, minItems }).filter(
      ([, bound]) => bound !== undefined,
    );
    if (limits.length > 0)
      narrowed[entry.argument] = {
        ...(narrowed[entry.argument] as ParameterSchema),
        ...Object.fromEntries(limits),
      };
    if (entry.itemsAllowed !== undefined) {
      const list = narrowed[entry.argument] as ParameterSchema;
      narrowed[entry.argument] = { ...list, items: { ...(list.items as object), enum: entry.itemsAllowed } };
    }
    // JSON Schema cannot count each item; it can bound the list by all the counts together.
    if (entry.itemsAtMost !== undefined)
      narrowed[entry.argument] = {
        ...(narrowed[entry.argument] as ParameterSchema),
        maxItems: Object.values(entry.itemsAtMost).reduce((sum, most) => sum + most, 0),
      };
  }
  return {
    ...tool,
    function: {
      ...tool.function,
      parameters: { ...(tool.function.parameters as ParameterSchema), properties: narrowed },
    },
  };
}

/** A schema's enum (or boolean's two values) as the shield's texts (strings as themselves, others as JSON). */
function enumTexts(schema: ParameterSchema): string[] | undefined {
  if (Array.isArray(schema.enum))
    return schema.enum.map((value) => (typeof value === "string" ? value : JSON.stringify(value)));
  if (schema.type === "boolean") return ["true", "false"];
  return undefined;
}

/** The JSON value a shield text stands for in this schema (a string, or the JSON a number or boolean is written as). */
function jsonValue(text: string, schema: ParameterSchema): unknown {
  if (isStringSchema(schema) && (schema.enum ?? []).every((value) => typeof value === "string")) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isStringSchema(schema: ParameterSchema): boolean {
  return (
    schema.type === "string" ||
    (schema.type === undefined &&
      Array.isArray(schema.enum) &&
      schema.enum.every((v) => typeof v === "string"))
  );
}
