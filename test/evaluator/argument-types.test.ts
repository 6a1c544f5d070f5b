import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator, verifyConversation } from "../../src/evaluator/index.js";
import { blockedText } from "../../src/shield/prompt.js";
import { Conversation } from "../support/conversation.js";
import { pharmacyPolicy, refillRequest } from "../support/pharmacy.js";

// A proposed call's arguments against the tool's declaration: a string for an integer, or an
// argument the tool does not have, is said as such (with the parameter), not only as the rule the
// value then breaks.
const policy = pharmacyPolicy;
const evaluator = new Evaluator(policy);
const refill = refillRequest;
const checked = new Conversation([refill], "Please refill my prescription.")
  .call(
    "lookup_patient",
    { name: "Ada Byron", date_of_birth: "1990-04-01" },
    { json: { found: true, patient_id: "P100" } },
  )
  .call("check_refill_count", { rx_id: "RX1003" }, { json: { refills: 2, schedule: "IV" } });

describe("arguments of the wrong type", () => {
  test("a string for an integer is named with its parameter, in the decision and the shield's text", () => {
    const decision = evaluator.decide(checked.messages, {
      name: "dispense",
      arguments: { rx_id: "RX1003", patient_id: "P100", days_supply: "30" },
    });
    assert.deepEqual(decision.argumentProblems, [
      'dispense.days_supply must be an integer, not the string "30"',
    ]);
    assert.match(
      blockedText(decision),
      /Arguments: dispense\.days_supply must be an integer, not the string "30"\./,
    );
  });

  test("an argument the tool does not declare is named too", () => {
    const decision = evaluator.decide(checked.messages, {
      name: "dispense",
      arguments: { rx_id: "RX1003", patient_id: "P100", days_supply: 30, days: 30 },
    });
    assert.deepEqual(decision.argumentProblems, [
      "dispense.days is not a parameter (rx_id, patient_id, days_supply)",
    ]);
  });

  test("well-typed arguments have no such note, and verify lists a call's problems", () => {
    const fine = evaluator.decide(checked.messages, {
      name: "dispense",
      arguments: { rx_id: "RX1003", patient_id: "P100", days_supply: 30 },
    });
    assert.equal(fine.argumentProblems, undefined);
    const made = checked.call(
      "dispense",
      { rx_id: "RX1003", patient_id: "P100", days_supply: "30" },
      { json: { dispensed: true } },
    );
    const verification = verifyConversation(policy, evaluator, made.messages);
    assert.deepEqual(verification.calls.at(-1)?.argumentProblems, [
      'dispense.days_supply must be an integer, not the string "30"',
    ]);
  });
});
