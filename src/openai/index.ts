export {
  type ChatMessage,
  type ChatTool,
  messageText,
  type ParameterSchema,
  type ToolChoice,
  type ToolDefinition,
} from "./chat.js";
