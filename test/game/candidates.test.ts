import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { StrategyTemplate } from "../../src/game/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { Run } from "../../src/run/index.js";

const fixture = (path: string) => loadPolicy(fileURLToPath(new URL(`../../../${path}`, import.meta.url)));

describe("candidate calls", () => {
  // A refund names a customer and an order: the instances over the pair are reached through both
  // bindings. Listed twice, a move stepped them twice when its distance was looked up by projected
  // state (test/evaluator/question-order.test.ts).
  test("each affects each of its instances once, in index order", () => {
    const tasks: Record<string, { name: string; arguments: Record<string, string> }[]> = {
      "test/run/fixtures/refunds-by-order.yaml": [
        { name: "request_refund", arguments: { customer_id: "c1", order_id: "o1" } },
        { name: "request_refund", arguments: { customer_id: "c2", order_id: "o2" } },
      ],
      "test/evaluator/fixtures/refunds.yaml": [{ name: "open_case", arguments: { customer: "c1" } }],
      "policies/travel/policy.yaml": [
        { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago" } },
      ],
      "policies/tau2-retail/policy.yaml": [
        { name: "request_cancel", arguments: { order_id: "#W0000001" } },
        { name: "request_return", arguments: { order_id: "#W0000002" } },
      ],
    };
    for (const [path, task] of Object.entries(tasks)) {
      const policy = fixture(path);
      const template = new StrategyTemplate(Run.start(policy, task));
      assert.ok(template.candidates.length > 0, path);
      for (const candidate of template.candidates) {
        const sorted = [...new Set(candidate.affected)].sort((left, right) => left - right);
        assert.deepEqual(
          candidate.affected,
          sorted,
          `${path}: ${candidate.tool} ${JSON.stringify(candidate.arguments)}`,
        );
        for (const masks of candidate.effects) assert.equal(masks.length, candidate.affected.length);
      }
      if (policy.name === "refunds_by_order") {
        const refunds = template.candidates.filter((candidate) => candidate.tool === "refund");
        // Per (customer, order) pair: R1 and R2 once each, and R3 (applies_to: requested) for the
        // pairs a request made, (c1, o1) and (c2, o2), not for (c1, o2) and (c2, o1).
        assert.deepEqual(
          refunds.map((candidate) => candidate.affected.length),
          [3, 2, 2, 3],
        );
      }
    }
  });
});
