import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { constantArguments, skeleton } from "../../../src/shield/token/call-syntax.js";

// SOPBench declares a login's identification as a string, an object or null (`anyOf`). The token
// shield wrote every argument without a `type` of its own as the constant `null`: each shielded
// login had `identification: null` and failed (bench/RESULTS.md, session 20).
const login = {
  name: "login_user",
  parameters: {
    type: "object",
    properties: {
      username: { type: "string" },
      identification: { anyOf: [{ type: "string" }, { type: "object" }, { type: "null" }] },
      note: { anyOf: [{ type: "null" }] },
    },
  },
};

describe("the call skeleton of a tool whose argument is typed by its alternatives", () => {
  it("writes the first alternative that is not null: the model writes the identification as a string", () => {
    const slots = skeleton(login, new Map()).filter((segment) => segment.kind !== "fixed");
    assert.deepEqual(
      slots.map((segment) => [segment.kind, "key" in segment ? segment.key : undefined]),
      [
        ["string", "username"],
        ["string", "identification"],
      ],
    );
  });

  it("keeps only an argument with no type at all as the constant null", () => {
    assert.deepEqual(constantArguments(login, skeleton(login, new Map())), { note: null });
  });
});
