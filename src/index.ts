/**
 * mentor as a library (the package's `.` entry): policies, the monitor and evaluator, the
 * middleware around an agent framework's tools, the logic core, the shield's texts and token
 * masks, the solver client. It loads neither the engine (node-llama-cpp) nor the server
 * (fastify): those are `mentor/engine` (engine-entry.ts) and `mentor/server` (server-entry.ts).
 */
export { type ErrorCode, errorCodes, MentorError, type SourceLocation } from "./errors/index.js";
export {
  type Action,
  type Advice,
  createMonitor,
  type Decision,
  type DoneCheck,
  type Duty,
  Evaluator,
  type EvaluatorOptions,
  type LogEntry,
  Monitor,
  type MonitorJSON,
  type MonitorOptions,
  type NextAnswer,
  type ProposedCall,
  type RuleFinding,
  type Stop,
} from "./evaluator/index.js";
export { type LintFinding, lintConstraints, lintPolicy } from "./game/index.js";
export {
  type Grounder,
  type Grounding,
  type GroundingNote,
  Labeler,
  type LabelerOptions,
  type LabelModel,
  OpenAILabelModel,
} from "./labeler/index.js";
export { Automaton, type Colour, declareTemplates, parseFormula } from "./logic/index.js";
export {
  callOf,
  type Guarded,
  type GuardOptions,
  outcomeOf,
  shieldAiModel,
  shieldAiTools,
  shieldLangChainTools,
  ToolGuard,
} from "./middleware/index.js";
export {
  type ChatMessage,
  type ChatTool,
  messageText,
  type ToolChoice,
  type ToolDefinition,
} from "./openai/index.js";
export { loadPolicy, type Policy, parsePolicy, type Severity } from "./policy/index.js";
export {
  type Outcome,
  type TaskCall,
  type Trace,
  type TraceNote,
  traceFromMessages,
} from "./run/index.js";
export { blockedText, doneRefusedText, formatCall, reminderText, stoppedText } from "./shield/index.js";
export {
  computeTokenMask,
  type GenerateOptions,
  type ShieldOptions,
  type ShieldSets,
  shieldSetsFor,
  shieldSetsFromNextAnswer,
  type TokenMask,
  VocabularyIndex,
} from "./shield/token/index.js";
export {
  type ConstantScope,
  type RepairRequest,
  type RepairResult,
  type SatisfiableRequest,
  type SatisfiableResult,
  type SolverBackend,
  SolverClient,
  type SolverClientOptions,
  type SolverStats,
  type SolverTool,
} from "./smt/index.js";
