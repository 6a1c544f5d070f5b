/**
 * The WASM backend's side of `solve.ts`: terms as z3-solver API objects and a session on one
 * `Solver` (repairs) or `Optimize` (satisfiability) object. Runs inside the solver process
 * (`worker.ts`), which holds back garbage-collection finalizers while a request runs.
 */
import type { Arith, Bool, Context, Expr, IntNum, Optimize, Seq, Solver } from "z3-solver";
import type { Value } from "../expression/index.js";
import { type ArgumentVariable, decodeZ3String, escapeZ3String } from "./encode.js";
import { type Session, SolverTimeout } from "./solve.js";
import type { Terms } from "./terms.js";

type Z3 = Context<"main">;
type Term = Expr<"main">;

const bool = (term: Term) => term as Bool<"main">;
const arith = (term: Term) => term as Arith<"main">;
const seq = (term: Term) => term as Seq<"main">;

export function wasmTerms(z3: Z3): Terms<Term> {
  return {
    constant: (sort, name) =>
      sort === "bool"
        ? z3.Bool.const(name)
        : sort === "int"
          ? z3.Int.const(name)
          : sort === "real"
            ? z3.Real.const(name)
            : z3.String.const(name),
    bool: (value) => z3.Bool.val(value),
    int: (value) => z3.Int.val(value),
    real: (text) => z3.Real.val(text),
    string: (text) => z3.String.val(escapeZ3String(text)),
    not: (operand) => z3.Not(bool(operand)),
    and: (...operands) => z3.And(...operands.map(bool)),
    or: (...operands) => z3.Or(...operands.map(bool)),
    implies: (left, right) => z3.Implies(bool(left), bool(right)),
    eq: (left, right) => (left as Expr<"main">).eq(right as never),
    lt: (left, right) => arith(left).lt(arith(right)),
    le: (left, right) => arith(left).le(arith(right)),
    stringLt: (left, right) => seq(left).lt(seq(right)),
    stringLe: (left, right) => seq(left).le(seq(right)),
    add: (left, right) => arith(left).add(arith(right)),
    sub: (left, right) => arith(left).sub(arith(right)),
    mul: (left, right) => arith(left).mul(arith(right)),
    div: (left, right) => arith(left).div(arith(right)),
    neg: (operand) => arith(operand).neg(),
    toReal: (operand) => z3.ToReal(arith(operand)),
    contains: (text, part) => seq(text).contains(seq(part)),
    prefixOf: (prefix, text) => seq(prefix).prefixOf(seq(text)),
    suffixOf: (suffix, text) => seq(suffix).suffixOf(seq(text)),
    concat: (left, right) => seq(left).concat(seq(right)),
    length: (text) => seq(text).length(),
  };
}

/** A session on one z3-solver object; `release()` frees it (call it when the request is done). */
export class WasmSession implements Session<Term> {
  readonly terms: Terms<Term>;
  readonly #z3: Z3;
  readonly #solver: Solver<"main"> | Optimize<"main">;

  constructor(z3: Z3, kind: "solver" | "optimize") {
    this.#z3 = z3;
    this.terms = wasmTerms(z3);
    this.#solver = kind === "solver" ? new z3.Solver() : new z3.Optimize();
  }

  add(formula: Term): void {
    this.#solver.add(bool(formula));
  }

  push(): void {
    this.#solver.push();
  }

  pop(): void {
    this.#solver.pop();
  }

  async check(timeoutMs: number): Promise<"sat" | "unsat"> {
    this.#solver.set("timeout", Math.max(1, Math.round(timeoutMs)));
    const result = await this.#solver.check();
    if (result === "unknown") throw new SolverTimeout(`Z3 gave up (unknown) within ${timeoutMs} ms`);
    return result;
  }

  async readModel(variables: readonly ArgumentVariable<Term>[], into: Record<string, Value>): Promise<void> {
    const z3 = this.#z3;
    const model = this.#solver.model();
    for (const variable of variables) {
      if (!z3.isTrue(model.eval(variable.present, true))) {
        delete into[variable.name];
        continue;
      }
      const value = model.eval(variable.value, true);
      switch (variable.sort) {
        case "bool":
          into[variable.name] = z3.isTrue(value);
          break;
        case "int":
          into[variable.name] = Number(numeral(value));
          break;
        case "real":
          into[variable.name] = fraction(numeral(value));
          break;
        case "string": {
          const length = Number(numeral(model.eval(seq(variable.value).length(), true)));
          into[variable.name] = readString(seq(value).asString(), length, (index) =>
            Number(numeral(model.eval(seq(variable.value).at(index).toCode(), true))),
          );
          break;
        }
      }
    }
  }

  release(): void {
    this.#solver.release();
  }
}

/** The text of a numeral in a model: "12", "-3", "7/2". */
function numeral(value: Term): string {
  return (value as unknown as IntNum<"main">).asString();
}

/** A rational's text ("7/2", "-3") as a number. */
export function fraction(text: string): number {
  const [numerator, denominator = "1"] = text.split("/");
  return Number(numerator) / Number(denominator);
}

/**
 * A model's string from its printed form, or, when a raw backslash makes that ambiguous (the
 * decoded length differs from Z3's length), code point by code point.
 */
export function readString(printed: string, length: number, codeAt: (index: number) => number): string {
  const decoded = decodeZ3String(printed);
  if (decoded !== undefined && [...decoded].length === length) return decoded;
  let text = "";
  for (let index = 0; index < length; index++) text += String.fromCodePoint(codeAt(index));
  return text;
}
