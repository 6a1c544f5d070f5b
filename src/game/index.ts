export type { CandidateCall } from "./candidates.js";
export { Game } from "./game.js";
export { type LintFinding, type LintOptions, lintConstraints, lintPolicy } from "./lint.js";
export {
  type CallClass,
  type CandidateClasses,
  type GameOptions,
  type Step,
  StrategyTemplate,
  type TemplateOptions,
} from "./template.js";
