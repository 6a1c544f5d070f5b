import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Advice, Evaluator, type ProposedCall } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { blockedText, doneRefusedText } from "../../src/shield/prompt.js";
import { Conversation } from "../support/conversation.js";
import { pharmacyPolicy, refillRequest } from "../support/pharmacy.js";

// A pharmacy-refill desk written from its manual (fixtures/pharmacy.yaml), and the advice a clerk
// would give on its key blocked calls: an observed count is not checked again, an advised call has
// its arguments, a decline is an alternative (not a prerequisite), a reported allergy is recorded.
const policy = pharmacyPolicy;
const evaluator = new Evaluator(policy);
const refill = refillRequest;
const sulfa = { name: "report_allergy", arguments: { allergy: "sulfa" } };
const rx = { rx_id: "RX1003" };
const dispense: ProposedCall = {
  name: "dispense",
  arguments: { rx_id: "RX1003", patient_id: "P100", days_supply: 30 },
};

/** The patient looked up (P100), then the prescription's count checked with `count`. */
function checked(
  count: { refills: number; schedule: string },
  task: { name: string; arguments: Record<string, Value> }[] = [refill],
): Conversation {
  return new Conversation(task, "Please refill my prescription.")
    .call(
      "lookup_patient",
      { name: "Ada Byron", date_of_birth: "1990-04-01" },
      { json: { found: true, patient_id: "P100" } },
    )
    .call("check_refill_count", rx, { json: count });
}

function adviceFor(conversation: Conversation, call: ProposedCall): Advice | undefined {
  const decision = evaluator.decide(conversation.messages, call);
  assert.equal(decision.verdict, "block");
  return decision.advice;
}

const call = (name: string, args: Record<string, Value>): ProposedCall => ({ name, arguments: args });

describe("pharmacy refill advice", () => {
  test("no refills left: a dispense is not advised to check the count again, but to request a renewal", () => {
    const advice = adviceFor(checked({ refills: 0, schedule: "IV" }), dispense);
    assert.deepEqual(advice, {
      kind: "alternative",
      call: call("request_renewal", { rx_id: "RX1003", patient_id: "P100" }),
      reason: "dispense is the way the request asked for, and no call makes it allowed now (M3)",
    });
  });

  test("a renewal while refills remain is not advised to check the count again", () => {
    const advice = adviceFor(
      checked({ refills: 2, schedule: "IV" }),
      call("request_renewal", { rx_id: "RX1003", patient_id: "P100" }),
    );
    assert.notEqual(advice?.call.name, "check_refill_count");
    assert.notEqual(advice?.kind, "prerequisite");
  });

  test("a false decline reason is not advised to check the count again", () => {
    const advice = adviceFor(
      checked({ refills: 0, schedule: "IV" }),
      call("decline_refill", { rx_id: "RX1003", reason: "controlled", message: "Sorry." }),
    );
    assert.notEqual(advice?.call.name, "check_refill_count");
    assert.equal(advice?.unblocks, undefined);
  });

  test("the lookup advised before anything else has the name and date of birth of the request", () => {
    const start = new Conversation([refill], "Please refill my prescription.");
    const advice = adviceFor(start, call("check_refill_count", rx));
    assert.deepEqual(advice, {
      kind: "prerequisite",
      call: call("lookup_patient", { name: "Ada Byron", date_of_birth: "1990-04-01" }),
      unblocks: true,
    });
  });

  test("a schedule II dispense: the decline is an alternative with its true reason, and names the message the user must give", () => {
    const conversation = checked({ refills: 2, schedule: "II" });
    const decision = evaluator.decide(conversation.messages, dispense);
    assert.deepEqual(decision.advice, {
      kind: "alternative",
      call: call("decline_refill", { rx_id: "RX1003", reason: "controlled" }),
      missing: ["message"],
      reason: "dispense is the way the request asked for, and no call makes it allowed now (M5)",
    });
    assert.match(
      blockedText(decision),
      /instead: decline_refill\(rx_id="RX1003", reason="controlled"\) \(ask the user for message: nothing known gives it\)$/,
    );
  });

  test("a reported allergy not yet recorded: the dispense is advised to record it for the patient looked up", () => {
    const advice = adviceFor(checked({ refills: 2, schedule: "IV" }, [refill, sulfa]), dispense);
    assert.deepEqual(advice, {
      kind: "prerequisite",
      call: call("record_allergy", { allergy: "sulfa", patient_id: "P100" }),
      unblocks: true,
    });
  });

  test("90 days are repaired to the nearest allowed supply, 30 (the bound), not to a number seen earlier", () => {
    const ninety = { ...refill, arguments: { ...refill.arguments, days_supply: 90 } };
    const over = { ...dispense, arguments: { ...dispense.arguments, days_supply: 90 } };
    const repaired = { kind: "repair", call: dispense };
    assert.deepEqual(adviceFor(checked({ refills: 2, schedule: "IV" }, [ninety]), over), repaired);
    const weekBefore = checked({ refills: 2, schedule: "IV" }, [ninety]).call(
      "dispense",
      { ...dispense.arguments, days_supply: 7 },
      { json: { dispensed: true } },
    );
    assert.deepEqual(adviceFor(weekBefore, over), repaired);
  });

  test("no advice is the blocked call itself", () => {
    const conversations = [
      checked({ refills: 0, schedule: "IV" }),
      checked({ refills: 2, schedule: "II" }),
      checked({ refills: 2, schedule: "IV" }, [refill, sulfa]),
    ];
    for (const conversation of conversations) {
      for (const blocked of [dispense, call("dispense", rx), call("request_renewal", rx)]) {
        const decision = evaluator.decide(conversation.messages, blocked);
        if (decision.verdict === "allow" || !decision.advice || decision.advice.kind === "repair") continue;
        const same =
          decision.advice.call.name === blocked.name &&
          Object.entries(decision.advice.call.arguments).every(
            ([name, value]) => blocked.arguments[name] === undefined || blocked.arguments[name] === value,
          );
        assert.equal(same, false, JSON.stringify({ blocked, advice: decision.advice }));
      }
    }
  });
});

describe("progress toward what was asked: a refill request asks for the dispense", () => {
  test("a renewal while refills remain is advised the dispense that was asked for, not the shorter decline", () => {
    const advice = adviceFor(
      checked({ refills: 2, schedule: "IV" }),
      call("request_renewal", { rx_id: "RX1003", patient_id: "P100" }),
    );
    assert.deepEqual(advice, { kind: "alternative", call: dispense });
  });

  test("the duty's next call leads to the dispense while it is possible: lookup, check, dispense", () => {
    const fulfil = (conversation: Conversation) =>
      evaluator.next(conversation.messages).openDuties.map((duty) => duty.fulfil);
    const start = new Conversation([refill], "Please refill my prescription.");
    assert.deepEqual(fulfil(start), [
      call("lookup_patient", { name: "Ada Byron", date_of_birth: "1990-04-01" }),
    ]);
    const lookedUp = new Conversation([refill], "Please refill my prescription.").call(
      "lookup_patient",
      { name: "Ada Byron", date_of_birth: "1990-04-01" },
      { json: { found: true, patient_id: "P100" } },
    );
    assert.deepEqual(fulfil(lookedUp), [call("check_refill_count", rx)]);
    assert.deepEqual(fulfil(checked({ refills: 2, schedule: "IV" })), [dispense]);
  });
});

describe("an open duty's next call (Duty.fulfil) has its arguments, as advice does", () => {
  test("no refills left: the renewal names the patient the lookup returned", () => {
    const [duty] = evaluator.next(checked({ refills: 0, schedule: "IV" }).messages).openDuties;
    assert.deepEqual(duty?.fulfil, call("request_renewal", { rx_id: "RX1003", patient_id: "P100" }));
    assert.equal(duty?.missing, undefined);
  });

  test("a schedule II drug: the decline has its true reason and names the message nothing gives", () => {
    const duties = evaluator.next(checked({ refills: 2, schedule: "II" }).messages).openDuties;
    assert.deepEqual(duties[0]?.fulfil, call("decline_refill", { rx_id: "RX1003", reason: "controlled" }));
    assert.deepEqual(duties[0]?.missing, ["message"]);
    assert.match(
      doneRefusedText(duties),
      /Next: decline_refill\(rx_id="RX1003", reason="controlled"\) \(ask the user for message: nothing known gives it\)$/,
    );
  });
});

describe("advice kinds", () => {
  // A wire desk: a transfer over the limit cannot be repaired (the amount is not repairable) and
  // nothing unblocks it; the transfer of the same account without the amount is no advice.
  const wires = new Evaluator(
    parsePolicy(
      `
policy: wires
manual:
  W1: Every request ends with a transfer.
  W2: Transfers are at most 1000.
tools:
  transfer: {parameters: {account: string, amount: number}}
task:
  request_transfer: {parameters: {account: string}}
entities:
  account: {from: {request_transfer: {x: account}}}
propositions:
  sent(account): {tool: transfer, when: "a.account == x"}
rules:
  - {id: W1, ltl: "F sent(account)", applies_to: requested}
constraints:
  - {id: W2, on: sent(account), require: "a.amount <= 1000"}
`,
      "wires.yaml",
    ),
  );

  test("nothing unblocks a transfer over the limit: no advice, rather than the transfer without its amount", () => {
    const request = new Conversation([{ name: "request_transfer", arguments: { account: "A1" } }]);
    const decision = wires.decide(request.messages, call("transfer", { account: "A1", amount: 5000 }));
    assert.equal(decision.verdict, "block");
    assert.equal(decision.advice, undefined);
  });
});
