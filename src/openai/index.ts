export {
  type ChatMessage,
  type ChatTool,
  messageText,
  type ParameterSchema,
  type ToolChoice,
  type ToolDefinition,
} from "./chat.js";
export {
  createOpenAIClient,
  type OpenAIClientOptions,
  type RequestFailure,
  requestFailure,
} from "./client.js";
