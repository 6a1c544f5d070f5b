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

/** OpenAI's `tool_choice`. */
export type ToolChoice = "none" | "auto" | "required" | { type: "function"; function: { name: string } };

/** The text of a message's content (a string, or the concatenated text parts). */
export function messageText(content: ChatMessage["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? "").join("");
}
