import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../src/errors/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { traceFromMessages } from "../../src/run/index.js";

// A client's `mentor.task` is read against the task call's declaration: a field it does not
// declare (`rx` for `rx_id`) would ground a duty on nothing, and a value of the wrong type
// (`"true"` for a boolean) would never match the rules that read it.
const policy = loadPolicy(fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url)));

function withTask(args: Record<string, unknown>) {
  return [
    {
      role: "user",
      content: "Book me a trip.",
      mentor: { task: [{ name: "request_travel", arguments: args }] },
    },
  ];
}

function error(run: () => unknown): MentorError {
  try {
    run();
  } catch (caught) {
    assert.ok(caught instanceof MentorError);
    return caught;
  }
  assert.fail("no error");
}

describe("a client's task call against its declaration", () => {
  test("its declared fields are read as they are", () => {
    const trace = traceFromMessages(
      withTask({ origin: "Toronto", destination: "Chicago", urgent: false }),
      policy,
    );
    assert.deepEqual(trace.task, [
      { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } },
    ]);
  });

  test("an undeclared field is an error naming its path and the declared ones", () => {
    const failure = error(() =>
      traceFromMessages(withTask({ origin: "Toronto", destination: "Chicago", from: "Toronto" }), policy),
    );
    assert.equal(failure.code, "MNT_ERR_MESSAGES");
    assert.match(failure.message, /messages\[0\]\.mentor\.task\[0\]\.arguments\.from is not a parameter/);
    assert.match(failure.message, /origin, destination, urgent, mode, travel_class/);
  });

  test("a value of the wrong type is an error naming the field and the type", () => {
    const failure = error(() =>
      traceFromMessages(withTask({ origin: "Toronto", destination: "Chicago", urgent: "true" }), policy),
    );
    assert.match(failure.message, /arguments\.urgent must be a boolean, not the string "true"/);
    const outside = error(() =>
      traceFromMessages(withTask({ origin: "Toronto", destination: "Chicago", mode: "boat" }), policy),
    );
    assert.match(
      outside.message,
      /arguments\.mode must be one of "flight", "train", "any", not the string "boat"/,
    );
  });

  test("null stands for a value not known", () => {
    const trace = traceFromMessages(withTask({ origin: "Toronto", destination: null }), policy);
    assert.equal(trace.task[0]?.arguments.destination, null);
  });
});
