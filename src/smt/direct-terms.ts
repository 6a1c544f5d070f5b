/** The terms the direct search (`direct.ts`) reads comparisons as, and the error that hands a request to Z3. */
import type { Value } from "../expression/index.js";

/** The constraint set is outside what the direct search decides exactly: ask Z3. */
export class NotDirect extends Error {}

/** A numeric term: a linear combination of chosen arguments plus a constant. */
export interface Linear {
  kind: "linear";
  coefficients: Map<string, number>;
  constant: number;
}

/**
 * `derived`: a value that depends on the named chosen arguments only through what their classes
 * already decide (a string method's result, any function of an enum argument).
 */
export type Term =
  | { kind: "constant"; value: Value }
  | { kind: "argument"; name: string }
  | { kind: "derived"; names: string[] }
  | Linear;

/** The coefficient name standing for `len(a.<name>)` in a linear term. */
export const lengthOf = (name: string) => `\u0000len:${name}`;
/** The chosen argument a coefficient name reads. */
export const underlying = (name: string) => (name.startsWith("\u0000len:") ? name.slice(5) : name);
export function asLinear(term: Term): Linear | undefined {
  if (term.kind === "linear") return term;
  if (term.kind === "constant" && typeof term.value === "number")
    return { kind: "linear", coefficients: new Map(), constant: term.value };
  return undefined;
}

export function scaled(term: Linear, factor: number): Linear {
  const coefficients = new Map([...term.coefficients].map(([name, value]) => [name, value * factor]));
  return { kind: "linear", coefficients, constant: term.constant * factor };
}

export function termArguments(term: Term): string[] {
  if (term.kind === "argument") return [term.name];
  if (term.kind === "derived") return term.names;
  if (term.kind === "linear") return [...term.coefficients.keys()];
  return [];
}

/**
 * Where a linear comparison of `name` with itself on both sides changes truth: the value of
 * `name` that makes both sides equal; undefined when a side is not linear or `name` cancels out.
 */
export function changePoint(left: Term, right: Term, name: string): number | undefined {
  const l = asLinear(left);
  const r = asLinear(right);
  if (l === undefined || r === undefined) return undefined;
  const coefficient = (l.coefficients.get(name) ?? 0) - (r.coefficients.get(name) ?? 0);
  if (coefficient === 0) return undefined;
  const point = (r.constant - l.constant) / coefficient;
  if (!Number.isFinite(point)) throw new NotDirect("a bound out of range");
  return point;
}
