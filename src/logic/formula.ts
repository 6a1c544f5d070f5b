/**
 * LTLf formulas with past operators: an immutable, hash-consed AST.
 *
 * Every structurally equal formula is the same object (`a === b` iff equal), so formulas
 * can key maps by `id`. Conjunctions and disjunctions are kept normalized (flattened,
 * sorted by id, deduplicated, `true`/`false` absorbed, `p & !p` folded), which keeps the
 * set of residuals reached by progression finite.
 */

export type UnaryKind =
  | "not"
  | "next"
  | "weakNext"
  | "eventually"
  | "always"
  | "yesterday"
  | "weakYesterday"
  | "once"
  | "historically";
export type BinaryKind = "until" | "release" | "since";
export type JunctionKind = "and" | "or";

interface Node {
  readonly id: number;
  /** True when the formula contains a past operator. */
  readonly hasPast: boolean;
  /** True when the formula contains a future operator. */
  readonly hasFuture: boolean;
}
export interface Constant extends Node {
  readonly kind: "true" | "false";
}
export interface Atom extends Node {
  readonly kind: "atom";
  readonly name: string;
  readonly args: readonly string[];
  /** `name` or `name(arg1,arg2)`: how traces refer to the atom. */
  readonly key: string;
}
/** Internal marker used by progression: "the remaining trace is empty". Never parsed. */
export interface End extends Node {
  readonly kind: "end";
}
export interface Unary extends Node {
  readonly kind: UnaryKind;
  readonly operand: Formula;
}
export interface Binary extends Node {
  readonly kind: BinaryKind;
  readonly left: Formula;
  readonly right: Formula;
}
export interface Junction extends Node {
  readonly kind: JunctionKind;
  readonly operands: readonly Formula[];
}
export type Formula = Constant | Atom | End | Unary | Binary | Junction;

export const pastUnaryKinds: ReadonlySet<string> = new Set([
  "yesterday",
  "weakYesterday",
  "once",
  "historically",
]);
const futureKinds: ReadonlySet<string> = new Set([
  "next",
  "weakNext",
  "eventually",
  "always",
  "until",
  "release",
]);

/** True for formulas whose top operator is a past operator (Y, WY, O, H, S). */
export function isPastOperator(formula: Formula): boolean {
  return formula.kind === "since" || pastUnaryKinds.has(formula.kind);
}

const interned = new Map<string, Formula>();
let nextId = 0;

type NodeFields<T extends Formula> = Omit<T, "id" | "hasPast" | "hasFuture">;

function intern<T extends Formula>(key: string, fields: NodeFields<T>, children: readonly Formula[]): T {
  const existing = interned.get(key);
  if (existing) return existing as T;
  const kind = fields.kind;
  const hasPast = kind === "since" || pastUnaryKinds.has(kind) || children.some((child) => child.hasPast);
  const hasFuture = futureKinds.has(kind) || children.some((child) => child.hasFuture);
  const node = Object.freeze({ ...fields, id: nextId++, hasPast, hasFuture }) as unknown as T;
  interned.set(key, node);
  return node;
}

export const TRUE: Constant = intern<Constant>("true", { kind: "true" }, []);
export const FALSE: Constant = intern<Constant>("false", { kind: "false" }, []);
export const END: End = intern<End>("end", { kind: "end" }, []);

export function atom(name: string, args: readonly string[] = []): Atom {
  const key = args.length === 0 ? name : `${name}(${args.join(",")})`;
  return intern<Atom>(`atom:${key}`, { kind: "atom", name, args: Object.freeze([...args]), key }, []);
}

export function unary(kind: UnaryKind, operand: Formula): Formula {
  if (kind === "not") return not(operand);
  // Identities that hold on every trace, the empty one included.
  if (
    operand === TRUE &&
    (kind === "weakNext" || kind === "always" || kind === "weakYesterday" || kind === "historically")
  ) {
    return TRUE;
  }
  if (
    operand === FALSE &&
    (kind === "next" || kind === "eventually" || kind === "yesterday" || kind === "once")
  ) {
    return FALSE;
  }
  if (
    operand.kind === kind &&
    (kind === "always" || kind === "eventually" || kind === "once" || kind === "historically")
  ) {
    return operand;
  }
  return intern<Unary>(`${kind}:${operand.id}`, { kind, operand }, [operand]);
}

/** Negation with double negation and constants folded (not pushed inward: see `toNegationNormalForm`). */
export function not(operand: Formula): Formula {
  if (operand === TRUE) return FALSE;
  if (operand === FALSE) return TRUE;
  if (operand.kind === "not") return operand.operand;
  return intern<Unary>(`not:${operand.id}`, { kind: "not", operand }, [operand]);
}

export const next = (operand: Formula): Formula => unary("next", operand);
export const eventually = (operand: Formula): Formula => unary("eventually", operand);
export const always = (operand: Formula): Formula => unary("always", operand);

export function binary(kind: BinaryKind, left: Formula, right: Formula): Formula {
  if (right === FALSE && (kind === "until" || kind === "since")) return FALSE;
  if (right === TRUE && kind === "release") return TRUE;
  return intern<Binary>(`${kind}:${left.id},${right.id}`, { kind, left, right }, [left, right]);
}

export function and(operands: readonly Formula[]): Formula {
  return junction("and", operands);
}

export function or(operands: readonly Formula[]): Formula {
  return junction("or", operands);
}

function junction(kind: JunctionKind, operands: readonly Formula[]): Formula {
  const unit = kind === "and" ? TRUE : FALSE;
  const zero = kind === "and" ? FALSE : TRUE;
  const parts: Formula[] = [];
  for (const operand of operands) {
    if (operand === zero) return zero;
    if (operand === unit) continue;
    if (operand.kind === kind) parts.push(...operand.operands);
    else parts.push(operand);
  }
  if (parts.length === 0) return unit;
  if (parts.length === 1) return parts[0] as Formula;
  parts.sort((left, right) => left.id - right.id);
  const unique: Formula[] = [];
  let negations = false;
  for (const part of parts) {
    if (part !== unique[unique.length - 1]) unique.push(part);
    if (part.kind === "not") negations = true;
  }
  if (negations) {
    const ids = new Set(unique.map((part) => part.id));
    if (unique.some((part) => part.kind === "not" && ids.has(part.operand.id))) return zero;
  }
  if (unique.length === 1) return unique[0] as Formula;
  let key = kind;
  for (const part of unique) key += `,${part.id}`;
  return intern<Junction>(key, { kind, operands: unique }, unique);
}

export function implies(left: Formula, right: Formula): Formula {
  return or([not(left), right]);
}

export function iff(left: Formula, right: Formula): Formula {
  return and([implies(left, right), implies(right, left)]);
}

/** Weak until: `l W r` = `(l U r) | G l`. */
export function weakUntil(left: Formula, right: Formula): Formula {
  return or([binary("until", left, right), unary("always", left)]);
}

/**
 * Negation normal form of the future part: negations are pushed down to atoms, to `END`
 * and to past subformulas (which the past evaluator computes as derived atoms, so their
 * inside is left as written).
 */
export function toNegationNormalForm(formula: Formula): Formula {
  return nnf(formula, false);
}

function nnf(formula: Formula, negated: boolean): Formula {
  switch (formula.kind) {
    case "true":
    case "false":
    case "atom":
    case "end":
      return negated ? not(formula) : formula;
    case "not":
      return nnf(formula.operand, !negated);
    case "and":
    case "or": {
      const operands = formula.operands.map((operand) => nnf(operand, negated));
      return (formula.kind === "and") !== negated ? and(operands) : or(operands);
    }
    case "next":
      return unary(negated ? "weakNext" : "next", nnf(formula.operand, negated));
    case "weakNext":
      return unary(negated ? "next" : "weakNext", nnf(formula.operand, negated));
    case "eventually":
      return unary(negated ? "always" : "eventually", nnf(formula.operand, negated));
    case "always":
      return unary(negated ? "eventually" : "always", nnf(formula.operand, negated));
    case "until":
      return binary(negated ? "release" : "until", nnf(formula.left, negated), nnf(formula.right, negated));
    case "release":
      return binary(negated ? "until" : "release", nnf(formula.left, negated), nnf(formula.right, negated));
    default:
      // Past operators: a derived atom for the future part.
      return negated ? not(formula) : formula;
  }
}

/** All distinct atoms of a formula, sorted by key. */
export function atomsOf(formula: Formula): Atom[] {
  const found = new Map<string, Atom>();
  visit(formula, (node) => {
    if (node.kind === "atom") found.set(node.key, node);
  });
  return [...found.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Calls `visitor` once for every distinct subformula, children before parents. */
export function visit(formula: Formula, visitor: (node: Formula) => void): void {
  const seen = new Set<number>();
  const walk = (node: Formula): void => {
    if (seen.has(node.id)) return;
    seen.add(node.id);
    for (const child of childrenOf(node)) walk(child);
    visitor(node);
  };
  walk(formula);
}

export function childrenOf(formula: Formula): readonly Formula[] {
  if ("operand" in formula) return [formula.operand];
  if ("left" in formula) return [formula.left, formula.right];
  if ("operands" in formula) return formula.operands;
  return [];
}

const unarySymbols: Record<UnaryKind, string> = {
  not: "!",
  next: "X ",
  weakNext: "WX ",
  eventually: "F ",
  always: "G ",
  yesterday: "Y ",
  weakYesterday: "WY ",
  once: "O ",
  historically: "H ",
};
const binarySymbols: Record<BinaryKind, string> = { until: "U", release: "R", since: "S" };

// Precedence levels, loosest first; they mirror the parser.
const PRECEDENCE = { or: 1, and: 2, binary: 3, unary: 4, atom: 5 } as const;

function precedenceOf(formula: Formula): number {
  switch (formula.kind) {
    case "or":
      return PRECEDENCE.or;
    case "and":
      return PRECEDENCE.and;
    case "until":
    case "release":
    case "since":
      return PRECEDENCE.binary;
    case "true":
    case "false":
    case "atom":
    case "end":
      return PRECEDENCE.atom;
    default:
      return PRECEDENCE.unary;
  }
}

/** Prints a formula in the syntax the parser reads (`END` only appears in residuals). */
export function formatFormula(formula: Formula): string {
  const wrap = (child: Formula, minimum: number): string => {
    const text = formatFormula(child);
    return precedenceOf(child) < minimum ? `(${text})` : text;
  };
  switch (formula.kind) {
    case "true":
    case "false":
      return formula.kind;
    case "atom":
      return formula.key;
    case "end":
      return "END";
    case "and":
    case "or":
      // Sorted by text, so the output does not depend on the order formulas were built in.
      return formula.operands
        .map((operand) => wrap(operand, precedenceOf(formula) + 1))
        .sort()
        .join(formula.kind === "and" ? " & " : " | ");
    case "until":
    case "release":
    case "since":
      // Binary temporal operators associate to the right.
      return `${wrap(formula.left, PRECEDENCE.unary)} ${binarySymbols[formula.kind]} ${wrap(formula.right, PRECEDENCE.binary)}`;
    default: {
      const operand = wrap(formula.operand, PRECEDENCE.unary);
      return formula.kind === "not" || operand.startsWith("(")
        ? `${unarySymbols[formula.kind].trimEnd()}${operand}`
        : `${unarySymbols[formula.kind]}${operand}`;
    }
  }
}
