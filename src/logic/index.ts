export {
  type AgentltlTemplate,
  agentltlTemplates,
  type CountComparison,
  countComparisons,
} from "./agentltl.js";
export {
  Automaton,
  AutomatonCache,
  type AutomatonOptions,
  type Colour,
  CompiledAutomaton,
  type Letter,
} from "./automaton.js";
export { type DeclareTemplate, declareTemplates } from "./declare.js";
export * from "./formula.js";
export { maxFormulaDepth, type ParseOptions, parseFormula } from "./parser.js";
export { PastEvaluator } from "./past.js";
export { acceptsEmpty, progress } from "./progression.js";
export { holds } from "./semantics.js";
