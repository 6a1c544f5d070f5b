export {
  type CallClass,
  type CandidateCall,
  type GameOptions,
  StrategyTemplate,
  type TemplateOptions,
} from "./template.js";
