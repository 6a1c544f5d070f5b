/**
 * The native backend: the `z3` binary (Debian package `z3`) driven over stdin/stdout with
 * SMT-LIB 2 text, from the calling process. `solve.ts` runs here unchanged on a session whose
 * terms are SMT-LIB text (`smtlibTerms`); each request is one `(push 1)` … `(pop n)` scope of a
 * long-lived `z3 -in` process, and every check sets Z3's own `:timeout` first. Responses are
 * delimited by an `(echo "@@n")` after each batch of commands.
 *
 * The client treats this process as it treats the WASM solver process: a hard time limit kills
 * it (SIGKILL) and the next request starts a new one; a process that exits rejects the pending
 * request with `MNT_ERR_SMT_CRASHED`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants as fsConstants, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { Value } from "../expression/index.js";
import { type ArgumentVariable, decodeZ3String, escapeZ3String } from "./encode.js";
import type { WireRequest } from "./protocol.js";
import { repair, type Session, SolverTimeout, satisfiable } from "./solve.js";
import type { Terms, VariableSort } from "./terms.js";

/** The `z3` executable on `PATH` (or the given path, if executable), or undefined. */
export function findZ3Binary(path: string | undefined = undefined): string | undefined {
  const candidates =
    path !== undefined
      ? [path]
      : (process.env.PATH ?? "")
          .split(delimiter)
          .filter((directory) => directory !== "")
          .map((directory) => join(directory, "z3"));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

const sortNames: Record<VariableSort, string> = { bool: "Bool", int: "Int", real: "Real", string: "String" };

/** A string literal in SMT-LIB 2.6: `"` doubled, everything but printable ASCII escaped. */
function stringLiteral(text: string): string {
  return `"${escapeZ3String(text).replaceAll('"', '""')}"`;
}

/** A real literal from exact text ("12", "-3", "7/2", "-1/10"). */
function realLiteral(text: string): string {
  const negative = text.startsWith("-");
  const [numerator = "0", denominator] = (negative ? text.slice(1) : text).split("/");
  const decimal = (digits: string) => (digits.includes(".") ? digits : `${digits}.0`);
  const magnitude =
    denominator === undefined ? decimal(numerator) : `(/ ${decimal(numerator)} ${decimal(denominator)})`;
  return negative ? `(- ${magnitude})` : magnitude;
}

const application = (name: string, operands: string[]) => `(${name} ${operands.join(" ")})`;

/** Terms as SMT-LIB text; `declare` receives the declaration of every constant made. */
export function smtlibTerms(declare: (command: string) => void): Terms<string> {
  return {
    constant: (sort, name) => {
      declare(`(declare-const ${name} ${sortNames[sort]})`);
      return name;
    },
    bool: (value) => (value ? "true" : "false"),
    int: (value) => (value < 0 ? `(- ${-value})` : String(value)),
    real: realLiteral,
    string: stringLiteral,
    not: (operand) => `(not ${operand})`,
    and: (...operands) => (operands.length === 0 ? "true" : application("and", operands)),
    or: (...operands) => (operands.length === 0 ? "false" : application("or", operands)),
    implies: (left, right) => `(=> ${left} ${right})`,
    eq: (left, right) => `(= ${left} ${right})`,
    lt: (left, right) => `(< ${left} ${right})`,
    le: (left, right) => `(<= ${left} ${right})`,
    stringLt: (left, right) => `(str.< ${left} ${right})`,
    stringLe: (left, right) => `(str.<= ${left} ${right})`,
    add: (left, right) => `(+ ${left} ${right})`,
    sub: (left, right) => `(- ${left} ${right})`,
    mul: (left, right) => `(* ${left} ${right})`,
    div: (left, right) => `(/ ${left} ${right})`,
    neg: (operand) => `(- ${operand})`,
    toReal: (operand) => `(to_real ${operand})`,
    contains: (text, part) => `(str.contains ${text} ${part})`,
    prefixOf: (prefix, text) => `(str.prefixof ${prefix} ${text})`,
    suffixOf: (suffix, text) => `(str.suffixof ${suffix} ${text})`,
    concat: (left, right) => `(str.++ ${left} ${right})`,
    length: (text) => `(str.len ${text})`,
  };
}

/** The z3 process failed (exited, or answered with an error). */
export class NativeFailure extends Error {}

/** One running `z3 -in` process; `exchange` sends commands and reads the output they produce. */
export class NativeProcess {
  readonly #child: ChildProcess;
  readonly ready: Promise<void>;
  #initMs = 0;
  #requests = 0;
  #nextMarker = 1;
  #buffer = "";
  #lines: string[] = [];
  #waiting: { marker: string; resolve: (lines: string[]) => void; reject: (error: Error) => void }[] = [];
  #exited: Error | undefined;
  #onFailure: ((error: Error) => void)[] = [];

  constructor(binary: string, onExit: (code: number | null, signal: NodeJS.Signals | null) => void) {
    const started = performance.now();
    this.#child = spawn(binary, ["-in"], { stdio: ["pipe", "pipe", "ignore"] });
    const { stdin, stdout } = this.#child;
    stdin?.on("error", () => undefined);
    stdout?.setEncoding("utf8");
    stdout?.on("data", (chunk: string) => this.#receive(chunk));
    this.#child.on("error", (error) => this.#fail(new NativeFailure(`z3 could not run: ${error.message}`)));
    this.#child.on("exit", (code, signal) => {
      this.#fail(new NativeFailure(`the z3 process exited (code ${code}, signal ${signal})`));
      onExit(code, signal);
    });
    // The process must not keep the caller alive: only a pending request's timer does.
    this.#child.unref();
    for (const stream of [stdin, stdout]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
    this.ready = this.exchange("").then(() => {
      this.#initMs = performance.now() - started;
    });
    this.ready.catch(() => undefined);
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get exited(): boolean {
    return this.#exited !== undefined;
  }

  /** Writes the commands and resolves with the output lines they produced (errors included). */
  exchange(commands: string): Promise<string[]> {
    if (this.#exited !== undefined) return Promise.reject(this.#exited);
    const marker = `@@${this.#nextMarker++}`;
    return new Promise((resolve, reject) => {
      this.#waiting.push({ marker, resolve, reject });
      this.#child.stdin?.write(`${commands}\n(echo "${marker}")\n`);
    });
  }

  /** Writes commands whose output (none, unless an error) is read with the next exchange. */
  send(commands: string): void {
    if (this.#exited === undefined) this.#child.stdin?.write(`${commands}\n`);
  }

  /** A request answered: one more for the stats. */
  answered(): void {
    this.#requests++;
  }

  stats(): { pid: number; rss: number; heapUsed: number; requests: number; initMs: number } {
    const pid = this.#child.pid ?? 0;
    let rss = 0;
    try {
      // statm: size resident shared … in pages.
      const pages = Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]);
      rss = pages * 4096;
    } catch {
      // not Linux: unknown
    }
    return { pid, rss, heapUsed: 0, requests: this.#requests, initMs: this.#initMs };
  }

  kill(): void {
    this.#child.kill("SIGKILL");
  }

  /** Ends the process at once (it keeps no state worth a graceful exit). */
  async close(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    this.#fail(new NativeFailure("the z3 process was closed"));
    this.#child.kill("SIGKILL");
  }

  #receive(chunk: string): void {
    this.#buffer += chunk;
    let newline = this.#buffer.indexOf("\n");
    while (newline >= 0) {
      const line = this.#buffer.slice(0, newline).replace(/\r$/, "");
      this.#buffer = this.#buffer.slice(newline + 1);
      const waiting = this.#waiting[0];
      if (waiting !== undefined && line === waiting.marker) {
        this.#waiting.shift();
        waiting.resolve(this.#lines);
        this.#lines = [];
      } else {
        this.#lines.push(line);
      }
      newline = this.#buffer.indexOf("\n");
    }
  }

  #fail(error: Error): void {
    if (this.#exited !== undefined) return;
    this.#exited = error;
    for (const waiting of this.#waiting.splice(0)) waiting.reject(error);
    for (const listener of this.#onFailure.splice(0)) listener(error);
  }

  /** Resolves after `ms`, or rejects as soon as the process exits (for the tests' stand-in for a runaway check). */
  idle(ms: number): Promise<void> {
    if (this.#exited !== undefined) return Promise.reject(this.#exited);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      this.#onFailure.push((error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }
}

/** A parsed s-expression: a symbol or numeral, a string literal, or a list. */
type SExpression = string | { string: string } | SExpression[];

/** Parses Z3's output (one or more s-expressions). */
export function parseSExpressions(text: string): SExpression[] {
  const stack: SExpression[][] = [[]];
  let index = 0;
  while (index < text.length) {
    const character = text[index] as string;
    if (character === "(") {
      stack.push([]);
      index++;
    } else if (character === ")") {
      const list = stack.pop();
      const parent = stack[stack.length - 1];
      if (list === undefined || parent === undefined)
        throw new NativeFailure(`unbalanced z3 output: ${text}`);
      parent.push(list);
      index++;
    } else if (character === '"') {
      let value = "";
      index++;
      for (;;) {
        const next = text.indexOf('"', index);
        if (next < 0) throw new NativeFailure(`unterminated string in z3 output: ${text}`);
        value += text.slice(index, next);
        if (text[next + 1] === '"') {
          value += '"';
          index = next + 2;
        } else {
          index = next + 1;
          break;
        }
      }
      (stack[stack.length - 1] as SExpression[]).push({ string: value });
    } else if (/\s/.test(character)) {
      index++;
    } else {
      const match = /^[^\s()"]+/.exec(text.slice(index)) as RegExpExecArray;
      (stack[stack.length - 1] as SExpression[]).push(match[0]);
      index += match[0].length;
    }
  }
  if (stack.length !== 1) throw new NativeFailure(`unbalanced z3 output: ${text}`);
  return stack[0] as SExpression[];
}

/** A numeral of a model (`3`, `(- 3)`, `2.5`, `(/ 7.0 2.0)`, `(- (/ 7.0 2.0))`) as a number. */
function numberOf(value: SExpression): number {
  if (typeof value === "string") return Number(value);
  if (Array.isArray(value)) {
    const [operator, first, second] = value;
    if (operator === "-" && first !== undefined && second === undefined) return -numberOf(first);
    if (operator === "/" && first !== undefined && second !== undefined)
      return numberOf(first) / numberOf(second);
  }
  throw new NativeFailure(`not a numeral in a z3 model: ${JSON.stringify(value)}`);
}

/** A session: one request's `(push 1)` scope on the process; `close()` pops what it pushed. */
export class NativeSession implements Session<string> {
  readonly terms: Terms<string>;
  readonly #process: NativeProcess;
  #pending: string[] = ["(push 1)"];
  #depth = 1;
  #sent = false;

  constructor(process: NativeProcess) {
    this.#process = process;
    this.terms = smtlibTerms((command) => this.#pending.push(command));
  }

  add(formula: string): void {
    this.#pending.push(`(assert ${formula})`);
  }

  push(): void {
    this.#pending.push("(push 1)");
    this.#depth++;
  }

  pop(): void {
    this.#pending.push("(pop 1)");
    this.#depth--;
  }

  async check(timeoutMs: number): Promise<"sat" | "unsat"> {
    const lines = await this.#exchange(
      `(set-option :timeout ${Math.max(1, Math.round(timeoutMs))})\n(check-sat)`,
    );
    const answer = lines[lines.length - 1];
    if (answer === "sat" || answer === "unsat") return answer;
    if (answer === "unknown") throw new SolverTimeout(`z3 gave up (unknown) within ${timeoutMs} ms`);
    throw new NativeFailure(`unexpected answer from z3: ${lines.join(" ")}`);
  }

  async readModel(
    variables: readonly ArgumentVariable<string>[],
    into: Record<string, Value>,
  ): Promise<void> {
    if (variables.length === 0) return;
    const terms: string[] = [];
    for (const variable of variables) {
      terms.push(variable.present, variable.value);
      if (variable.sort === "string") terms.push(`(str.len ${variable.value})`);
    }
    const values = await this.#values(terms);
    let index = 0;
    for (const variable of variables) {
      const present = values[index++];
      const value = values[index++] as SExpression;
      const length = variable.sort === "string" ? numberOf(values[index++] as SExpression) : 0;
      if (present !== "true") {
        delete into[variable.name];
        continue;
      }
      switch (variable.sort) {
        case "bool":
          into[variable.name] = value === "true";
          break;
        case "int":
        case "real":
          into[variable.name] = numberOf(value);
          break;
        case "string": {
          const printed = typeof value === "object" && !Array.isArray(value) ? value.string : undefined;
          const decoded = printed === undefined ? undefined : decodeZ3String(printed);
          if (decoded !== undefined && [...decoded].length === length) {
            into[variable.name] = decoded;
            break;
          }
          // A raw backslash makes the printed form ambiguous: read the code points.
          const codes =
            length === 0
              ? []
              : await this.#values(
                  Array.from({ length }, (_, at) => `(str.to_code (str.at ${variable.value} ${at}))`),
                );
          into[variable.name] = String.fromCodePoint(...codes.map(numberOf));
          break;
        }
      }
    }
  }

  /** Pops this request's scopes (sent with the next exchange; no answer awaited). */
  close(): void {
    if (!this.#sent) {
      // Nothing reached z3 yet (the request stopped while encoding): nothing to undo.
      this.#pending = [];
      return;
    }
    if (this.#depth > 0) this.#pending.push(`(pop ${this.#depth})`);
    this.#depth = 0;
    if (this.#pending.length > 0) this.#process.send(this.#pending.join("\n"));
    this.#pending = [];
  }

  async #values(terms: string[]): Promise<SExpression[]> {
    const lines = await this.#exchange(`(get-value (${terms.join(" ")}))`);
    const [pairs] = parseSExpressions(lines.join("\n"));
    if (!Array.isArray(pairs) || pairs.length !== terms.length) {
      throw new NativeFailure(`unexpected model from z3: ${lines.join(" ")}`);
    }
    return pairs.map((pair) => (Array.isArray(pair) ? (pair[1] as SExpression) : ""));
  }

  async #exchange(command: string): Promise<string[]> {
    const commands = [...this.#pending, command].join("\n");
    this.#pending = [];
    this.#sent = true;
    const lines = await this.#process.exchange(commands);
    const error = lines.find((line) => line.startsWith("(error"));
    if (error !== undefined) throw new NativeFailure(`z3: ${error}`);
    return lines;
  }
}

/** Answers one request on the process (what the WASM solver process does in `worker.ts`). */
export async function answerNative(process: NativeProcess, request: WireRequest): Promise<unknown> {
  switch (request.kind) {
    case "repair":
    case "satisfiable": {
      const session = new NativeSession(process);
      try {
        return request.kind === "repair"
          ? await repair(session, request)
          : await satisfiable(session, request);
      } finally {
        session.close();
        process.answered();
      }
    }
    case "stats":
      return process.stats();
    case "block":
      // Stands in for a check that does not return: nothing is answered for `ms`.
      await process.idle(request.ms);
      return null;
  }
}
