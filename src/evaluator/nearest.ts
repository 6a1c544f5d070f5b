import { type Expression, forEachNode, type Value, valuesEqual } from "../expression/index.js";
import type { Policy, ToolSpec } from "../policy/index.js";

/**
 * The values at the edge of what the block-mode constraints on `tool` allow for a numeric
 * argument `name`: each number it is compared with (`a.days_supply <= 30` → 30), and for a strict
 * comparison of an integer the nearest integer inside (`a.count < 10` → 9).
 */
export function boundValues(policy: Policy, tool: ToolSpec, name: string): number[] {
  const type = tool.parameters.find((parameter) => parameter.name === name)?.type;
  if (type !== "number" && type !== "integer") return [];
  const values: number[] = [];
  for (const constraint of policy.constraints) {
    if (constraint.on.tool !== tool.name || constraint.mode !== "block") continue;
    forEachNode(constraint.require, (node) => {
      if (node.kind !== "binary") return;
      const bound = comparedBound(node.left, node.right, name, node.operator);
      if (bound === undefined) return;
      const step = type === "integer" && Number.isInteger(bound.value) ? 1 : 0;
      values.push(
        bound.operator === "<"
          ? bound.value - step
          : bound.operator === ">"
            ? bound.value + step
            : bound.value,
      );
    });
  }
  return values;
}

/** `a.<name> op literal` (or `literal op a.<name>`, turned around): the literal and the operator. */
function comparedBound(
  left: Expression,
  right: Expression,
  name: string,
  operator: string,
): { value: number; operator: string } | undefined {
  const isArgument = (node: Expression): boolean =>
    node.kind === "reference" && node.root === "arguments" && node.path.length === 1 && node.path[0] === name;
  const literal = (node: Expression): number | undefined =>
    node.kind === "literal" && typeof node.value === "number" ? node.value : undefined;
  const turned: Record<string, string> = { "<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==" };
  if (!(operator in turned)) return undefined;
  const rightNumber = literal(right);
  if (isArgument(left) && rightNumber !== undefined) return { value: rightNumber, operator };
  const leftNumber = literal(left);
  if (isArgument(right) && leftNumber !== undefined)
    return { value: leftNumber, operator: turned[operator] as string };
  return undefined;
}

/**
 * A repair's candidate values in the order they are tried, each once: for a number, the numbers
 * nearest the proposed value first (90 days → 30, the bound, before 1, a count seen earlier), then
 * the rest in their order; for anything else, as given.
 */
export function nearestFirst(given: readonly Value[], proposed: Value | undefined): Value[] {
  const values = given.filter(
    (value, index) => given.findIndex((other) => valuesEqual(other, value)) === index,
  );
  if (typeof proposed !== "number") return values;
  const numbers = values.filter((value): value is number => typeof value === "number");
  const distance = (value: number): number => Math.abs(value - proposed);
  return [
    ...numbers.sort((left, right) => distance(left) - distance(right)),
    ...values.filter((value) => typeof value !== "number"),
  ];
}
