export {
  type Advice,
  type CallVerdict,
  type Decision,
  type Duty,
  Evaluator,
  type EvaluatorOptions,
  type NextAnswer,
  needsSolver,
  type ProposedCall,
  type RuleFinding,
} from "./evaluator.js";
