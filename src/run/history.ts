import { holdsIn, type Scope, type Value } from "../expression/index.js";
import type { Policy } from "../policy/index.js";
import type { Binding } from "./bindings.js";
import type { ToolCallEvent } from "./trace.js";

/**
 * The history functions of an expression scope (`last`, `outcomes`, `held`, `count`, `values`) for a set of
 * bindings, over the calls `calls` returns (read on demand): the calls made before the call
 * being judged. `held` evaluates a proposition with the bindings' variables and `task` (the
 * scope's task fields).
 */
export function historyFunctions(
  policy: Policy,
  bindings: readonly Binding[],
  task: Record<string, Value>,
  calls: () => readonly ToolCallEvent[],
): NonNullable<Scope["history"]> {
  return {
    last: (tool) => {
      const event = calls().findLast((candidate) => candidate.name === tool);
      return event ? outcomeValue(event) : null;
    },
    outcomes: (tool) =>
      calls()
        .filter((event) => event.name === tool)
        .map(outcomeValue),
    held: (name) => {
      const proposition = policy.propositions.get(name);
      if (!proposition) return false;
      const variables = Object.assign({}, ...bindings.map((binding) => binding.values));
      return calls().some((event) => {
        if (event.name !== proposition.tool) return false;
        const scope: Scope = { arguments: event.arguments, variables, task, outcome: outcomeValue(event) };
        return (
          (!proposition.when || holdsIn(proposition.when, scope)) &&
          (!proposition.outcome || holdsIn(proposition.outcome, scope))
        );
      });
    },
    count: (tool) => calls().filter((event) => event.name === tool).length,
    values: (tool, argument) =>
      calls()
        .filter((event) => event.name === tool)
        .map((event) => event.arguments[argument] ?? null),
  };
}

function outcomeValue(event: ToolCallEvent): Value {
  return event.outcome.kind === "json"
    ? event.outcome.value
    : event.outcome.kind === "label"
      ? { label: event.outcome.label, ...event.outcome.fields }
      : null;
}
