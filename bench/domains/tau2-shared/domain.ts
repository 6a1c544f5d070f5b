import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MentorError } from "../../../src/errors/index.js";
import type { ChatTool } from "../../../src/openai/index.js";
import type { BenchTask, Domain, Environment, ExecutedCall, Verdict } from "../domain.js";
import { Database, databaseDifferences, deepFreeze, type Tables } from "./database.js";
import { argumentProblem, readJson, ToolError, tau2Tools } from "./tools.js";

/** Arguments as the agent sent them, after they fit the tool's schema. */
// biome-ignore lint/suspicious/noExplicitAny: checked against the tool's JSON Schema before a handler runs
export type Arguments = Record<string, any>;
/** One tool: reads and writes the run's database; a refusal is a thrown `ToolError`. */
export type ToolHandler = (database: Database, args: Arguments) => unknown;

/** The answer to every question the agent asks before it is done. */
export const FIXED_REPLY = "I have told you everything I know; please proceed.";

export interface Tau2DomainSpec {
  /** `tau2-retail`, `tau2-airline`. */
  name: string;
  /** tau2's folder and tool list name: `retail`, `airline`. */
  folder: string;
  /** tau-bench v1's OpenAI tool schemas of the domain, relative to the data directory. */
  v1ToolsFile: string;
  policyPath: string;
  /** The initial database, read from the data directory (called once per directory). */
  loadTables(dataDir: string): Tables;
  handlers: Record<string, ToolHandler>;
  /**
   * The account the reference acts on: whether the opening message identifies its user the way
   * the manual requires (undefined) or why not, and the records an agent that authenticated
   * that user can read (profile, orders or reservations), as JSON texts.
   */
  account(
    database: Database,
    reference: readonly Action[],
    opening: string,
  ): { problem?: string; texts: string[] };
  /** What any agent can look up without an account (retail: the products; airline: the flights), as JSON. */
  catalogue(database: Database): string;
  /**
   * The oracle grounding (`--grounding oracle`): the task calls of the policy that the request
   * truly makes, read from the reference's successful writes (replayed on a fresh database, so a
   * reference call that fails, like a wrong id the user gives first, asks for nothing) and the
   * database before them. Never from the opening's text, so it does not depend on the policy's
   * patterns being right.
   */
  requests?(writes: readonly Action[], initial: Database): TaskCall[];
  /**
   * The policy's task call that holds the opening message as written, and its field: the oracle
   * grounding gives it too (the user's own words, not what the reference did).
   */
  openingCall?: { name: string; field: string };
}

/** A pseudo call of the policy's task (`mentor.task`). */
export type TaskCall = { name: string; arguments: Record<string, unknown> };

/** A tau2 task; `requests` is its oracle grounding where the domain defines one. */
export interface Tau2BenchTask extends BenchTask {
  requests?: TaskCall[];
}

/** A reference action. */
export type Action = { name: string; arguments: Record<string, unknown> };

/** A run's environment: the domain's tools over the run's own view of the database. */
export class Tau2Environment implements Environment {
  constructor(
    readonly database: Database,
    private readonly tools: ReadonlyMap<string, ChatTool>,
    private readonly handlers: Readonly<Record<string, ToolHandler>>,
  ) {}

  call(name: string, args: Record<string, unknown>): { output: string; error: boolean } {
    const tool = this.tools.get(name);
    const handler = this.handlers[name];
    if (!tool || !handler) return failure(`unknown tool ${name}`);
    const problem = argumentProblem(tool, args);
    if (problem) return failure(`bad arguments for ${name}: ${problem}`);
    try {
      // Every output is JSON (a user id too: `"sara_doe_496"`), so a policy reads it as an outcome.
      return { output: JSON.stringify(handler(this.database, args)), error: false };
    } catch (error) {
      if (error instanceof ToolError) return failure(error.message);
      throw error;
    }
  }

  state(): Tables {
    return this.database.state();
  }
}

function failure(message: string): { output: string; error: boolean } {
  return { output: JSON.stringify({ error: message }), error: true };
}

/** A tau2 domain: the manual, tools and tasks from the data directory, the tools in TypeScript. */
export function tau2Domain(spec: Tau2DomainSpec): Domain & {
  /** Names of the tools that write to the database (tau2's `ToolType.WRITE`). */
  writeTools(dataDir: string): Set<string>;
  freshEnvironment(dataDir: string): Tau2Environment;
} {
  const tables = new Map<string, Readonly<Tables>>();
  const tools = new Map<string, ChatTool[]>();
  const toolsOf = (dataDir: string): ChatTool[] => {
    let list = tools.get(dataDir);
    if (!list) {
      list = tau2Tools(dataDir, spec.folder, spec.v1ToolsFile);
      const missing = list.filter((tool) => !spec.handlers[tool.function.name]);
      if (missing.length > 0) {
        const names = missing.map((tool) => tool.function.name).join(", ");
        throw new MentorError("MNT_ERR_BENCH_DATA", `${spec.name}: no implementation for the tools ${names}`);
      }
      tools.set(dataDir, list);
    }
    return list;
  };
  const freshEnvironment = (dataDir: string): Tau2Environment => {
    let base = tables.get(dataDir);
    if (!base) {
      base = deepFreeze(spec.loadTables(dataDir));
      tables.set(dataDir, base);
    }
    const byName = new Map(toolsOf(dataDir).map((tool) => [tool.function.name, tool]));
    return new Tau2Environment(new Database(base), byName, spec.handlers);
  };
  const writes = new Map<string, Set<string>>();
  const writeTools = (dataDir: string): Set<string> => {
    let names = writes.get(dataDir);
    if (!names) {
      const file = join(dataDir, "tau2", "tool_schemas.json");
      const entries = (readJson(file) as Record<string, { name: string; tool_type: string }[]>)[
        `${spec.folder}/tools.py`
      ];
      names = new Set(
        (entries ?? []).filter((entry) => entry.tool_type === "ToolType.WRITE").map((entry) => entry.name),
      );
      writes.set(dataDir, names);
    }
    return names;
  };

  return {
    name: spec.name,
    readsDataDir: true,
    policyPath: spec.policyPath,
    ...(spec.requests
      ? {
          grounding: (task: BenchTask) => [
            ...((task as Tau2BenchTask).requests ?? []),
            ...(spec.openingCall
              ? [{ name: spec.openingCall.name, arguments: { [spec.openingCall.field]: task.opening } }]
              : []),
          ],
        }
      : {}),
    manual: (dataDir) => readText(join(dataDir, "tau2", spec.folder, "policy.md")),
    tools: toolsOf,
    tasks: ({ dataDir, tasksFile }) => {
      const file = tasksFile ?? join(dataDir, "tau2", spec.folder, "tasks.json");
      const catalogue = spec.catalogue(freshEnvironment(dataDir).database).toLowerCase();
      return readTau2Tasks(file).map((task): Tau2BenchTask => {
        const checked = withSolvability(task, freshEnvironment(dataDir), toolsOf(dataDir), spec, catalogue);
        if (!spec.requests) return checked;
        const replay = freshEnvironment(dataDir);
        const initial = freshEnvironment(dataDir).database;
        return {
          ...checked,
          requests: oracleRequests(task, replay, initial, writeTools(dataDir), spec.requests),
        };
      });
    },
    environment: (_task, dataDir) => freshEnvironment(dataDir),
    evaluate: (task, run, environment, dataDir) =>
      evaluateByDatabase(task, run, environment, freshEnvironment(dataDir), writeTools(dataDir)),
    writeTools,
    freshEnvironment,
  };
}

/**
 * The oracle grounding of a task: its reference replayed on a fresh database; the writes that
 * succeed, and the database before any of them, give the task calls (distinct, in order).
 */
function oracleRequests(
  task: BenchTask,
  environment: Tau2Environment,
  initial: Database,
  writeTools: ReadonlySet<string>,
  requests: NonNullable<Tau2DomainSpec["requests"]>,
): TaskCall[] {
  const writes: Action[] = [];
  for (const action of task.reference ?? []) {
    const result = environment.call(action.name, action.arguments);
    if (!result.error && writeTools.has(action.name)) writes.push(action);
  }
  const seen = new Set<string>();
  return requests(writes, initial).filter((call) => {
    const key = canonical(call);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new MentorError("MNT_ERR_BENCH_DATA", `cannot read ${file}: ${(error as Error).message}`);
  }
}

interface Tau2Task {
  id?: unknown;
  user_scenario?: { instructions?: unknown };
  initial_state?: unknown;
  evaluation_criteria?: { actions?: { name?: unknown; arguments?: unknown }[] | null } | null;
}

/** The tasks of a tau2 task file, each with its opening message and reference actions. */
export function readTau2Tasks(file: string): BenchTask[] {
  const raw = readJson(file);
  if (!Array.isArray(raw)) throw new MentorError("MNT_ERR_BENCH_DATA", `${file} must be a list of tasks`);
  return raw.map((item: Tau2Task, index) => {
    const where = `${file}: task ${index}`;
    if (typeof item?.id !== "string" && typeof item?.id !== "number") {
      throw new MentorError("MNT_ERR_BENCH_DATA", `${where} has no id`);
    }
    const opening = openingOf(item.user_scenario?.instructions);
    if (!opening) {
      throw new MentorError(
        "MNT_ERR_BENCH_DATA",
        `${where} (id ${item.id}) has no user_scenario.instructions`,
      );
    }
    if (item.initial_state !== null && item.initial_state !== undefined) {
      throw new MentorError(
        "MNT_ERR_BENCH_DATA",
        `${where} (id ${item.id}) has an initial_state, which this harness does not apply (only tasks that start from the domain's database are supported)`,
      );
    }
    const actions = item.evaluation_criteria?.actions ?? [];
    const reference = actions.map((action, position) => {
      if (
        typeof action?.name !== "string" ||
        typeof action.arguments !== "object" ||
        action.arguments === null
      ) {
        throw new MentorError(
          "MNT_ERR_BENCH_DATA",
          `${where} (id ${item.id}): evaluation_criteria.actions[${position}] needs a name and arguments`,
        );
      }
      return { name: action.name, arguments: action.arguments as Record<string, unknown> };
    });
    return { id: String(item.id), opening, reply: FIXED_REPLY, solvable: true, reference };
  });
}

/** The user's instructions as one message: why they call, what they know and not, how they behave. */
function openingOf(instructions: unknown): string | undefined {
  if (typeof instructions === "string") return instructions.trim() || undefined;
  if (typeof instructions !== "object" || instructions === null) return undefined;
  const fields = instructions as Record<string, unknown>;
  const parts = ["reason_for_call", "known_info", "unknown_info", "task_instructions"]
    .map((field) => fields[field])
    .filter((part): part is string => typeof part === "string" && part.trim() !== "" && part.trim() !== ".")
    .map((part) => part.trim());
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/**
 * The rule that decides whether a task can be solved from its opening message and the fixed
 * reply:
 * 1. the opening message identifies the user the reference acts for, as the manual's
 *    authentication needs (retail: email, or first name, last name and zip; airline: user id);
 * 2. every string the reference actions pass (also inside lists and objects) is found, ignoring
 *    case, in the opening message, in that user's records an authenticated agent can read (profile,
 *    orders or reservations), in the catalogue anyone can search (retail: the products; airline:
 *    the flights and their dates), in the output of an earlier reference action
 *    (replayed on a fresh database), or in the tool's own schema (an enum member, a value its
 *    description names, such as a cancellation reason).
 * Strings match whole words (`NY` is not found in `sunny`). Numbers are not checked (the agent
 * computes them), nor free texts the agent writes itself (`calculate`'s expression, the summary of
 * a transfer), nor actions that fail on the fresh database (a wrong id the user gives first, an
 * unavailable item: they change nothing). A string found nowhere is something only a
 * conversation could supply.
 */
function withSolvability(
  task: BenchTask,
  environment: Tau2Environment,
  tools: ChatTool[],
  spec: Pick<Tau2DomainSpec, "account">,
  /** Lower case. */
  catalogue: string,
): BenchTask {
  const reference = task.reference ?? [];
  const { problem, texts } = spec.account(environment.database, reference, task.opening.toLowerCase());
  if (problem) return unsolvable(task, problem);
  const known = [...[task.opening, ...texts].map((text) => text.toLowerCase()), catalogue];
  const byName = new Map(tools.map((tool) => [tool.function.name, tool]));
  for (const [position, action] of reference.entries()) {
    const tool = byName.get(action.name);
    if (!tool) {
      return unsolvable(task, `reference action ${position + 1} calls ${action.name}, which is not a tool`);
    }
    const result = environment.call(action.name, action.arguments);
    if (result.error) continue;
    const schemaText = JSON.stringify(tool.function.parameters ?? {}).toLowerCase();
    for (const [name, value] of Object.entries(action.arguments)) {
      if (FREE_TEXT.has(`${action.name}.${name}`)) continue;
      for (const text of stringsIn(value)) {
        const needle = text.toLowerCase();
        if (!known.some((source) => containsWord(source, needle)) && !containsWord(schemaText, needle)) {
          return unsolvable(
            task,
            `reference action ${position + 1} (${action.name}) needs ${name} = ${JSON.stringify(text)}, found neither in the instructions, nor in the user's records or the catalogue, nor in an earlier reference output`,
          );
        }
      }
    }
    known.push(result.output.toLowerCase());
  }
  return task;
}

/** Whether `needle` occurs in `text` not inside a longer word or number ("ny" is not in "sunny"). */
function containsWord(text: string, needle: string): boolean {
  if (needle === "") return true;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    const before = text[at - 1] ?? " ";
    const after = text[at + needle.length] ?? " ";
    if (!WORD_CHARACTER.test(before) && !WORD_CHARACTER.test(after)) return true;
  }
  return false;
}

const WORD_CHARACTER = /[\p{L}\p{N}_]/u;

const FREE_TEXT = new Set(["calculate.expression", "transfer_to_human_agents.summary"]);

function unsolvable(task: BenchTask, reason: string): BenchTask {
  return { ...task, solvable: false, unsolvableReason: reason };
}

function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}

/**
 * tau2's database check: the reference actions replayed on a fresh database give the expected
 * state; the run passes iff its database equals it (a task whose reference writes nothing must
 * leave the database unchanged). Reasons name each differing table, record and field, then the
 * reference writes the run has no identical call for and the run's writes the reference lacks.
 */
function evaluateByDatabase(
  task: BenchTask,
  run: ExecutedCall[],
  environment: Environment,
  expected: Tau2Environment,
  writeTools: ReadonlySet<string>,
): Verdict {
  if (!(environment instanceof Tau2Environment)) {
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `task ${task.id}: the environment was not made by this domain`,
    );
  }
  const reasons: string[] = [];
  const reference = task.reference ?? [];
  for (const [position, action] of reference.entries()) {
    const result = expected.call(action.name, action.arguments);
    if (result.error) {
      reasons.push(
        `reference action ${position + 1} (${action.name}) failed on a fresh database: ${result.output}`,
      );
    }
  }
  const differences = databaseDifferences(expected.database, environment.database);
  if (differences.length === 0) return { pass: true, reasons };
  const referenceWrites = reference.filter((action) => writeTools.has(action.name));
  const runWrites = run.filter((call) => writeTools.has(call.name) && !call.error);
  if (referenceWrites.length === 0) {
    reasons.push("the reference makes no write, so the database must be unchanged");
  }
  reasons.push(...differences);
  for (const action of referenceWrites) {
    if (!runWrites.some((call) => sameCall(call, action))) {
      reasons.push(`missing write: ${formatCall(action)}`);
    }
  }
  for (const call of runWrites) {
    if (!referenceWrites.some((action) => sameCall(call, action))) {
      reasons.push(`write not in the reference: ${formatCall(call)}`);
    }
  }
  return { pass: false, reasons };
}

function sameCall(
  left: { name: string; arguments: Record<string, unknown> },
  right: { name: string; arguments: Record<string, unknown> },
): boolean {
  return left.name === right.name && canonical(left.arguments) === canonical(right.arguments);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function formatCall(call: { name: string; arguments: Record<string, unknown> }): string {
  return `${call.name}(${JSON.stringify(call.arguments)})`;
}
