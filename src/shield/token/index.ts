// plan.ts reads the token shield's default boost here.
export { defaultEta } from "../../base/defaults.js";
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
export { type ShieldSets, shieldSetsFor, shieldSetsFromNextAnswer, type ToolShieldSets } from "./sets.js";
export { decodeGgufTokens, TextVocabulary, type TokenVocabulary } from "./vocabulary.js";
export { VocabularyIndex } from "./vocabulary-index.js";
