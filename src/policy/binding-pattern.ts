import type { Expression, PathSegment } from "../expression/index.js";

/** Variable → argument path for `a.<path> == variable` conjuncts (either side) at the top of `when`. */
export function bindingPatternOf(when: Expression): Record<string, PathSegment[]> {
  const pattern: Record<string, PathSegment[]> = {};
  const visit = (node: Expression): void => {
    if (node.kind !== "binary") return;
    if (node.operator === "&&") {
      visit(node.left);
      visit(node.right);
      return;
    }
    if (node.operator !== "==") return;
    for (const [argument, variable] of [
      [node.left, node.right],
      [node.right, node.left],
    ] as const) {
      if (
        argument.kind === "reference" &&
        argument.root === "arguments" &&
        variable.kind === "reference" &&
        variable.root === "variable" &&
        variable.path.length === 1
      ) {
        pattern[variable.path[0] as string] = argument.path;
      }
    }
  };
  visit(when);
  return pattern;
}
