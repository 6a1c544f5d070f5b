import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions } from "node-llama-cpp";
import { MentorError } from "../errors/index.js";
import { type ChatMessage, messageText, type ToolDefinition } from "../openai/index.js";

/** OpenAI messages → node-llama-cpp's chat history, ending with an open model turn. */
export function chatHistoryFromMessages(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  const pending = new Map<string, ChatModelFunctionCall>();
  let unnamed: ChatModelFunctionCall[] = [];
  messages.forEach((message, position) => {
    switch (message.role) {
      case "system":
      case "developer":
        history.push({ type: "system", text: messageText(message.content) });
        break;
      case "user":
        history.push({ type: "user", text: messageText(message.content) });
        break;
      case "assistant": {
        const response: (string | ChatModelFunctionCall)[] = [];
        const text = messageText(message.content);
        if (text !== "") response.push(text);
        unnamed = [];
        for (const call of message.tool_calls ?? []) {
          let params: unknown;
          try {
            params = JSON.parse(call.function.arguments || "{}");
          } catch {
            throw new MentorError(
              "MNT_ERR_BAD_INPUT",
              `messages[${position}]: the arguments of ${call.function.name} are not JSON`,
            );
          }
          const item: ChatModelFunctionCall = {
            type: "functionCall",
            name: call.function.name,
            params,
            result: "",
          };
          if (call.id !== undefined) pending.set(call.id, item);
          unnamed.push(item);
          response.push(item);
        }
        history.push({ type: "model", response });
        break;
      }
      case "tool": {
        const call =
          (message.tool_call_id !== undefined ? pending.get(message.tool_call_id) : undefined) ??
          unnamed.shift();
        if (call === undefined)
          throw new MentorError("MNT_ERR_BAD_INPUT", `messages[${position}]: a tool result without its call`);
        call.result = messageText(message.content);
        break;
      }
      default:
        throw new MentorError(
          "MNT_ERR_BAD_INPUT",
          `messages[${position}]: unknown role ${JSON.stringify(message.role)}`,
        );
    }
  });
  history.push({ type: "model", response: [] });
  return history;
}

/** OpenAI tools → node-llama-cpp's function descriptions (for the prompt only). */
export function chatFunctions(tools: readonly ToolDefinition[]): ChatModelFunctions {
  const functions: Record<string, { description?: string; params?: never }> = {};
  for (const tool of tools)
    functions[tool.name] = {
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.parameters !== undefined ? { params: tool.parameters as never } : {}),
    };
  return functions;
}
