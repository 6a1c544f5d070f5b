import { and, END, FALSE, type Formula, not, or, TRUE } from "./formula.js";

/**
 * Formula progression (derivatives) over formulas in negation normal form.
 *
 * `progress(φ, holds)` is the obligation left on the rest of the trace after reading one
 * position at which the literals for which `holds` answers true are true. `holds` is asked
 * about atoms and about past subformulas (derived atoms computed by the past evaluator).
 * The `END` guards make strong and weak next exact on finite traces:
 *   X φ  →  φ ∧ ¬END        WX φ  →  φ ∨ END
 */
export function progress(formula: Formula, holds: (literal: Formula) => boolean): Formula {
  switch (formula.kind) {
    case "true":
    case "false":
      return formula;
    case "atom":
      return holds(formula) ? TRUE : FALSE;
    case "end":
      // A position was read, so the trace had not ended.
      return FALSE;
    case "not":
      return progress(formula.operand, holds) === TRUE ? FALSE : TRUE;
    case "and":
      return and(formula.operands.map((operand) => progress(operand, holds)));
    case "or":
      return or(formula.operands.map((operand) => progress(operand, holds)));
    case "next":
      return and([formula.operand, not(END)]);
    case "weakNext":
      return or([formula.operand, END]);
    case "eventually":
      return or([progress(formula.operand, holds), formula]);
    case "always":
      return and([progress(formula.operand, holds), formula]);
    case "until":
      return or([progress(formula.right, holds), and([progress(formula.left, holds), formula])]);
    case "release":
      return and([progress(formula.right, holds), or([progress(formula.left, holds), formula])]);
    default:
      return holds(formula) ? TRUE : FALSE;
  }
}

/**
 * Whether the obligation `formula` is met by the empty rest of a trace. On the formula
 * itself this is its classical value on the empty trace: atoms are false, strong operators
 * (X U F, Y O S) false, weak ones (WX R G, WY H) true, negation classical.
 */
export function acceptsEmpty(formula: Formula): boolean {
  switch (formula.kind) {
    case "true":
    case "end":
    case "weakNext":
    case "always":
    case "release":
    case "weakYesterday":
    case "historically":
      return true;
    case "false":
    case "atom":
    case "next":
    case "eventually":
    case "until":
    case "yesterday":
    case "once":
    case "since":
      return false;
    case "not":
      return !acceptsEmpty(formula.operand);
    case "and":
      return formula.operands.every(acceptsEmpty);
    case "or":
      return formula.operands.some(acceptsEmpty);
  }
}

/**
 * Puts a residual into disjunctive normal form over its non-Boolean parts (literals, END
 * and temporal subformulas), dropping subsumed cubes. Those parts are all subformulas of
 * the monitored formula, so there are finitely many normal forms: this is what makes the
 * automaton finite. Flattening alone is not enough (`G t & (F d | G t & (F d | …))` grows).
 */
export function toDisjunctiveNormalForm(formula: Formula): Formula {
  if (isCube(formula)) return formula;
  let normal = normalForms.get(formula.id);
  if (normal === undefined) {
    normal = or(cubesOf(formula).map((cube) => and(cube)));
    normalForms.set(formula.id, normal);
  }
  return normal;
}

// Formulas are interned for the life of the process, and so are their normal forms.
const normalForms = new Map<number, Formula>();

function isCube(formula: Formula): boolean {
  if (formula.kind === "or") return false;
  return formula.kind !== "and" || formula.operands.every((operand) => operand.kind !== "or");
}

type Cube = Formula[];

function cubesOf(formula: Formula): Cube[] {
  if (formula === TRUE) return [[]];
  if (formula === FALSE) return [];
  if (formula.kind === "or") return withoutSubsumed(formula.operands.flatMap(cubesOf));
  if (formula.kind === "and") {
    let product: Cube[] = [[]];
    for (const operand of formula.operands) {
      const operandCubes = cubesOf(operand);
      const next: Cube[] = [];
      for (const left of product) {
        for (const right of operandCubes) {
          const cube = and([...left, ...right]);
          if (cube !== FALSE)
            next.push(cube === TRUE ? [] : cube.kind === "and" ? [...cube.operands] : [cube]);
        }
      }
      product = withoutSubsumed(next);
    }
    return product;
  }
  return [[formula]];
}

/** Removes duplicate cubes and cubes that contain all literals of another cube. */
function withoutSubsumed(cubes: Cube[]): Cube[] {
  const sets = cubes.map((cube) => new Set(cube.map((part) => part.id))).sort((a, b) => a.size - b.size);
  const kept: Set<number>[] = [];
  for (const candidate of sets) {
    if (
      !kept.some((smaller) => smaller.size <= candidate.size && [...smaller].every((id) => candidate.has(id)))
    ) {
      kept.push(candidate);
    }
  }
  const byId = new Map(cubes.flat().map((part) => [part.id, part]));
  return kept.map((set) => [...set].map((id) => byId.get(id) as Formula));
}
