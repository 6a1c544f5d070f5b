import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Evaluator, type ProposedCall } from "../../src/evaluator/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { SolverClient } from "../../src/smt/index.js";
import { Conversation } from "../support/conversation.js";

const policy = loadPolicy(
  fileURLToPath(new URL("../../../test/evaluator/fixtures/patient-intake.yaml", import.meta.url)),
);
const evaluator = new Evaluator(policy);
// A generous limit: string repairs take seconds on a loaded machine, and a timeout would only fail closed.
const solver = new SolverClient({ timeoutMs: 20_000 });
after(() => solver.close());

const admit = (...ids: string[]) => ids.map((id) => ({ name: "admit", arguments: { patient_id: id } }));

/** p1 (and p2 if asked) with their lookups done: p1 active and allergic to penicillin, p2 pending and to latex. */
function lookedUp(ids: string[] = ["p1"]): Conversation {
  const conversation = new Conversation(admit(...ids));
  const facts: Record<string, { status: string; allergies: string; outstanding: number }> = {
    p1: { status: "active", allergies: "penicillin", outstanding: 120 },
    p2: { status: "pending", allergies: "latex", outstanding: 40 },
  };
  for (const id of ids) {
    const fact = facts[id] as { status: string; allergies: string; outstanding: number };
    conversation.call("validate_insurance", { patient_id: id }, { json: { status: fact.status } });
    conversation.call("check_allergies", { patient_id: id }, { json: { allergies: fact.allergies } });
    conversation.call("lookup_balance", { patient_id: id }, { json: { outstanding: fact.outstanding } });
  }
  return conversation;
}

const register = (id: string, insurance_status: string, notes: string) => ({
  name: "register_patient",
  arguments: { patient_id: id, insurance_status, notes },
});

describe("patient intake scenarios", () => {
  test("registering before the lookups is blocked and the insurance validation is advised", () => {
    const decision = evaluator.decide(
      new Conversation(admit("p1")).messages,
      register("p1", "active", "allergy: none"),
    );
    assert.equal(decision.verdict, "block");
    // Without the lookups the constraints fail too (`last` gives null), but a repair cannot help.
    assert.deepEqual(decision.violations.map((finding) => finding.rule).sort(), ["I1", "I2", "I5", "I6"]);
    // The first of the two lookups (I1, I2) after which only the arguments still block it.
    assert.deepEqual(decision.advice, {
      kind: "prerequisite",
      call: { name: "validate_insurance", arguments: { patient_id: "p1" } },
      unblocks: true,
      steps: 2,
    });
  });

  test("a registration repeating the lookups is allowed and fulfils I3", () => {
    const decision = evaluator.decide(lookedUp().messages, register("p1", "active", "allergy: penicillin"));
    assert.equal(decision.verdict, "allow");
    assert.deepEqual(decision.violations, []);
  });

  test("a made-up insurance status is blocked and repaired to the looked-up value", async () => {
    const messages = lookedUp().messages;
    const proposed = register("p1", "premium", "allergy: penicillin");
    const decision = evaluator.decide(messages, proposed);
    assert.equal(decision.verdict, "block");
    assert.deepEqual(
      decision.violations.map((finding) => [finding.rule, finding.kind, finding.binding]),
      [["I5", "constraint", 'patient(p="p1")']],
    );
    const repaired = await evaluator.decideWithRepair(messages, proposed, solver);
    assert.deepEqual(repaired.advice, {
      kind: "repair",
      call: register("p1", "active", "allergy: penicillin"),
    });
  });

  test("the solver writes notes no candidate value satisfies (string containment), changing only repairable arguments", async () => {
    const messages = lookedUp().messages;
    const proposed = register("p1", "premium", "walk-in");
    const decision = await evaluator.decideWithRepair(messages, proposed, solver);
    assert.equal(decision.verdict, "block");
    assert.deepEqual(decision.violations.map((finding) => finding.rule).sort(), ["I5", "I6"]);
    assert.equal(decision.advice?.kind, "repair");
    const call = decision.advice?.call as ProposedCall;
    assert.equal(call.arguments.patient_id, "p1");
    assert.equal(call.arguments.insurance_status, "active");
    assert.match(String(call.arguments.notes), /allergy: penicillin/);
    assert.equal(evaluator.decide(messages, call).verdict, "allow");
  });

  test("a payment above the looked-up balance is blocked and repaired to an amount within it", async () => {
    const messages = lookedUp().messages;
    const proposed = { name: "collect_payment", arguments: { patient_id: "p1", amount: 500 } };
    const decision = await evaluator.decideWithRepair(messages, proposed, solver);
    assert.equal(decision.verdict, "block");
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["I7"],
    );
    assert.equal(decision.advice?.kind, "repair");
    const amount = decision.advice?.call.arguments.amount as number;
    assert.ok(amount > 0 && amount <= 120, `repaired amount ${amount}`);
    assert.equal(
      evaluator.decide(messages, { name: "collect_payment", arguments: { patient_id: "p1", amount: 120 } })
        .verdict,
      "allow",
    );
  });

  test("bindings are independent: p2 must repeat its own lookups, not p1's", () => {
    const messages = lookedUp(["p1", "p2"]).messages;
    assert.equal(evaluator.decide(messages, register("p2", "pending", "allergy: latex")).verdict, "allow");
    const borrowed = evaluator.decide(messages, register("p2", "active", "allergy: penicillin"));
    assert.equal(borrowed.verdict, "block");
    assert.deepEqual(
      borrowed.violations.map((finding) => [finding.rule, finding.binding]),
      [
        ["I5", 'patient(p="p2")'],
        ["I6", 'patient(p="p2")'],
      ],
    );
    const payment = { name: "collect_payment", arguments: { patient_id: "p2", amount: 100 } };
    assert.equal(evaluator.decide(messages, payment).verdict, "block");
  });

  test("next: the looked-up status is the progressing value, the others unsafe; amounts within the balance", () => {
    const next = evaluator.next(lookedUp().messages);
    const entry = (tool: string, argument: string) =>
      next.arguments.find((candidate) => candidate.tool === tool && candidate.argument === argument);
    assert.deepEqual(entry("register_patient", "insurance_status"), {
      tool: "register_patient",
      argument: "insurance_status",
      unsafe: ["expired", "pending", "premium"],
      progressing: ["active"],
      // I5 decides the status alone: the one the validation returned.
      limits: { oneOf: ["active"] },
    });
    // The balance (120) is a candidate amount and within the bound; collect_payment fulfils no duty.
    const amounts = entry("collect_payment", "amount");
    assert.deepEqual(amounts?.unsafe, []);
    assert.deepEqual(amounts?.progressing, []);
    // I7 bounds the amount alone: above 0, at most the balance.
    assert.deepEqual(amounts?.limits, { exclusiveMinimum: 0, maximum: 120 });
  });

  test("a solver that cannot answer fails closed: the call stays blocked with the reason", async () => {
    // A repair the direct search leaves to Z3 (a product of chosen arguments), asked of a closed client.
    const transfers = new Evaluator(
      parsePolicy(
        [
          "policy: transfers",
          "manual: {T1: The fee squared covers the amount.}",
          "tools:",
          "  transfer:",
          "    parameters: {amount: number, fee: number}",
          "    repairable: [amount, fee]",
          "propositions:",
          "  transferred: {tool: transfer}",
          "rules: []",
          "constraints:",
          "  - {id: T1, on: transferred, require: 'a.fee * a.fee >= a.amount'}",
        ].join("\n"),
        "transfers.yaml",
      ),
    );
    const closed = new SolverClient();
    await closed.close();
    const decision = await transfers.decideWithRepair(
      [{ role: "user", content: "Send 500." }],
      { name: "transfer", arguments: { amount: 500, fee: 1 } },
      closed,
    );
    assert.equal(decision.verdict, "block");
    assert.match(decision.failClosed ?? "", /solver could not repair the call: .*closed/);
    assert.notEqual(decision.advice?.kind, "repair");
  });
});
