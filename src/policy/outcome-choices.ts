import type { Expression, FieldType, ReferenceExpression } from "../expression/index.js";
import { satisfiableDirectly } from "../smt/index.js";

/** Fields of `o` solved together at most: each may take 3 types, so 3^n questions per combination. */
const maxFields = 4;
const fieldTypes: FieldType[] = ["string", "number", "boolean"];

/**
 * Which combinations of a JSON tool's outcome predicates one output can make true, the others
 * false: the outcome of a call is one choice of the environment, so `o.schedule == 'II'` and
 * `o.schedule != 'II'` never hold together, and `o.refills > 0` and `o.refills == 0` never do.
 * Each combination is asked of the solver's exact search (`satisfiableDirectly`), with every
 * field of `o` that the predicates read as one unknown of each JSON type in turn (absent
 * included). A predicate that reads something besides `o.<field>` (arguments, variables, the
 * history, `o` as a whole) is left free, and a combination the search cannot decide stays
 * possible: only what is proven impossible is dropped, as before every combination was possible.
 * `outcomes` are the predicates by their text; the answer lists, per possible combination in the
 * order of the masks over `outcomes`, the texts that hold.
 */
export function possibleOutcomeSets(outcomes: ReadonlyMap<string, Expression>): string[][] {
  const texts = [...outcomes.keys()];
  const fields = new Map<string, string>();
  const solved = texts.map((text) => asFieldConstraint(outcomes.get(text) as Expression, fields));
  const unknowns = [...fields.values()];
  const prefixClash = unknowns.some((field) =>
    unknowns.some((other) => other !== field && other.startsWith(`${field}.`)),
  );
  const checkable = prefixClash || unknowns.length > maxFields ? [] : solved;
  const feasible = new Map<string, boolean>();
  const combinations: string[][] = [];
  for (let mask = 0; mask < 2 ** texts.length; mask++) {
    const parts = checkable.flatMap((expression, bit) => {
      if (!expression) return [];
      return (mask >>> bit) & 1 ? [expression] : [negated(expression)];
    });
    const key = checkable.map((expression, bit) => (expression ? (mask >>> bit) & 1 : "-")).join("");
    let possible = feasible.get(key);
    if (possible === undefined) {
      possible = parts.length === 0 || someOutputMakes(parts, unknowns);
      feasible.set(key, possible);
    }
    if (possible) combinations.push(texts.filter((_, bit) => (mask >>> bit) & 1));
  }
  return combinations;
}

/** Whether some value of each field (of one JSON type each, or absent) makes every part hold. */
function someOutputMakes(parts: Expression[], fields: readonly string[]): boolean {
  for (let choice = 0; choice < fieldTypes.length ** fields.length; choice++) {
    const parameters = fields.map((name, index) => ({
      name,
      type: fieldTypes[Math.floor(choice / fieldTypes.length ** index) % fieldTypes.length] as FieldType,
    }));
    const answer = satisfiableDirectly({ tool: { name: "outcome", parameters }, constraints: parts });
    if (answer === undefined || answer.status !== "unsat") return true;
  }
  return false;
}

/**
 * The predicate with each `o.<field>` read as an argument named after its path, or undefined when
 * it reads anything else (then it is not solved with the others).
 */
function asFieldConstraint(expression: Expression, fields: Map<string, string>): Expression | undefined {
  let readsOther = false;
  const rewrite = (node: Expression): Expression => {
    switch (node.kind) {
      case "literal":
        return node;
      case "reference": {
        if (
          node.root !== "outcome" ||
          node.path.length === 0 ||
          node.path.some((part) => typeof part !== "string")
        ) {
          readsOther = true;
          return node;
        }
        const name = `o.${node.path.join(".")}`;
        fields.set(name, name);
        return { ...node, root: "arguments", path: [name] } satisfies ReferenceExpression;
      }
      case "list":
        return { ...node, elements: node.elements.map(rewrite) };
      case "member":
        readsOther = true;
        return node;
      case "unary":
        return { ...node, operand: rewrite(node.operand) };
      case "binary":
        return { ...node, left: rewrite(node.left), right: rewrite(node.right) };
      case "method":
        return { ...node, target: rewrite(node.target), arguments: node.arguments.map(rewrite) };
      case "call":
        if (node.name !== "len") readsOther = true;
        return { ...node, arguments: node.arguments.map(rewrite) };
    }
  };
  const rewritten = rewrite(expression);
  return readsOther ? undefined : rewritten;
}

/** `!(expression)`: holds exactly when the expression does not (is not exactly true). */
function negated(expression: Expression): Expression {
  return {
    kind: "unary",
    operator: "!",
    operand: expression,
    offset: expression.offset,
    length: expression.length,
  };
}
