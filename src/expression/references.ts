import {
  type Expression,
  forEachNode,
  type HistoryFunctionName,
  isHistoryFunctionName,
  type PathSegment,
  type ReferenceRoot,
} from "./ast.js";

/**
 * Something an expression reads from outside itself.
 * - `arguments`, `outcome`: the path below `a` / `o` (`a.items[0].sku` → `["items", 0, "sku"]`);
 * - `variable`: the variable's name, then the path below it (`route.origin` → `["route", "origin"]`);
 * - `task`: the task call, its field, then deeper segments (`["request_travel", "urgent"]`);
 * - `last`, `count`: `[tool]`; `held`: `[proposition]`; `values`: `[tool, argument]`.
 */
export interface Reference {
  kind: ReferenceRoot | HistoryFunctionName;
  path: PathSegment[];
  /** The span of the reference or the history call in the text. */
  offset: number;
  length: number;
}

/** Every reference of an expression, in text order, duplicates included. */
export function referencesOf(expression: Expression): Reference[] {
  const references: Reference[] = [];
  forEachNode(expression, (node) => {
    const span = { offset: node.offset, length: node.length };
    if (node.kind === "reference") {
      references.push({ kind: node.root, path: [...node.path], ...span });
    } else if (node.kind === "call" && isHistoryFunctionName(node.name)) {
      const path = node.arguments.flatMap((argument) =>
        argument.kind === "literal" && typeof argument.value === "string" ? [argument.value] : [],
      );
      references.push({ kind: node.name, path, ...span });
    }
  });
  return references.sort((left, right) => left.offset - right.offset);
}
