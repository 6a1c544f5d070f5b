export { type Binding, describeBinding } from "./bindings.js";
export { cartesian, describeInstance, groupBy, type Instance } from "./instances.js";
export { type OutcomeCase, outcomeCaseOf } from "./outcomes.js";
export { MessageReader, type ReadFields, type ReadStep, readFields, readsAs } from "./reader.js";
export { Run } from "./run.js";
export {
  contentText,
  labelOutcome,
  type Outcome,
  parseArguments,
  refusedPrefix,
  stoppedPrefix,
  type TaskCall,
  type ToolCallEvent,
  type Trace,
  type TraceEntry,
  type TraceNote,
  traceEntries,
  traceFromMessages,
} from "./trace.js";
