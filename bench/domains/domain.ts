import type { ChatTool } from "../../src/openai/index.js";

/**
 * A benchmark domain (bench/README.md): the manual the agent follows, the tools, an environment that
 * implements them over a JSON database, the tasks, mentor's policy for the manual, and an
 * evaluator that does not use the policy.
 */
export interface Domain {
  /** `travel`, `tau2-mock`, `tau2-retail`, `tau2-airline`. */
  name: string;
  /** Whether the domain reads third-party data from the data directory (`--data`); travel's is in the repository. */
  readsDataDir: boolean;
  /** The manual, given to the agent as its system prompt. */
  manual(dataDir: string): string;
  /** OpenAI tool definitions the agent sees. */
  tools(dataDir: string): ChatTool[];
  /** Path of mentor's policy for this manual. */
  policyPath: string;
  /** The tasks: the domain's own, or those of `tasksFile` (same format) when given. */
  tasks(options: { dataDir: string; tasksFile?: string }): BenchTask[];
  /** A fresh environment for one run of a task (a new copy of the database). */
  environment(task: BenchTask, dataDir: string): Environment;
  /** Whether the run did what the task asks, judged without the policy. */
  evaluate(task: BenchTask, run: ExecutedCall[], environment: Environment, dataDir: string): Verdict;
  /**
   * Optional ground truth for what the labeler infers (`--grounding oracle`): the task's pseudo
   * calls (sent as `mentor.task` on the opening), so the shield can be measured apart from the labeler.
   */
  grounding?(task: BenchTask): { name: string; arguments: Record<string, unknown> }[];
  /** Optional ground truth label of a text tool's output (sent as `mentor.label`); null = none. */
  label?(call: ExecutedCall): string | null | undefined;
}

export interface BenchTask {
  id: string;
  /** The opening user message (for tau2: the user's instructions as one message). */
  opening: string;
  /** The fixed reply the agent gets when it answers without a tool call before it is done. */
  reply?: string;
  /** False for tasks that cannot be solved without a conversation; left out of the scores. */
  solvable: boolean;
  /** Why the task is not solvable that way. */
  unsolvableReason?: string;
  /** Reference tool calls, where the domain's evaluator replays them. */
  reference?: { name: string; arguments: Record<string, unknown> }[];
}

/** A tool call the agent made and the environment executed. */
export interface ExecutedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** What the tool returned to the agent (text or JSON text). */
  output: string;
  /** The tool raised an error (bad arguments, not found, not allowed). */
  error: boolean;
}

export interface Environment {
  /** Executes a tool call on this environment's database. */
  call(name: string, args: Record<string, unknown>): { output: string; error: boolean };
  /** The database now (for state comparison). */
  state(): unknown;
}

export interface Verdict {
  pass: boolean;
  /** Why the run failed (or notes on a pass). */
  reasons: string[];
}
