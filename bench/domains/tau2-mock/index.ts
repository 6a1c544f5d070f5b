import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MentorError } from "../../../src/errors/index.js";
import type { ChatTool } from "../../../src/openai/index.js";
import { shippedPolicy } from "../../paths.js";
import type { BenchTask, Domain, Environment, ExecutedCall, Verdict } from "../domain.js";
import { stateDifferences } from "../state-diff.js";
import { readTaskArray, requireField } from "../tasks-file.js";
import { type MockDatabase, MockEnvironment } from "./environment.js";

type Call = { name: string; arguments: Record<string, unknown> };

/** A tau2 mock task with what its evaluation and initial state need. */
export interface MockBenchTask extends BenchTask {
  /** Applied to the database before the run (`initial_state.initialization_data.agent_data`). */
  initialData?: Record<string, unknown>;
  /** Run on the environment before the run (`initial_state.initialization_actions`). */
  initialActions: Call[];
  /** `evaluation_criteria.actions`, with the arguments each one's comparison looks at. */
  actions: (Call & { compareArgs?: string[] })[];
  /** `assert_task_status` assertions on the final database. */
  taskStatusAssertions: { task_id: string; expected_status: string }[];
  /** Which checks score the task: `DB`, `ENV_ASSERTION`, `ACTION` (message checks are skipped). */
  rewardBasis: string[];
}

const reply = "I have told you everything I know; please proceed.";

function mockDir(dataDir: string): string {
  return join(dataDir, "tau2", "mock");
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new MentorError("MNT_ERR_BENCH_INPUT", `${file}: ${(error as Error).message}`);
  }
}

/** The mock tools as OpenAI tools, from `tool_schemas.json`; the status is the TaskStatus enum. */
function mockTools(dataDir: string): ChatTool[] {
  const file = join(dataDir, "tau2", "tool_schemas.json");
  const schemas = (readJson(file) as Record<string, unknown>)["mock/tools.py"];
  if (!Array.isArray(schemas))
    throw new MentorError("MNT_ERR_BENCH_INPUT", `${file}: no "mock/tools.py" entry`);
  return schemas.map(
    (schema: { name: string; description: string; parameters: ChatTool["function"]["parameters"] }) => {
      const parameters = structuredClone(schema.parameters ?? { type: "object", properties: {} });
      const status = parameters?.properties?.status;
      if (status?.["x-python-type"] === "TaskStatus") {
        parameters.properties = {
          ...parameters.properties,
          status: { type: "string", enum: ["pending", "completed"], description: status.description },
        };
      }
      return {
        type: "function",
        function: { name: schema.name, description: schema.description, parameters },
      };
    },
  );
}

function freshDatabase(task: MockBenchTask, dataDir: string): MockEnvironment {
  const database = readJson(join(mockDir(dataDir), "db.json")) as MockDatabase;
  if (task.initialData) mergeInto(database as unknown as Record<string, unknown>, task.initialData);
  const environment = new MockEnvironment(database);
  for (const action of task.initialActions) {
    const result = environment.call(action.name, action.arguments);
    if (result.error) {
      throw new MentorError(
        "MNT_ERR_BENCH_INPUT",
        `task ${task.id}: initialization action ${action.name} failed: ${result.output}`,
      );
    }
  }
  return environment;
}

/** tau2's initialization data updates the database field by field (objects merge, the rest replaces). */
function mergeInto(target: Record<string, unknown>, update: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(update)) {
    const current = target[key];
    if (isObject(current) && isObject(value)) mergeInto(current, value);
    else target[key] = structuredClone(value);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export const tau2Mock: Domain = {
  name: "tau2-mock",
  readsDataDir: true,
  policyPath: shippedPolicy("tau2-mock"),
  manual: (dataDir) => readFileSync(join(mockDir(dataDir), "policy.md"), "utf8").trim(),
  tools: mockTools,
  tasks({ dataDir, tasksFile }) {
    const file = tasksFile ?? join(mockDir(dataDir), "tasks.json");
    return readTaskArray(file).map((raw, index) => readMockTask(raw, index, file));
  },
  environment: (task, dataDir) => freshDatabase(task as MockBenchTask, dataDir),
  grounding: (task) => mockRequests(task as MockBenchTask),
  evaluate: (task, run, environment, dataDir) =>
    evaluateMock(task as MockBenchTask, run, environment, dataDir),
};

/**
 * Oracle grounding (`--grounding oracle`), read from the reference actions, not the opening: the
 * mock manual prescribes a transfer to a human agent for one request only, deleting tasks
 * (sentence 4), so a reference that transfers answers a deletion request. Which tasks the user
 * meant is not in the data: `tasks` is `all`.
 */
export function mockRequests(task: MockBenchTask): { name: string; arguments: Record<string, unknown> }[] {
  const transfers = task.actions.some((action) => action.name === "transfer_to_human_agents");
  return transfers ? [{ name: "request_deletion", arguments: { tasks: "all" } }] : [];
}

/**
 * tau2's scoring without a user simulator: `DB` replays the reference actions on a fresh database
 * and compares final states (no write in the reference = the database must not change);
 * `ENV_ASSERTION` checks task statuses; `ACTION` requires each reference call among the agent's
 * calls, compared on its `compare_args` (all arguments by default).
 */
export function evaluateMock(
  task: MockBenchTask,
  run: readonly ExecutedCall[],
  environment: Environment,
  dataDir: string,
): Verdict {
  const reasons: string[] = [];
  const final = environment.state() as MockDatabase;
  if (task.rewardBasis.includes("DB")) {
    const reference = freshDatabase(task, dataDir);
    for (const action of task.actions) reference.call(action.name, action.arguments);
    reasons.push(
      ...stateDifferences(reference.state(), final).map((difference) => `database: ${difference}`),
    );
  }
  if (task.rewardBasis.includes("ENV_ASSERTION")) {
    for (const { task_id: taskId, expected_status: expected } of task.taskStatusAssertions) {
      const status = final.tasks[taskId]?.status;
      if (status !== expected)
        reasons.push(`assertion: ${taskId} has status ${status ?? "(no such task)"}, expected ${expected}`);
    }
  }
  if (task.rewardBasis.includes("ACTION")) {
    for (const action of task.actions) {
      const compared = action.compareArgs ?? Object.keys(action.arguments);
      const made = run.some(
        (call) =>
          call.name === action.name &&
          compared.every(
            (key) => JSON.stringify(call.arguments[key]) === JSON.stringify(action.arguments[key]),
          ),
      );
      if (!made)
        reasons.push(`action: no ${action.name} call matching the reference on [${compared.join(", ")}]`);
    }
  }
  return { pass: reasons.length === 0, reasons };
}

function readMockTask(raw: Record<string, unknown>, index: number, file: string): MockBenchTask {
  requireField(typeof raw.id === "string", file, `[${index}].id`, "a string");
  const at = `task ${raw.id}`;
  const scenario = (raw.user_scenario ?? {}) as { instructions?: unknown };
  const opening = typeof raw.ticket === "string" ? raw.ticket : scenario.instructions;
  requireField(typeof opening === "string", file, `${at}.ticket or user_scenario.instructions`, "a string");
  const initial = (raw.initial_state ?? {}) as Record<string, unknown>;
  const criteria = (raw.evaluation_criteria ?? {}) as Record<string, unknown>;
  const actions = readCalls(criteria.actions ?? [], file, `${at}.evaluation_criteria.actions`);
  const assertions = (criteria.env_assertions ?? []) as { func_name?: unknown; arguments?: unknown }[];
  requireField(Array.isArray(assertions), file, `${at}.evaluation_criteria.env_assertions`, "an array");
  const taskStatusAssertions = assertions.map((assertion, position) => {
    const args = assertion.arguments as { task_id?: unknown; expected_status?: unknown };
    requireField(
      assertion.func_name === "assert_task_status" &&
        typeof args?.task_id === "string" &&
        typeof args.expected_status === "string",
      file,
      `${at}.evaluation_criteria.env_assertions[${position}]`,
      "assert_task_status with task_id and expected_status",
    );
    return { task_id: args.task_id as string, expected_status: args.expected_status as string };
  });
  const rewardBasis = (criteria.reward_basis as string[] | undefined) ?? ["DB", "COMMUNICATE"];
  const initialData = ((initial.initialization_data as Record<string, unknown> | undefined)?.agent_data ??
    undefined) as Record<string, unknown> | undefined;
  const initialActions = readCalls(
    ((initial.initialization_actions ?? []) as { func_name?: unknown; arguments?: unknown }[]).map(
      (action) => ({
        name: action.func_name,
        arguments: action.arguments,
      }),
    ),
    file,
    `${at}.initial_state.initialization_actions`,
  );
  const unsolvableReason =
    initial.message_history !== undefined
      ? "it continues an earlier conversation (initial_state.message_history) that one opening message cannot carry"
      : actions.length === 0 && taskStatusAssertions.length === 0
        ? "it has no reference actions and no environment assertions: only natural-language assertions (which need an LLM judge) score it"
        : undefined;
  return {
    id: raw.id,
    opening,
    reply,
    solvable: unsolvableReason === undefined,
    ...(unsolvableReason ? { unsolvableReason } : {}),
    reference: actions.map(({ name, arguments: args }) => ({ name, arguments: args })),
    ...(initialData ? { initialData } : {}),
    initialActions,
    actions,
    taskStatusAssertions,
    rewardBasis,
  };
}

function readCalls(raw: unknown, file: string, where: string): (Call & { compareArgs?: string[] })[] {
  requireField(Array.isArray(raw), file, where, "an array");
  return (raw as Record<string, unknown>[]).map((call, index) => {
    requireField(typeof call.name === "string", file, `${where}[${index}].name`, "a string");
    requireField(isObject(call.arguments ?? {}), file, `${where}[${index}].arguments`, "an object");
    const compareArgs = call.compare_args;
    requireField(
      compareArgs === undefined || compareArgs === null || Array.isArray(compareArgs),
      file,
      `${where}[${index}].compare_args`,
      "an array",
    );
    return {
      name: call.name as string,
      arguments: (call.arguments ?? {}) as Record<string, unknown>,
      ...(Array.isArray(compareArgs) ? { compareArgs: compareArgs as string[] } : {}),
    };
  });
}
