export {
  type Advice,
  type CallVerdict,
  type Decision,
  type Duty,
  Evaluator,
  type EvaluatorOptions,
  type NextAnswer,
  type ProposedCall,
  type RuleFinding,
} from "./evaluator.js";
