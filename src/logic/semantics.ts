import { MentorError } from "../errors/index.js";
import type { Formula } from "./formula.js";
import { acceptsEmpty } from "./progression.js";

/**
 * Reference semantics of LTLf with past, straight from the definitions: whether `formula`
 * holds on `trace` at position 0. Quadratic or worse; for tests and explanations, not for
 * monitoring. The empty trace is evaluated classically (see `acceptsEmpty`).
 */
export function holds(formula: Formula, trace: readonly ReadonlySet<string>[]): boolean {
  if (trace.length === 0) return acceptsEmpty(formula);
  const memo = new Map<string, boolean>();
  const last = trace.length - 1;
  const at = (node: Formula, position: number): boolean => {
    const key = `${node.id}@${position}`;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    const value = evaluate(node, position);
    memo.set(key, value);
    return value;
  };
  const range = (from: number, to: number): number[] =>
    from > to ? [] : Array.from({ length: to - from + 1 }, (_, index) => from + index);
  const evaluate = (node: Formula, i: number): boolean => {
    switch (node.kind) {
      case "true":
        return true;
      case "false":
        return false;
      case "atom":
        return (trace[i] as ReadonlySet<string>).has(node.key);
      case "end":
        throw new MentorError(
          "MNT_ERR_BAD_INPUT",
          "END is internal to progression and has no position semantics",
        );
      case "not":
        return !at(node.operand, i);
      case "and":
        return node.operands.every((operand) => at(operand, i));
      case "or":
        return node.operands.some((operand) => at(operand, i));
      case "next":
        return i < last && at(node.operand, i + 1);
      case "weakNext":
        return i === last || at(node.operand, i + 1);
      case "eventually":
        return range(i, last).some((j) => at(node.operand, j));
      case "always":
        return range(i, last).every((j) => at(node.operand, j));
      case "until":
        return range(i, last).some(
          (j) => at(node.right, j) && range(i, j - 1).every((k) => at(node.left, k)),
        );
      case "release":
        return range(i, last).every(
          (j) => at(node.right, j) || range(i, j - 1).some((k) => at(node.left, k)),
        );
      case "yesterday":
        return i > 0 && at(node.operand, i - 1);
      case "weakYesterday":
        return i === 0 || at(node.operand, i - 1);
      case "once":
        return range(0, i).some((j) => at(node.operand, j));
      case "historically":
        return range(0, i).every((j) => at(node.operand, j));
      case "since":
        return range(0, i).some((j) => at(node.right, j) && range(j + 1, i).every((k) => at(node.left, k)));
    }
  };
  return at(formula, 0);
}
