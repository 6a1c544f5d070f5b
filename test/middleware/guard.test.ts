import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMonitor } from "../../src/evaluator/index.js";
import { ToolGuard } from "../../src/middleware/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

const travel = loadPolicy(travelPolicyFile);
const route = { origin: "Toronto", destination: "Chicago" };
const task = [{ name: "request_travel", arguments: { ...route, urgent: false } }];
const train = { name: "book_train", arguments: route };

function checked(): ToolGuard {
  const monitor = createMonitor(travel, { task });
  monitor.record({ name: "check_distance", arguments: route }, { kind: "label", label: "short" });
  return new ToolGuard(monitor);
}

describe("ToolGuard", () => {
  it("runs executions one at a time: the second of two parallel bookings is judged after the first was made", async () => {
    const guard = checked();
    let release: () => void = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = guard.run(train, async () => {
      await slow;
      return { status: "confirmed" };
    });
    const second = guard.run(train, () => ({ status: "confirmed" }));
    release();
    const [one, two] = await Promise.all([first, second]);
    assert.equal(one.refused, false);
    assert.equal(two.refused, true);
    assert.match(two.refused ? two.feedback : "", /Rule P6/);
  });

  it("a tool that throws is recorded as made with every outcome possible, and the error goes on", async () => {
    const guard = checked();
    await assert.rejects(
      guard.run(train, () => {
        throw new Error("timeout");
      }),
      /timeout/,
    );
    assert.deepEqual(guard.monitor.run.calls.at(-1)?.outcome, {
      kind: "unknown",
      reason: "book_train failed: timeout",
    });
    // The booking may have happened: another one is refused (P6 for the outcome where it was confirmed).
    const again = await guard.run(train, () => ({ status: "confirmed" }));
    assert.equal(again.refused, true);
  });

  it("a text tool's result is labelled by the policy's rules; an unreadable one stays unknown", async () => {
    const guard = new ToolGuard(createMonitor(travel, { task }));
    await guard.run({ name: "check_distance", arguments: route }, () => "It is 843 km.");
    await guard.run({ name: "check_distance", arguments: route }, () => "far");
    assert.deepEqual(
      guard.monitor.run.calls.map((call) => call.outcome),
      [
        { kind: "label", label: "long" },
        { kind: "unknown", reason: "no rule labels the output of check_distance" },
      ],
    );
  });
});
