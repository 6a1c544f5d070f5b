export { argumentProblems, fitsParameterType } from "./argument-types.js";
export { policyGrammar, policyJsonSchema } from "./json-schema.js";
export { fieldValue, numberIn, outputFieldValues } from "./labeling.js";
export { loadPolicy, parsePolicy, policyForSystem } from "./load.js";
export { type AbstractMove, abstractMoves, holdsForMove, matchesForMove } from "./moves.js";
export { patternContext, patternWindow, TextPattern } from "./text-pattern.js";
export type {
  ConstraintSpec,
  EntitySpec,
  FieldRule,
  LabelRule,
  LabelTest,
  Mode,
  NumberBounds,
  OutputLabeler,
  Parameter,
  Policy,
  PropositionSpec,
  RuleSpec,
  Severity,
  TaskCallSpec,
  TaskGrounding,
  ToolSpec,
} from "./types.js";
