/**
 * npm run bench:logic — automaton sizes, construction times and monitor step costs.
 *
 * For each formula: DFA states over every subset of its atoms; construction time (building
 * and colouring every reachable state, median of fresh builds); one monitor step on the
 * compiled DFA (a table read) and by on-the-fly progression (progression, DNF and past
 * evaluation at every event, no memo). Step costs are medians over repeated runs of many
 * events from a fixed pseudo-random letter sequence.
 */
import { performance } from "node:perf_hooks";
import {
  Automaton,
  declareTemplates,
  type Formula,
  formatFormula,
  parseFormula,
} from "../../src/logic/index.js";

const BUILD_REPEATS = 15;
const COMPILED_EVENTS = 2_000_000;
const PROGRESSION_EVENTS = 20_000;
const STEP_REPEATS = 7;
const TARGET_STEP_US = 2;
const TARGET_BUILD_MS = 50;

const a = parseFormula("a");
const b = parseFormula("b");
const t = declareTemplates;
const formulas: [string, Formula][] = [
  ["existence", t.existence(a)],
  ["existence n=3", t.existence(a, 3)],
  ["absence n=2", t.absence(a, 2)],
  ["exactly n=2", t.exactly(a, 2)],
  ["init", t.init(a)],
  ["response", t.response(a, b)],
  ["precedence", t.precedence(a, b)],
  ["succession", t.succession(a, b)],
  ["chain response", t.chainResponse(a, b)],
  ["chain precedence", t.chainPrecedence(a, b)],
  ["alternate response", t.alternateResponse(a, b)],
  ["not succession", t.notSuccession(a, b)],
  ["responded existence", t.respondedExistence(a, b)],
  ["co-existence", t.coExistence(a, b)],
  ["not co-existence", t.notCoExistence(a, b)],
  ["exclusive choice", t.exclusiveChoice(a, b)],
  ...[
    "G((flight | train) -> O checked) & G(short -> G !flight) & F(flight_ok | train_ok)",
    "G(refund -> O(verify & !Y deny)) & F(refund | escalate)",
    "G(push -> Y(!edit S test))",
    "G((book & X pay) -> Y(!cancel S check))",
    "(a U (b & X c)) R G(O d -> F e)",
    "H(a -> WY b) | G F c",
    "G(a -> X(b U (c & WX d))) & F(e S a)",
    "G(a -> F(b & F(c & F(d & F e))))",
    "!F(a & X F(a & X F(a & X F(a & X F a)))) & G(b -> O a)",
  ].map((text): [string, Formula] => [text, parseFormula(text)]),
];
// Outside the target set: five rules in one formula, explored over all 2^10 letters. Policies
// monitor each rule as its own automaton over the letters their tools can produce.
const STRESS = "G(a1 -> F b1) & G(a2 -> F b2) & G(a3 -> F b3) & G(a4 -> F b4) & G(a5 -> F b5)";
formulas.push([`stress: ${STRESS}`, parseFormula(STRESS)]);

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function randomLetters(count: number, letterCount: number): Int32Array {
  const letters = new Int32Array(count);
  let seed = 42;
  for (let index = 0; index < count; index++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) | 0;
    letters[index] = (seed >>> 8) % letterCount;
  }
  return letters;
}

interface Row {
  name: string;
  atoms: number;
  states: number;
  firstBuildMs: number;
  buildMs: number;
  compiledStepUs: number;
  progressionStepUs: number;
}

const rows: Row[] = [];
for (const [name, formula] of formulas) {
  const buildTimes: number[] = [];
  let automaton = new Automaton(formula);
  for (let repeat = 0; repeat < BUILD_REPEATS; repeat++) {
    const start = performance.now();
    automaton = new Automaton(formula);
    automaton.compile();
    buildTimes.push(performance.now() - start);
  }
  const compiled = automaton.compile();

  const letters = randomLetters(COMPILED_EVENTS, compiled.letters.length);
  const compiledTimes: number[] = [];
  let sink = 0;
  for (let repeat = 0; repeat < STEP_REPEATS; repeat++) {
    let state = compiled.initial;
    const start = performance.now();
    for (let index = 0; index < letters.length; index++)
      state = compiled.step(state, letters[index] as number);
    compiledTimes.push(((performance.now() - start) * 1000) / letters.length);
    sink += state;
  }

  const progressionTimes: number[] = [];
  for (let repeat = 0; repeat < STEP_REPEATS; repeat++) {
    let residual = automaton.residual(automaton.initial);
    let memory = 0;
    const start = performance.now();
    for (let index = 0; index < PROGRESSION_EVENTS; index++) {
      ({ residual, memory } = automaton.successor(
        residual,
        memory,
        compiled.letters[letters[index] as number] as number,
      ));
    }
    progressionTimes.push(((performance.now() - start) * 1000) / PROGRESSION_EVENTS);
    sink += residual.id;
  }
  if (sink === -1) console.log("unreachable");

  rows.push({
    name,
    atoms: automaton.atoms.length,
    states: compiled.stateCount,
    firstBuildMs: buildTimes[0] as number,
    buildMs: median(buildTimes),
    compiledStepUs: median(compiledTimes),
    progressionStepUs: median(progressionTimes),
  });
  if (name.length > 40) console.error(`  ${name}\n    = ${formatFormula(formula)}`);
}

const header = [
  "formula",
  "atoms",
  "states",
  "build ms (first)",
  "build ms (median)",
  "step µs compiled",
  "step µs progression",
];
const table = rows.map((row) => [
  row.name.length > 48 ? `${row.name.slice(0, 45)}...` : row.name,
  String(row.atoms),
  String(row.states),
  row.firstBuildMs.toFixed(2),
  row.buildMs.toFixed(2),
  row.compiledStepUs.toFixed(4),
  row.progressionStepUs.toFixed(2),
]);
const widths = header.map((title, column) =>
  Math.max(title.length, ...table.map((cells) => (cells[column] as string).length)),
);
const line = (cells: string[]): string =>
  `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join(" | ")} |`;

console.log(`mentor bench:logic — node ${process.version}, ${new Date().toISOString()}`);
console.log(
  `builds: median of ${BUILD_REPEATS} (first build includes creating the formula nodes); compiled step: median of ${STEP_REPEATS} runs × ${COMPILED_EVENTS.toLocaleString("en")} events; progression step: median of ${STEP_REPEATS} runs × ${PROGRESSION_EVENTS.toLocaleString("en")} events\n`,
);
console.log(line(header));
console.log(line(widths.map((width) => "-".repeat(width))));
for (const cells of table) console.log(line(cells));
const targetRows = rows.filter((row) => !row.name.startsWith("stress:"));
const worstStep = Math.max(...targetRows.map((row) => row.compiledStepUs));
const worstBuild = Math.max(...targetRows.map((row) => row.firstBuildMs));
console.log(
  `\nover the target set (all rows but the stress row): worst compiled step ${worstStep.toFixed(4)} µs (target ≤ ${TARGET_STEP_US} µs: ${worstStep <= TARGET_STEP_US ? "met" : "MISSED"}); ` +
    `worst construction ${worstBuild.toFixed(2)} ms (target ≤ ${TARGET_BUILD_MS} ms: ${worstBuild <= TARGET_BUILD_MS ? "met" : "MISSED"})`,
);
