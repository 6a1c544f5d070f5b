export { needsSolver } from "./advice.js";
export { Evaluator } from "./evaluator.js";
export type {
  Advice,
  CallVerdict,
  Decision,
  Duty,
  EvaluatorOptions,
  NextAnswer,
  ProposedCall,
  RuleFinding,
} from "./types.js";
