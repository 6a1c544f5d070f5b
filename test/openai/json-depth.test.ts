import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatJsonPath, maxJsonDepth, pathBeyondDepth } from "../../src/openai/index.js";

/** `depth` arrays nested in one another, parsed from text (building it as a value would recurse). */
function nestedArrays(depth: number): unknown {
  return JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);
}

describe("pathBeyondDepth", () => {
  test("a value at the limit passes; one level more is named by its path", () => {
    assert.equal(pathBeyondDepth(nestedArrays(maxJsonDepth)), undefined);
    assert.deepEqual(
      pathBeyondDepth(nestedArrays(maxJsonDepth + 1)),
      Array.from({ length: maxJsonDepth }, () => 0),
    );
    assert.equal(pathBeyondDepth("text"), undefined);
    assert.equal(pathBeyondDepth(null), undefined);
  });

  test("reports the first too-deep container in document order, through objects and arrays", () => {
    const value = { a: [1, { ok: true }], b: { c: [[["deep"]]] }, d: [[[["deeper"]]]] };
    assert.deepEqual(pathBeyondDepth(value, 4), ["b", "c", 0, 0]);
    assert.equal(pathBeyondDepth(value, 6), undefined);
  });

  test("walks any depth without overflowing the stack", () => {
    assert.equal(pathBeyondDepth(nestedArrays(200_000), 300_000), undefined);
    assert.equal(pathBeyondDepth(nestedArrays(200_000))?.length, maxJsonDepth);
  });
});

describe("formatJsonPath", () => {
  test("writes indexes in brackets and keys after dots; with maxLength it ends in …", () => {
    assert.equal(formatJsonPath(["messages", 1, "tool_calls", 0, "id"]), "messages[1].tool_calls[0].id");
    assert.equal(formatJsonPath([0, "mentor"]), "[0].mentor");
    assert.equal(
      formatJsonPath(["messages", 0, "mentor", "a", "a", "a"], { maxLength: 20 }),
      "messages[0].mentor.a…",
    );
  });
});
