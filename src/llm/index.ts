export { type ChatMessage, type ChatTool, chatHistoryFromMessages, messageText } from "./chat.js";
export {
  type ArgumentSets,
  CallDecoder,
  type CallSyntax,
  type DecodedCall,
  type DecodePlan,
  type ToolDefinition,
} from "./decoder.js";
export {
  assistantMessage,
  Engine,
  type EngineOptions,
  type GenerateOptions,
  type GenerationResult,
  type GenerationStats,
  planGeneration,
  type ShieldOptions,
  type ToolChoice,
} from "./engine.js";
export { type GpuChoice, gpuChoices, gpuName, parseGpuChoice } from "./gpu.js";
