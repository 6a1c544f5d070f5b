export { chatHistoryFromMessages } from "./chat.js";
export {
  type ArgumentSets,
  CallDecoder,
  type CallSyntax,
  type DecodedCall,
  type DecodePlan,
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
} from "./engine.js";
export { type GpuChoice, gpuChoices, gpuName, parseGpuChoice } from "./gpu.js";
export { LocalLabelModel, type LocalLabelModelOptions } from "./local-label-model.js";
