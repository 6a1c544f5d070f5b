/**
 * Expression costs: parsing, and evaluating a constraint for many candidate values (what the
 * evaluator does before it asks the solver anything). The baseline is the same constraint
 * written as a plain TypeScript function, measured in the same run.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/expression/run.js
 */
import {
  evaluateExpression,
  type HistoryFunctions,
  parseExpression,
  type Value,
} from "../../src/expression/index.js";

const text =
  "a.travel_class == 'economy' || task.request_travel.urgent == true && a.amount <= last('get_order').paid_amount && a.seat in values('check_seat', 'seat')";
const candidates = 100;
const rounds = 2_000;

const history: HistoryFunctions = {
  last: () => ({ paid_amount: 500 }),
  outcomes: () => [{ paid_amount: 500 }],
  held: () => true,
  count: () => 1,
  values: () => ["12A", "14C", "15F"],
};
const task = { request_travel: { urgent: false } };
const argumentSets: Value[] = Array.from({ length: candidates }, (_, index) => ({
  travel_class: index % 2 === 0 ? "economy" : "business",
  amount: index * 10,
  seat: ["12A", "3B", "14C"][index % 3] as string,
}));

function time(label: string, run: () => number): void {
  const start = process.hrtime.bigint();
  const result = run();
  const milliseconds = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(`${label}: ${(milliseconds / rounds).toFixed(4)} ms per round (checksum ${result})`);
}

console.log(`node dist/bench/expression/run.js — ${candidates} candidates × ${rounds} rounds`);
time("parse", () => {
  let characters = 0;
  for (let round = 0; round < rounds; round++) characters += parseExpression(text).length;
  return characters;
});
const expression = parseExpression(text);
time(`evaluate ${candidates} candidates`, () => {
  let holding = 0;
  for (let round = 0; round < rounds; round++) {
    for (const args of argumentSets) {
      if (evaluateExpression(expression, { arguments: args, task, history }) === true) holding++;
    }
  }
  return holding;
});
time(`baseline: hand-written function, ${candidates} candidates`, () => {
  let holding = 0;
  for (let round = 0; round < rounds; round++) {
    for (const args of argumentSets as { travel_class: string; amount: number; seat: string }[]) {
      const paid = (history.last("get_order") as { paid_amount: number }).paid_amount;
      const holds =
        args.travel_class === "economy" ||
        (task.request_travel.urgent === true &&
          args.amount <= paid &&
          history.values("check_seat", "seat").includes(args.seat));
      if (holds) holding++;
    }
  }
  return holding;
});
