export {
  type AllowedToolsChoice,
  type ChatMessage,
  type ChatTool,
  messageText,
  type NamedToolChoice,
  type ParameterSchema,
  systemText,
  type ToolChoice,
  type ToolDefinition,
} from "./chat.js";
export {
  createOpenAIClient,
  type OpenAIClientOptions,
  type RequestFailure,
  requestFailure,
} from "./client.js";
export {
  depthProblem,
  formatJsonPath,
  type InputProblem,
  type JsonPath,
  maxJsonDepth,
  pathBeyondDepth,
} from "./json-depth.js";
export {
  expectedText,
  firstProblem,
  issue,
  messagesSchema,
  schemaProblem,
} from "./message-schema.js";
