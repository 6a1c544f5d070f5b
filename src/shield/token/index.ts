export type { ArgumentSets, CallSyntax } from "./call-syntax.js";
export {
  CallDecoder,
  type DecodeAction,
  type DecodedCall,
  type DecodeStats,
  type Tokenize,
} from "./decoder.js";
export {
  type AllowListSlot,
  computeTokenMask,
  type DenyListSlot,
  defaultStrength,
  fallbackToken,
  isTokenAllowed,
  type ShieldSlot,
  type TokenMask,
  type TokenMaskOptions,
} from "./mask.js";
export {
  type DecodePlan,
  type GenerateOptions,
  planGeneration,
  type ShieldOptions,
} from "./plan.js";
export {
  type ShieldSets,
  shieldSetsFor,
  shieldSetsFromNextAnswer,
  type ToolShieldSets,
  withDoneTool,
} from "./sets.js";
export { textCallAt, textCallOpening } from "./text-calls.js";
export {
  defaultToolChoice,
  type TurnSets,
  type TurnSetsOptions,
  turnSets,
  unknownChoiceTool,
} from "./turn-sets.js";
export { decodeGgufTokens, TextVocabulary, type TokenVocabulary } from "./vocabulary.js";
export { VocabularyIndex } from "./vocabulary-index.js";
