export { aimedAmong, type CallClass, type CandidateCall } from "./candidates.js";
export { Game } from "./game.js";
export { type LintFinding, type LintOptions, lintPolicy } from "./lint.js";
export { lintConstraints } from "./lint-constraints.js";
export {
  type CandidateClasses,
  type GameOptions,
  type Step,
  StrategyTemplate,
  type TemplateOptions,
} from "./template.js";
