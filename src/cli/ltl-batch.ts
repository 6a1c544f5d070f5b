import { once } from "node:events";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { MentorError } from "../errors/index.js";
import { AutomatonCache, type Colour } from "../logic/index.js";

export type BatchResult = { accepted: boolean; colour: Colour } | { error: string };

/**
 * One line of `mentor ltl eval --batch`: `{"formula": "...", "trace": [["a"], [], ["b"]]}`.
 * Each trace element lists the atoms true at that position; atoms the formula does not
 * mention are ignored. Never throws: problems become `{"error": "..."}`.
 */
export function evaluateBatchLine(line: string, cache: AutomatonCache): BatchResult {
  try {
    let input: unknown;
    try {
      input = JSON.parse(line);
    } catch (error) {
      return { error: `invalid JSON: ${(error as Error).message}` };
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return { error: 'expected an object {"formula": string, "trace": string[][]}' };
    }
    const { formula, trace } = input as { formula?: unknown; trace?: unknown };
    if (typeof formula !== "string") return { error: '"formula" must be a string' };
    const traceProblem = checkTrace(trace);
    if (traceProblem) return { error: traceProblem };
    const automaton = cache.get(formula);
    // Atom keys carry no spaces: `booked(x, y)` in a trace means `booked(x,y)`.
    const letters = (trace as string[][]).map((letter) => letter.map((atom) => atom.replace(/\s+/g, "")));
    const state = automaton.run(letters);
    return { accepted: automaton.isAccepting(state), colour: automaton.colour(state) };
  } catch (error) {
    if (error instanceof MentorError) return { error: error.message };
    throw error;
  }
}

function checkTrace(trace: unknown): string | undefined {
  if (!Array.isArray(trace)) return '"trace" must be an array of arrays of atom names';
  for (const [position, letter] of trace.entries()) {
    if (!Array.isArray(letter) || !letter.every((item) => typeof item === "string")) {
      return `"trace"[${position}] must be an array of atom names (strings)`;
    }
  }
  return undefined;
}

/** Reads JSON lines from `input`, writes one JSON line per non-blank input line to `output`. */
export async function runBatch(input: Readable, output: Writable): Promise<void> {
  const cache = new AutomatonCache();
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    if (!output.write(`${JSON.stringify(evaluateBatchLine(line, cache))}\n`)) await once(output, "drain");
  }
}
