import { forEachNode, type Value } from "../expression/index.js";
import type { Policy } from "../policy/index.js";
import {
  cartesian,
  type Instance,
  type OutcomeCase,
  type Run,
  type TaskCall,
  type ToolCallEvent,
} from "../run/index.js";

/** Combinations of filled-in arguments tried per candidate. */
const maxFills = 256;

/**
 * A candidate's arguments as a concrete call the run reads as the candidate's move: the same
 * instances stepped with the same letters per outcome case (`Run.instancesFor`, `Run.lettersFor`,
 * what `decide` reads). A candidate is a binding and a choice of which `when` predicates of its
 * tool hold; the arguments that name the binding may leave a predicate open (`a.k == 'x'`), and
 * then values that make the choice hold are filled in: the arguments' enum members, true and
 * false, the literals the tool's predicates compare with, the task's fields they read (a login with
 * the identification the user gave), or absent. So `next` lists, the observations restrict and
 * `decide` judges one call. Undefined when no fill does it.
 */
export function realizedArguments(
  run: Run,
  tool: string,
  given: Record<string, Value>,
  cases: readonly OutcomeCase[],
  affected: readonly number[],
  effects: readonly Int32Array[],
): Record<string, Value> | undefined {
  const { open, readsHistory } = openArguments(run, tool, given);
  // Nothing to fill: the arguments that name the binding decide every predicate there is.
  if (open.length === 0) return given;
  // The fill depends on the task and the bindings, not on the run's states: the runs of one task
  // with the same bindings share it (the advice searches build many), unless a predicate reads
  // the history.
  let known = readsHistory ? undefined : fills.get(run.task);
  if (!readsHistory && !known) {
    known = new Map();
    fills.set(run.task, known);
  }
  const key = JSON.stringify([
    run.bindings.map((binding) => [binding.entity, binding.values, binding.requested]),
    tool,
    given,
    affected,
    effects.map((masks) => [...masks]),
  ]);
  if (known?.has(key)) return known.get(key);
  let found: Record<string, Value> | undefined;
  const choices = open.map(({ values }) => [undefined, ...values]);
  if (choices.reduce((product, values) => product * values.length, 1) <= maxFills) {
    for (const fill of cartesian(choices)) {
      const args: Record<string, Value> = { ...given };
      fill.forEach((value, index) => {
        if (value !== undefined) args[(open[index] as OpenArgument).name] = value;
      });
      const call: ToolCallEvent = {
        id: "candidate",
        name: tool,
        arguments: args,
        outcome: { kind: "pending" },
      };
      if (readAs(run, call, cases, affected, effects)) {
        found = args;
        break;
      }
    }
  }
  known?.set(key, found);
  return found;
}

/** Fills found, by the runs' task (see `realizedArguments`). */
const fills = new WeakMap<readonly TaskCall[], Map<string, Record<string, Value> | undefined>>();

interface OpenArgument {
  name: string;
  values: Value[];
}

/**
 * The tool's parameters its propositions' `when` predicates read and `given` does not fill, each
 * with the values that may decide them: enum members, true and false for a boolean, else the
 * literals the predicates hold and the values of the task fields they read in `run`'s task.
 */
function openArguments(
  run: Run,
  tool: string,
  given: Record<string, Value>,
): { open: OpenArgument[]; readsHistory: boolean } {
  let byTool = whenReads.get(run.policy);
  if (!byTool) {
    byTool = new Map();
    whenReads.set(run.policy, byTool);
  }
  let reads = byTool.get(tool);
  if (!reads) {
    reads = readByWhen(run.policy, tool);
    byTool.set(tool, reads);
  }
  const unfilled = reads.arguments.filter(({ name }) => !(name in given));
  if (unfilled.length === 0) return { open: [], readsHistory: reads.history };
  const fromTask = reads.taskFields.flatMap(([name, field]) =>
    run.task.flatMap((call) =>
      call.name === name && call.arguments[field] != null ? [call.arguments[field]] : [],
    ),
  );
  const open = unfilled.map(({ name, values, enumerated }) => ({
    name,
    values: enumerated ? values : [...new Set([...values, ...fromTask])],
  }));
  return { open, readsHistory: reads.history };
}

interface WhenReads {
  /** Each read parameter with its literals (`enumerated`: its enum members or booleans, nothing else fits). */
  arguments: (OpenArgument & { enumerated: boolean })[];
  /** The task fields the predicates read (`task.<call>.<field>`), as [call, field]. */
  taskFields: [string, string][];
  history: boolean;
}

/** Per policy and tool, what its propositions' `when` predicates read. */
const whenReads = new WeakMap<Policy, Map<string, WhenReads>>();

function readByWhen(policy: Policy, toolName: string): WhenReads {
  const tool = policy.tools.get(toolName);
  const read = new Set<string>();
  const literals = new Set<Value>();
  const taskFields = new Map<string, [string, string]>();
  let history = false;
  for (const proposition of policy.propositions.values()) {
    if (proposition.tool !== toolName || !proposition.when) continue;
    forEachNode(proposition.when, (node) => {
      if (node.kind === "literal" && node.value !== null) literals.add(node.value);
      if (node.kind === "call" && node.name !== "len") history = true;
      if (node.kind === "reference" && node.root === "arguments" && typeof node.path[0] === "string")
        read.add(node.path[0]);
      const [call, field] = node.kind === "reference" && node.root === "task" ? node.path : [];
      if (typeof call === "string" && typeof field === "string")
        taskFields.set(`${call}.${field}`, [call, field]);
    });
  }
  const parameters = (tool?.parameters ?? []).filter((parameter) => read.has(parameter.name));
  return {
    arguments: parameters.map(({ name, type }) => ({
      name,
      values: typeof type === "object" ? [...type.enum] : type === "boolean" ? [true, false] : [...literals],
      enumerated: typeof type === "object" || type === "boolean",
    })),
    taskFields: [...taskFields.values()],
    history,
  };
}

/** Whether the run reads the call as the move: the same instances, the same letter per outcome case. */
function readAs(
  run: Run,
  call: ToolCallEvent,
  cases: readonly OutcomeCase[],
  affected: readonly number[],
  effects: readonly Int32Array[],
): boolean {
  if (run.introducedBindings(call).length > 0) return false;
  const read: number[] = [];
  const masks: number[][] = cases.map(() => []);
  for (const index of run.instancesFor(call)) {
    const instance = run.instances[index] as Instance;
    const letters = run.lettersFor(instance, call, cases);
    if (letters === undefined) continue;
    read.push(index);
    letters.forEach((letter, caseIndex) => {
      masks[caseIndex]?.push(instance.rule.automaton.letterMask(letter));
    });
  }
  return (
    read.join(",") === affected.join(",") &&
    masks.every((perCase, caseIndex) => perCase.join(",") === (effects[caseIndex] as Int32Array).join(","))
  );
}
