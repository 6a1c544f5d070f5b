/**
 * The shapes of OpenAI's chat completions API that mentor reads and writes: messages, tools and
 * `tool_choice`. Plain types and one pure helper, so that every part (the server, the turn, the
 * upstream client, the local engine) can share them without loading the engine.
 */

/** An OpenAI chat message (the parts mentor reads; others pass through). */
export interface ChatMessage {
  role: "system" | "developer" | "user" | "assistant" | "tool";
  content?: string | null | { type: string; text?: string }[];
  tool_calls?: { id?: string; type?: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  name?: string;
  [key: string]: unknown;
}

/** A JSON Schema of one tool's parameters, the parts mentor reads. */
export interface ParameterSchema {
  type?: string | string[];
  properties?: Record<string, ParameterSchema>;
  enum?: unknown[];
  [key: string]: unknown;
}

/** The `function` of an OpenAI tool. */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: ParameterSchema;
}

/** An OpenAI tool. */
export interface ChatTool {
  type: "function";
  function: ToolDefinition;
}

/** A `tool_choice` that names one function: the turn must call it. */
export interface NamedToolChoice {
  type: "function";
  function: { name: string };
}

/**
 * A `tool_choice` that offers a subset of `tools` this turn (`tools` itself stays the same from
 * turn to turn, for prompt caching): `auto` may call one of them, `required` must.
 */
export interface AllowedToolsChoice {
  type: "allowed_tools";
  allowed_tools: { mode: "auto" | "required"; tools: NamedToolChoice[] };
}

/** OpenAI's `tool_choice`, in every form (docs/server.md, "tool_choice"). */
export type ToolChoice = "none" | "auto" | "required" | NamedToolChoice | AllowedToolsChoice;

/** The text of the system and developer messages (the manual as the agent reads it), or undefined if there are none. */
export function systemText(messages: readonly ChatMessage[]): string | undefined {
  const texts = messages
    .filter((message) => message.role === "system" || message.role === "developer")
    .map((message) => messageText(message.content));
  return texts.length > 0 ? texts.join("\n\n") : undefined;
}

/** The text of a message's content (a string, or the concatenated text parts). */
export function messageText(content: ChatMessage["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? "").join("");
}
