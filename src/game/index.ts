export { type LintFinding, type LintOptions, lintConstraints, lintPolicy } from "./lint.js";
export {
  type CallClass,
  type CandidateCall,
  type GameOptions,
  type Step,
  StrategyTemplate,
  type TemplateOptions,
} from "./template.js";
