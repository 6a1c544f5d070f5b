import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

// `mentor ground`: what the labeler makes of a conversation, without loading a model.
const mentor = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const travel = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "mentor-ground-"));

function ground(messages: unknown[]): { status: number | null; stdout: string; stderr: string } {
  const file = join(dir, `messages-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(messages));
  return spawnSync(process.execPath, [mentor, "ground", "--policy", travel, "--messages", file], {
    encoding: "utf8",
  });
}

const call = (id: string, name: string) => ({
  role: "assistant",
  content: null,
  tool_calls: [
    { id, type: "function", function: { name, arguments: '{"origin":"Toronto","destination":"Chicago"}' } },
  ],
});

describe("mentor ground", () => {
  test("prints the task, each label with its source and tool, and what it could not ground", () => {
    const result = ground([
      { role: "user", content: "Book me a train from Toronto to Chicago please." },
      call("c1", "check_distance"),
      { role: "tool", tool_call_id: "c1", content: "The distance is 840 km: a long trip." },
      call("c2", "check_seats"),
      { role: "tool", tool_call_id: "c2", content: "Hmm, the system says something odd." },
    ]);
    assert.equal(result.status, 0, result.stderr);
    const output = JSON.parse(result.stdout);
    assert.equal(output.labeler, "rules");
    assert.deepEqual(output.task, [
      {
        name: "request_travel",
        arguments: {
          origin: "Toronto",
          destination: "Chicago",
          urgent: false,
          mode: "train",
          travel_class: "any",
        },
      },
    ]);
    assert.deepEqual(
      output.grounded.map((note: { message: number; kind: string; source: string }) => [
        note.message,
        note.kind,
        note.source,
      ]),
      [
        [0, "task", "rule"],
        [2, "label", "rule"],
      ],
    );
    assert.equal(output.grounded[1].value, "long");
    assert.equal(output.grounded[1].tool, "check_distance");
    assert.equal(output.ungrounded.length, 1);
    assert.equal(output.ungrounded[0].message, 4);
    assert.equal(output.ungrounded[0].tool, "check_seats");
    assert.match(output.ungrounded[0].error, /no labeling rule of check_seats matches/);
  });

  test("a JSON tool's output that is not JSON is listed as not grounded", () => {
    const result = ground([
      { role: "user", content: "Book me a train from Toronto to Chicago please." },
      call("c1", "book_train"),
      { role: "tool", tool_call_id: "c1", content: "Booked! Have a nice trip." },
      call("c2", "book_train"),
      { role: "tool", tool_call_id: "c2", content: '{"status": "confirmed"}' },
    ]);
    assert.equal(result.status, 0, result.stderr);
    const output = JSON.parse(result.stdout);
    assert.deepEqual(output.ungrounded, [
      {
        message: 2,
        kind: "label",
        source: "rule",
        error: "the output of book_train is not JSON",
        tool: "book_train",
      },
    ]);
  });

  test("a client's grounding is shown as the client's", () => {
    const task = [
      { name: "request_travel", arguments: { origin: "Paris", destination: "Lyon", urgent: true } },
    ];
    const result = ground([{ role: "user", content: "as agreed", mentor: { task } }]);
    assert.equal(result.status, 0, result.stderr);
    const output = JSON.parse(result.stdout);
    assert.deepEqual(output.task, task);
    assert.equal(output.grounded[0].source, "client");
  });

  test("a client's task call with a field the policy does not declare is an error naming it", () => {
    const task = [{ name: "request_travel", arguments: { origin: "Paris", to: "Lyon" } }];
    const result = ground([{ role: "user", content: "as agreed", mentor: { task } }]);
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /MNT_ERR_MESSAGES: messages\[0\]\.mentor\.task\[0\]\.arguments\.to is not a parameter/,
    );
  });
});
