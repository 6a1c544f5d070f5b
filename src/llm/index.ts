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
  type GenerationResult,
  type GenerationStats,
} from "./engine.js";
export { type GpuChoice, gpuChoices, gpuName, parseGpuChoice } from "./gpu.js";
export { LocalLabelModel, type LocalLabelModelOptions } from "./local-label-model.js";
export { type GenerateOptions, planGeneration, type ShieldOptions } from "./plan.js";
