export { type CallClass, type CandidateCall, type GameOptions,
  type TemplateOptions, StrategyTemplate } from "./template.js";
