import type { ChatTool, ParameterSchema, ToolChoice } from "../../openai/index.js";
import type { ShieldSets } from "../token/index.js";
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
 * `not: {enum: unsafe}`; a tool left with no allowed value for an argument is not sent. With a
 * grammar, `tool_choice` goes up as `"none"` (llama.cpp's server refuses a grammar with tools
 * otherwise; the tools are still in the prompt) and the grammar decides whether a call is required.
 */
export function upstreamShield(options: UpstreamShieldOptions): UpstreamShield {
  const { sets, toolChoice } = options;
  let candidates = [...options.tools];
  if (typeof toolChoice === "object")
    candidates = candidates.filter((tool) => tool.function.name === toolChoice.function.name);
  if (sets.allowedTools !== undefined)
    candidates = candidates.filter((tool) => sets.allowedTools?.includes(tool.function.name));
  const unsafe = new Set(sets.unsafeTools ?? []);
  const tools = candidates
    .filter((tool) => !unsafe.has(tool.function.name))
    .map((tool) => narrowTool(tool, sets))
    .filter((tool): tool is ChatTool => tool !== undefined);
  const doneAllowed = sets.doneAllowed ?? true;
  const callRequired = toolChoice === "required" || typeof toolChoice === "object";
  if (toolChoice === "none") return { tools, toolChoice };
  if (tools.length === 0) {
    if (callRequired) return { refusal: "a tool call is required, but the shield allows no tool" };
    if (!doneAllowed && options.tools.length > 0)
      return {
        refusal:
          "ending the turn is not allowed (open duties) and the shield allows no tool: nothing is allowed",
      };
    return { tools, toolChoice: "none" };
  }
  const mustCall = callRequired || !doneAllowed;
  const choice: ToolChoice = toolChoice === "auto" && !doneAllowed ? "required" : toolChoice;
  if (options.grammar !== "gbnf") return { tools, toolChoice: choice };
  const grammar = toolCallGrammar({
    tools,
    mustCall,
    parallel: options.parallelToolCalls ?? true,
    syntax: options.syntax ?? hermesSyntax,
  });
  return { tools, toolChoice: "none", grammar };
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
    const allowList = entry.allowed ?? declared;
    if (allowList !== undefined) {
      const allowed = allowList.filter((value) => !unsafe.has(value));
      if (allowed.length === 0) return undefined;
      const values = allowed.map((text) => jsonValue(text, schema));
      narrowed[entry.argument] = { ...schema, enum: values };
    } else if (unsafe.size > 0 && isStringSchema(schema)) {
      narrowed[entry.argument] = { ...schema, not: { enum: [...unsafe] } };
    }
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
