/**
 * The terms the encoding builds, independent of the Z3 build that checks them: `encode.ts`
 * writes constraints against this interface, and each backend implements it — the WASM build
 * (`wasm-session.ts`) with z3-solver's API objects, the native binary (`native.ts`) as SMT-LIB
 * text. One encoder for both keeps their answers the same by construction.
 */

/** The sorts of argument variables: string → String, integer → Int, number → Real, boolean → Bool. */
export type VariableSort = "bool" | "int" | "real" | "string";

/** Term constructors over an opaque term type `T` (a Z3 API object, or SMT-LIB text). */
export interface Terms<T> {
  /** A fresh constant of the sort, named `name` (unique within the solver session). */
  constant(sort: VariableSort, name: string): T;
  bool(value: boolean): T;
  /** An integer literal (a safe integer). */
  int(value: number): T;
  /** A real literal from its exact text: `12`, `-3`, `7/2`, `-1/10`. */
  real(text: string): T;
  /** A string literal (code points up to U+2FFFF, no lone surrogates). */
  string(text: string): T;
  not(operand: T): T;
  and(...operands: T[]): T;
  or(...operands: T[]): T;
  implies(left: T, right: T): T;
  /** `=` on any sort (both sides of the same sort). */
  eq(left: T, right: T): T;
  /** Arithmetic order. */
  lt(left: T, right: T): T;
  le(left: T, right: T): T;
  /** String order (code points). */
  stringLt(left: T, right: T): T;
  stringLe(left: T, right: T): T;
  add(left: T, right: T): T;
  sub(left: T, right: T): T;
  mul(left: T, right: T): T;
  /** Real division. */
  div(left: T, right: T): T;
  neg(operand: T): T;
  toReal(operand: T): T;
  contains(text: T, part: T): T;
  /** `prefix` is a prefix of `text`. */
  prefixOf(prefix: T, text: T): T;
  suffixOf(suffix: T, text: T): T;
  concat(left: T, right: T): T;
  length(text: T): T;
}
