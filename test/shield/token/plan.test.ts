import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DecodePlan, ShieldSets } from "../../../src/shield/token/index.js";
import { planGeneration } from "../../../src/shield/token/index.js";

const syntax = {
  prefix: '<tool_call>\n{"name": "',
  paramsPrefix: '", "arguments": ',
  suffix: "}\n</tool_call>",
};
const tools = ["check_distance", "book_flight"].map((name) => ({
  name,
  parameters: { type: "object", properties: { origin: { type: "string" } } },
}));
const route = { origin: "Toronto" };

function plan(sets: ShieldSets, toolChoice?: "auto" | "required"): DecodePlan {
  const planned = planGeneration(
    { messages: [], shield: { mode: "token", sets }, ...(toolChoice ? { toolChoice } : {}) },
    tools,
    syntax,
  );
  assert.equal(typeof planned, "object", String(planned));
  return planned as DecodePlan;
}

describe("the plan for a turn that may not end", () => {
  it("lets the model write text and steers its end to the advised call", () => {
    const planned = plan({ doneAllowed: false, doneRedirect: { to: "check_distance", arguments: route } });
    assert.equal(planned.startInCall, false);
    assert.equal(planned.endAllowed, false);
    assert.equal(planned.endRedirect, "check_distance");
    assert.deepEqual(planned.redirectArguments?.get("check_distance")?.get("origin"), {
      allowed: ["Toronto"],
    });
    // Half of max_tokens (256 by default) for the text, the other half for the call.
    assert.equal(planned.freeTextBudget, 128);
  });

  it("starts in a call, as without intent-keeping, when the advised tool may not be named", () => {
    for (const sets of [
      { doneAllowed: false, unsafeTools: ["check_distance"], doneRedirect: { to: "check_distance" } },
      { doneAllowed: false, doneRedirect: { to: "undeclared" } },
      { doneAllowed: false },
    ]) {
      const planned = plan(sets);
      assert.equal(planned.startInCall, true, JSON.stringify(sets));
      assert.equal(planned.endRedirect, undefined);
    }
  });

  it("ignores the advice where the turn may end, and starts in a call where one is required", () => {
    assert.equal(plan({ doneRedirect: { to: "check_distance" } }).endRedirect, undefined);
    const required = plan({ doneAllowed: false, doneRedirect: { to: "check_distance" } }, "required");
    assert.equal(required.startInCall, true);
  });
});
