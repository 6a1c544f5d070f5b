export {
  apiBase,
  EngineGenerator,
  type GeneratedCall,
  type Generation,
  type GenerationRequest,
  type TurnGenerator,
  UpstreamGenerator,
  type UpstreamOptions,
  type Usage,
} from "./generator.js";
export { type Grounder, type Grounding, type GroundingNote, givenGrounding } from "./grounder.js";
export {
  type AssistantMessage,
  type AttemptCall,
  runTurn,
  type ShieldMode,
  shieldModes,
  type TurnAttempt,
  type TurnOptions,
  type TurnRecord,
  type TurnResult,
  turnRecordOf,
} from "./turn.js";
