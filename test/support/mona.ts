import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Formula } from "../../src/logic/index.js";

const run = promisify(execFile);

/**
 * The standard first-order encoding of an LTLf formula (with past) as a MONA M2L-Str
 * program: the formula is evaluated at position 0 and every temporal operator becomes a
 * quantifier over positions. Atom `atoms[i]` becomes the second-order variable `P<i>`.
 */
export function toMonaProgram(formula: Formula, atoms: readonly string[]): string {
  let fresh = 0;
  const variable = (key: string): string => {
    const index = atoms.indexOf(key);
    if (index < 0) throw new Error(`atom ${key} is not among ${atoms.join(", ")}`);
    return `P${index}`;
  };
  const encode = (node: Formula, t: string): string => {
    const s = `v${fresh++}`;
    const u = `v${fresh++}`;
    // "s is the position right after t" and "s is the position right before t".
    const successor = `(${t} < ${s} & (all1 ${u}: ${t} < ${u} => ${s} <= ${u}))`;
    const predecessor = `(${s} < ${t} & (all1 ${u}: ${u} < ${t} => ${u} <= ${s}))`;
    switch (node.kind) {
      case "true":
        return "true";
      case "false":
        return "false";
      case "atom":
        return `(${t} in ${variable(node.key)})`;
      case "end":
        throw new Error("END has no MONA encoding");
      case "not":
        return `~${encode(node.operand, t)}`;
      case "and":
      case "or":
        return `(${node.operands.map((operand) => encode(operand, t)).join(node.kind === "and" ? " & " : " | ")})`;
      case "next":
        return `(ex1 ${s}: ${successor} & ${encode(node.operand, s)})`;
      case "weakNext":
        return `(all1 ${s}: ${successor} => ${encode(node.operand, s)})`;
      case "eventually":
        return `(ex1 ${s}: ${t} <= ${s} & ${encode(node.operand, s)})`;
      case "always":
        return `(all1 ${s}: ${t} <= ${s} => ${encode(node.operand, s)})`;
      case "until":
        return `(ex1 ${s}: ${t} <= ${s} & ${encode(node.right, s)} & (all1 ${u}: (${t} <= ${u} & ${u} < ${s}) => ${encode(node.left, u)}))`;
      case "release":
        return `(all1 ${s}: ${t} <= ${s} => (${encode(node.right, s)} | (ex1 ${u}: ${t} <= ${u} & ${u} < ${s} & ${encode(node.left, u)})))`;
      case "yesterday":
        return `(ex1 ${s}: ${predecessor} & ${encode(node.operand, s)})`;
      case "weakYesterday":
        return `(all1 ${s}: ${predecessor} => ${encode(node.operand, s)})`;
      case "once":
        return `(ex1 ${s}: ${s} <= ${t} & ${encode(node.operand, s)})`;
      case "historically":
        return `(all1 ${s}: ${s} <= ${t} => ${encode(node.operand, s)})`;
      case "since":
        return `(ex1 ${s}: ${s} <= ${t} & ${encode(node.right, s)} & (all1 ${u}: (${s} < ${u} & ${u} <= ${t}) => ${encode(node.left, u)}))`;
    }
  };
  const declarations = atoms.length > 0 ? `var2 ${atoms.map((_, index) => `P${index}`).join(", ")};\n` : "";
  return `m2l-str;\n${declarations}${encode(formula, "0")};\n`;
}

export type MonaStatus = "accepting" | "rejecting" | "dont-care";

/** A DFA as printed by `mona -w`. State `start` is the state after MONA's dummy first step. */
export class MonaAutomaton {
  constructor(
    readonly variables: readonly string[],
    readonly start: number,
    readonly status: readonly MonaStatus[],
    /** Per state: [guard, target] with guard one character (0, 1, X) per variable. */
    readonly transitions: readonly (readonly [string, number][])[],
  ) {}

  /** `letter[i]` is the value of `variables[i]`. */
  step(state: number, letter: readonly boolean[]): number {
    for (const [guard, target] of this.transitions[state] ?? []) {
      if ([...guard].every((char, index) => char === "X" || (char === "1") === letter[index])) return target;
    }
    throw new Error(`MONA automaton has no transition from state ${state}`);
  }

  /** States reachable from `state` (itself included) over any letter. */
  reachable(state: number): Set<number> {
    const seen = new Set([state]);
    const queue = [state];
    while (queue.length > 0) {
      for (const [, target] of this.transitions[queue.pop() as number] ?? []) {
        if (!seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
      }
    }
    return seen;
  }
}

export function parseMonaOutput(output: string): MonaAutomaton {
  const line = (prefix: string): string => {
    const found = output.split("\n").find((candidate) => candidate.startsWith(prefix));
    if (found === undefined) throw new Error(`MONA output lacks "${prefix}":\n${output}`);
    return found.slice(prefix.length).trim();
  };
  const numbers = (text: string): number[] => (text === "" ? [] : text.split(/\s+/).map(Number));
  const variables = line("DFA for formula with free variables:").split(/\s+/).filter(Boolean);
  const initial = Number(line("Initial state:"));
  const count = Number(/Automaton has (\d+) states/.exec(output)?.[1]);
  const status: MonaStatus[] = new Array(count).fill("dont-care");
  for (const state of numbers(line("Accepting states:"))) status[state] = "accepting";
  for (const state of numbers(line("Rejecting states:"))) status[state] = "rejecting";
  const transitions: [string, number][][] = Array.from({ length: count }, () => []);
  for (const match of output.matchAll(/^State (\d+): ([01X]*) -> state (\d+)$/gm)) {
    transitions[Number(match[1])]?.push([match[2] as string, Number(match[3])]);
  }
  const start = transitions[initial]?.[0]?.[1];
  if (start === undefined) throw new Error(`MONA automaton has no first step:\n${output}`);
  return new MonaAutomaton(variables, start, status, transitions);
}

/** Compiles a program with the `mona` binary (Debian package `mona`). */
export async function compileWithMona(
  program: string,
  directory: string,
  name: string,
): Promise<MonaAutomaton> {
  const file = join(directory, `${name}.mona`);
  await writeFile(file, program);
  const { stdout } = await run("mona", ["-q", "-n", "-w", file], { maxBuffer: 64 * 1024 * 1024 });
  return parseMonaOutput(stdout);
}

export async function withTemporaryDirectory<T>(body: (directory: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), "mentor-mona-"));
  try {
    return await body(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
