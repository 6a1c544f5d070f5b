import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ArgumentLimits } from "../../src/evaluator/index.js";
import { fittedLists } from "../../src/evaluator/list-repair.js";

// A change of items: `old` among the order's items (each once), `new` paired with it position by
// position (11 → 12 or 13; 21 → 22), per order once the order id is written (given).
const limits = new Map<string, ArgumentLimits>([
  [
    "old",
    {
      itemsOneOf: ["11", "21", "31"],
      itemsAtMost: [
        { value: "11", most: 1 },
        { value: "21", most: 1 },
        { value: "31", most: 1 },
      ],
      given: { argument: "order", cases: [{ value: "#2", limits: { itemsOneOf: ["31"] } }] },
    },
  ],
  [
    "new",
    {
      itemsOneOf: ["12", "13", "22"],
      itemsPaired: {
        argument: "old",
        groups: [
          ["11", "12", "13"],
          ["21", "22"],
        ],
      },
    },
  ],
]);

describe("fittedLists: a blocked call's lists kept to their limits (the repair a prompt shield advises)", () => {
  test("an item outside the pool or repeated is dropped, with its partner's item", () => {
    assert.deepEqual(
      fittedLists({ order: "#1", old: ["11", "99", "11"], new: ["12", "13", "13"] }, limits, ["old", "new"]),
      {
        old: ["11"],
        new: ["12"],
      },
    );
  });

  test("a paired item outside its partner's group becomes the first of the group the list may hold", () => {
    assert.deepEqual(
      fittedLists({ order: "#1", old: ["11", "21"], new: ["22", "22"] }, limits, ["old", "new"]),
      {
        new: ["12", "22"],
      },
    );
  });

  test("the case of the call's own binding where the limits have one", () => {
    assert.deepEqual(fittedLists({ order: "#2", old: ["11", "31"] }, limits, ["old"]), { old: ["31"] });
  });

  test("nothing to change, a list left empty, or an argument not repairable: no repair", () => {
    assert.equal(fittedLists({ order: "#1", old: ["11"], new: ["12"] }, limits, ["old", "new"]), undefined);
    assert.equal(fittedLists({ order: "#1", old: ["99"], new: ["12"] }, limits, ["old", "new"]), undefined);
    assert.equal(
      fittedLists({ order: "#1", old: ["11", "99"], new: ["12", "13"] }, limits, ["new"]),
      undefined,
    );
  });
});
