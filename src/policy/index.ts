export { loadPolicy, parsePolicy } from "./load.js";
export { type AbstractMove, abstractMoves, holdsForMove, matchesForMove } from "./moves.js";
export type {
  ConstraintSpec,
  EntitySpec,
  Mode,
  Parameter,
  Policy,
  PropositionSpec,
  RuleSpec,
  TaskCallSpec,
  ToolSpec,
} from "./types.js";
