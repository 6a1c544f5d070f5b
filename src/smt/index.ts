export { fitsDeclared } from "./candidates.js";
export { type SolverBackend, SolverClient, type SolverClientOptions } from "./client.js";
export { satisfiableDirectly } from "./direct.js";
export type {
  ConstantScope,
  RepairRequest,
  RepairResult,
  SatisfiableRequest,
  SatisfiableResult,
  SolverStats,
  SolverTool,
} from "./protocol.js";
