export { chatHistoryFromMessages } from "./chat.js";
export {
  assistantMessage,
  Engine,
  type EngineOptions,
  type GenerationResult,
  type GenerationStats,
} from "./engine.js";
export { type GpuChoice, gpuChoices, gpuName, parseGpuChoice } from "./gpu.js";
export { LocalLabelModel, type LocalLabelModelOptions } from "./local-label-model.js";
