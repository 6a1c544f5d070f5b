import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { type FlightRecord, RecordStore } from "../../src/dashboard/index.js";

/** The records of the one run a directory holds, as the dashboard's record reader reads them, in order. */
export function runRecords(directory: string): FlightRecord[] {
  assert.equal(readdirSync(directory).length, 1, "one file per run");
  const store = new RecordStore(directory);
  store.refresh();
  assert.deepEqual(store.problems, []);
  return store
    .newestFirst()
    .sort((left, right) => left.line - right.line)
    .map((stored) => stored.record);
}

/** Each record's question in short: `[call, verdict, rules]` for a proposed call, `["end", allowed]` for the run's end. */
export function questions(records: readonly FlightRecord[]): unknown[][] {
  return records.map((record) => {
    const attempt = record.mentor?.attempts[0];
    const judged = attempt?.calls[0];
    return judged ? [judged.call.name, judged.verdict, judged.rules] : ["end", attempt?.done?.allowed];
  });
}
