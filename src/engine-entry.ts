/** `mentor/engine`: the local engine (loads node-llama-cpp) and the shielded turn that drives it or an upstream. */
export {
  type AssistantMessage,
  type AttemptCall,
  EngineGenerator,
  type GeneratedCall,
  type Generation,
  type GenerationRequest,
  givenGrounding,
  runTurn,
  type ShieldMode,
  type TurnAttempt,
  type TurnGenerator,
  type TurnOptions,
  type TurnRecord,
  type TurnResult,
  UpstreamGenerator,
  type UpstreamOptions,
  type Usage,
} from "./agent/index.js";
export {
  assistantMessage,
  Engine,
  type EngineOptions,
  type GenerationResult,
  LocalLabelModel,
} from "./llm/index.js";
export type { GenerateOptions, ShieldOptions } from "./shield/token/index.js";
