export {
  type Binding,
  describeBinding,
  describeInstance,
  type Instance,
  type OutcomeCase,
  outcomeCaseOf,
  Run,
} from "./run.js";
export {
  contentText,
  type Outcome,
  parseArguments,
  type TaskCall,
  type ToolCallEvent,
  type Trace,
  traceFromMessages,
} from "./trace.js";
