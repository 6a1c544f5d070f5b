import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { buildDashboard, conversations, RecordStore, runView } from "../../src/dashboard/index.js";
import { createMonitor, type RecordWriter } from "../../src/evaluator/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { questions } from "../support/monitor-records.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// The embedded monitor's flight records (`createMonitor(policy, {records})`): the same records the
// server writes, one file per run, read back by the dashboard's record reader and pages.
const travel = loadPolicy(travelPolicyFile);
const task = [
  { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } },
];
const route = { origin: "Toronto", destination: "Chicago" };
const directory = mkdtempSync(join(tmpdir(), "mentor-monitor-records-"));
after(() => rmSync(directory, { recursive: true, force: true }));

describe("an embedded monitor's flight records", () => {
  it("one file per run; the dashboard lists each question, chains them into one conversation and draws the run", async () => {
    const monitor = createMonitor(travel, { task, records: directory, runId: "trip-1" });
    assert.equal(monitor.check({ name: "book_train", arguments: route }).verdict, "block");
    const check = monitor.check({ name: "check_distance", arguments: route });
    monitor.record(check.call, { kind: "label", label: "long" });
    assert.equal(monitor.checkDone().allowed, false);
    const book = monitor.check({ name: "book_train", arguments: route });
    monitor.record(book.call, { kind: "json", value: { status: "confirmed" } });
    assert.equal(monitor.checkDone().allowed, true);
    // A second run in the same directory gets a file of its own.
    createMonitor(travel, { task, records: directory }).checkDone();

    const files = readdirSync(directory).sort();
    assert.equal(files.length, 2);
    assert.ok(files.includes("trip-1.jsonl"), files.join(", "));
    const store = new RecordStore(directory);
    assert.equal(store.refresh(), 6);
    assert.deepEqual(store.problems, []);
    const trip = store
      .newestFirst()
      .filter((stored) => stored.file.endsWith("trip-1.jsonl"))
      .sort((left, right) => left.line - right.line)
      .map((stored) => stored.record);
    assert.ok(trip.every((record) => record.mode === "monitor" && record.policy === "travel"));
    assert.deepEqual(questions(trip), [
      ["book_train", "block", ["P1"]],
      ["check_distance", "allow", []],
      ["end", false],
      ["book_train", "allow", []],
      ["end", true],
    ]);
    // The questions of the run are one conversation: each record's messages continue the one before.
    const places = conversations(trip);
    const last = trip.at(-1)?.id as string;
    assert.deepEqual(
      trip.map((record) => places.get(record.id)),
      [1, 2, 3, 4, 5].map((position) => ({
        position,
        count: 5,
        latest: last,
        requests: trip.map((record) => record.id),
      })),
    );
    // The run view rebuilds the run from the record's messages: the refusal is not a made call,
    // the check's label is read back, the booking is the record's proposed call.
    const view = runView(travel, trip[3] as never);
    assert.deepEqual(view.notes, []);
    assert.deepEqual(
      view.columns.map((column) => [column.kind, column.call?.name, column.outcome, column.verdict]),
      [
        ["made", "check_distance", "label: long", "allow"],
        ["proposed", "book_train", "pending", "allow"],
      ],
    );
    assert.deepEqual(view.task, task);

    const dashboard = await buildDashboard({ recorderDirectory: directory, policies: [travel] });
    try {
      const runs = (await dashboard.inject({ url: "/dashboard/api/runs" })).json() as {
        runs: { id: string; mode: string }[];
      };
      assert.ok(runs.runs.some((run) => run.id === last && run.mode === "monitor"));
      const page = await dashboard.inject({ url: `/dashboard/run/${encodeURIComponent(trip[0]?.id ?? "")}` });
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /P1/);
    } finally {
      await dashboard.close();
    }
  });

  it("a writer takes the records instead of a directory; a resumed monitor keeps writing the run", () => {
    const written: Record<string, unknown>[] = [];
    const writer: RecordWriter = {
      write(record) {
        written.push(record);
        return undefined;
      },
    };
    const first = createMonitor(travel, { task, records: writer, runId: "trip-2" });
    const check = first.check({ name: "check_distance", arguments: route });
    first.record(check.call, { kind: "label", label: "short" });
    const resumed = createMonitor(travel, { state: first.toJSON(), records: writer, runId: "trip-2" });
    resumed.check({ name: "book_train", arguments: route });
    assert.equal(written.length, 2);
    assert.deepEqual(
      written.map((record) => record.run),
      ["trip-2", "trip-2"],
    );
    assert.notEqual(written[0]?.id, written[1]?.id);
    // The resumed monitor's record carries the replayed run: the task and the labelled check.
    const messages = written[1]?.messages as { role: string; mentor?: unknown }[];
    assert.deepEqual(
      messages.map((message) => [message.role, message.mentor ?? null]),
      [
        ["user", { task }],
        ["assistant", null],
        ["tool", { label: "short" }],
      ],
    );
  });

  it("refuses a run id that cannot name a file", () => {
    assert.throws(
      () => createMonitor(travel, { task, records: directory, runId: "../escape" }),
      /MNT_ERR_BAD_INPUT|options\.runId "\.\.\/escape" must be/,
    );
  });
});
