import type { Command } from "commander";
import { MentorError } from "../errors/index.js";
import { Automaton, formatFormula, parseFormula } from "../logic/index.js";
import { runBatch } from "./ltl-batch.js";

export function registerLtlCommands(program: Command): void {
  const ltl = program
    .command("ltl")
    .description("LTLf with past operators: evaluate formulas, inspect automata");

  ltl
    .command("eval")
    .description("Evaluate a formula on a trace, or many formula–trace pairs from standard input")
    .argument("[formula]", 'an LTLf formula, e.g. "G(a -> F b)"')
    .option(
      "-t, --trace <json>",
      'the trace as JSON: one array of true atoms per position, e.g. [["a"],[],["b"]]',
      "[]",
    )
    .option(
      "--batch",
      'read JSON lines {"formula": ..., "trace": ...} from standard input and write one line {"accepted", "colour"} or {"error"} per input',
    )
    .action(async (formulaText: string | undefined, options: { trace: string; batch?: boolean }) => {
      if (options.batch) {
        if (formulaText !== undefined)
          throw badInput("--batch reads formulas from standard input; give no formula argument");
        await runBatch(process.stdin, process.stdout);
        return;
      }
      if (formulaText === undefined)
        throw badInput("give a formula, or --batch to read JSON lines from standard input");
      const automaton = new Automaton(parseFormula(formulaText));
      const state = automaton.run(parseTrace(options.trace));
      const result = { accepted: automaton.isAccepting(state), colour: automaton.colour(state) };
      process.stdout.write(`${JSON.stringify(result)}\n`);
    });

  ltl
    .command("dfa")
    .description("Build the automaton of a formula and print its states (residual formulas) and transitions")
    .argument("<formula>", "an LTLf formula")
    .option("--json", "print the automaton as JSON")
    .action((formulaText: string, options: { json?: boolean }) => {
      const automaton = new Automaton(parseFormula(formulaText));
      const compiled = automaton.compile();
      const atoms = automaton.atoms.map((atom) => atom.key);
      const letterText = (mask: number): string =>
        `{${atoms.filter((_, bit) => (mask >>> bit) & 1).join(",")}}`;
      const states = Array.from({ length: compiled.stateCount }, (_, state) => ({
        state,
        residual: automaton.describeState(state),
        accepting: compiled.accepting[state] === 1,
        colour: compiled.colours[state],
        transitions: Object.fromEntries(
          compiled.letters.map((mask, index) => [letterText(mask), compiled.step(state, index)]),
        ),
      }));
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify({ formula: formatFormula(automaton.formula), atoms, states }, null, 2)}\n`,
        );
        return;
      }
      process.stdout.write(`formula: ${formatFormula(automaton.formula)}\natoms: ${atoms.join(" ")}\n`);
      process.stdout.write(`states: ${compiled.stateCount} (initial 0)\n`);
      for (const entry of states) {
        process.stdout.write(
          `\n${entry.state}${entry.accepting ? " (accepting)" : ""} ${entry.colour}: ${entry.residual}\n`,
        );
        for (const [letter, target] of Object.entries(entry.transitions))
          process.stdout.write(`  ${letter} -> ${target}\n`);
      }
    });
}

function parseTrace(text: string): string[][] {
  let trace: unknown;
  try {
    trace = JSON.parse(text);
  } catch (error) {
    throw badInput(`--trace is not valid JSON: ${(error as Error).message}`);
  }
  if (
    !Array.isArray(trace) ||
    !trace.every((letter) => Array.isArray(letter) && letter.every((atom) => typeof atom === "string"))
  ) {
    throw badInput('--trace must be an array of arrays of atom names, e.g. [["a"],[],["b"]]');
  }
  return trace;
}

function badInput(message: string): MentorError {
  return new MentorError("MNT_ERR_BAD_INPUT", message);
}
