export { needsSolver } from "./advisor.js";
export { SearchBudget, type SearchLimits, throwIfAborted, yieldToEventLoop } from "./budget.js";
export { type Compliance, type ComplianceLabel, complianceOf } from "./compliance.js";
export { createMonitor, Evaluator, type MonitorOptions } from "./evaluator.js";
export { monitorRecord, type RecordsOption, RunRecords } from "./flight.js";
export { type DoneCheck, type LogEntry, Monitor, type MonitorJSON, type MonitorSnapshot } from "./monitor.js";
export {
  FlightRecorder,
  type FlightRecorderOptions,
  type RecorderFileSystem,
  type RecorderHealth,
  type RecordWriter,
} from "./recorder.js";
export type { RunCacheLimits } from "./run-cache.js";
export { type EnforcementState, sameCall } from "./severities.js";
export type {
  Action,
  Advice,
  ArgumentLimits,
  CallVerdict,
  Decision,
  Duty,
  EvaluatorOptions,
  NextAnswer,
  ProposedCall,
  RuleFinding,
  Stop,
} from "./types.js";
export {
  brokenRules,
  type Verification,
  type VerifiedCall,
  type VerifiedRule,
  verifyConversation,
} from "./verify.js";
