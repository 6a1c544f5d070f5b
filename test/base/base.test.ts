import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { listItems, withItem } from "../../src/base/persistent-list.js";
import { seededIntegers, seededRandom } from "../../src/base/random.js";

describe("the shared basics", () => {
  it("the seeded generator repeats its sequence for a seed (tiny models, tests and benchmarks name seeds)", () => {
    const take = (next: () => number) => Array.from({ length: 4 }, () => next());
    assert.deepEqual(take(seededRandom(7)), take(seededRandom(7)));
    assert.notDeepEqual(take(seededRandom(7)), take(seededRandom(8)));
    // mulberry32's first value for seed 1, as the three copies it replaces computed it.
    assert.equal(seededRandom(1)(), 0.6270739405881613);
    const integers = seededIntegers(3);
    for (let step = 0; step < 100; step++) {
      const value = integers(5);
      assert.ok(Number.isInteger(value) && value >= 0 && value < 5);
    }
  });

  it("a persistent list shares its past: a kept list does not change when a later one grows", () => {
    const one = withItem(undefined, "a");
    const two = withItem(one, "b");
    const other = withItem(one, "c");
    assert.deepEqual(listItems(two), ["a", "b"]);
    assert.deepEqual(listItems(other), ["a", "c"]);
    assert.deepEqual(listItems(one), ["a"]);
    assert.equal(two.before, one);
    assert.deepEqual(listItems(undefined), []);
  });
});
