import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seededIntegers } from "../../src/base/random.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { lintPolicy } from "../../src/game/index.js";
import { Automaton, holds, parseFormula } from "../../src/logic/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Run } from "../../src/run/index.js";
import { Conversation } from "../support/conversation.js";

// ltl-harness's refund rulebook re-expressed as a mentor policy: "next" and "first" must keep
// their textbook meaning over the whole run, not over the calls of the tools a rule mentions.
const tools = [
  "request_receipt",
  "look_up_order",
  "verify_receipt",
  "issue_refund",
  "write_audit_note",
  "escalate_to_human",
];
function refundPolicy(rules: string): string {
  return `
policy: refunds
manual:
  R1: The first action is to look up the order.
  R2: Every refund must be immediately followed by an audit note.
  R3: Every refund must be immediately followed by an escalation.
  R4: Verify the receipt before any refund.
tools:
${tools.map((tool) => `  ${tool}: {}`).join("\n")}
propositions:
${tools.map((tool) => `  ${tool}: {tool: ${tool}}`).join("\n")}
rules:
${rules}
`;
}
const asWritten = parsePolicy(
  refundPolicy(`
  - {id: R1, template: init, a: look_up_order}
  - {id: R2, template: chainResponse, a: issue_refund, b: write_audit_note}
  - {id: R4, template: precedence, a: verify_receipt, b: issue_refund}`),
  "refunds.yaml",
);
const trace = [
  "request_receipt",
  "look_up_order",
  "verify_receipt",
  "issue_refund",
  "verify_receipt",
  "write_audit_note",
];

const conversation = (names: readonly string[]) => {
  const run = new Conversation([]);
  for (const name of names) run.call(name, {});
  return run;
};

describe("rules read the whole run (textbook LTLf semantics)", () => {
  test("which automata may skip the calls that concern none of their atoms", () => {
    const ignores = (formula: string) => new Automaton(parseFormula(formula)).ignoresEmptyLetter();
    for (const formula of ["G(a -> O b)", "F a", "!b W a", "G(a -> WX G !a)", "G(a -> F b)", "G !a"])
      assert.equal(ignores(formula), true, formula);
    for (const formula of ["a", "G(a -> X b)", "G(b -> Y a)", "a W b", "X a", "G(a -> X !a)"])
      assert.equal(ignores(formula), false, formula);
  });

  test("init and chainResponse break on the refund trace as ltl-harness says", () => {
    const run = Run.fromTrace(asWritten, {
      task: [],
      calls: trace.map((name, index) => ({
        id: `c${index}`,
        name,
        arguments: {},
        outcome: { kind: "json", value: {} },
      })),
    });
    const satisfied = Object.fromEntries(
      run.instances.map((instance, index) => [instance.rule.id, run.satisfies(index)]),
    );
    assert.deepEqual(satisfied, { R1: false, R2: false, R4: true });
  });

  test("the shield refuses a first call other than the lookup, and anything but the audit note right after a refund", () => {
    const evaluator = new Evaluator(asWritten);
    const first = evaluator.decide(conversation([]).messages, { name: "request_receipt", arguments: {} });
    assert.deepEqual(
      first.violations.map((finding) => finding.rule),
      ["R1"],
    );
    const afterRefund = conversation(["look_up_order", "verify_receipt", "issue_refund"]).messages;
    const again = evaluator.decide(afterRefund, { name: "verify_receipt", arguments: {} });
    assert.equal(again.verdict, "block");
    assert.deepEqual(
      again.violations.map((finding) => finding.rule),
      ["R2"],
    );
    assert.equal(evaluator.decide(afterRefund, { name: "write_audit_note", arguments: {} }).verdict, "allow");
    const next = evaluator.next(afterRefund);
    const classes = Object.fromEntries(next.tools.map((tool) => [tool.name, tool.class]));
    assert.equal(classes.write_audit_note, "progressing");
    for (const tool of tools.filter((name) => name !== "write_audit_note"))
      assert.equal(classes[tool], "unsafe", tool);
  });

  test("two chainResponse rules on one trigger are a trap, found by lint", () => {
    const both = parsePolicy(
      refundPolicy(`
  - {id: R2, template: chainResponse, a: issue_refund, b: write_audit_note}
  - {id: R3, template: chainResponse, a: issue_refund, b: escalate_to_human}`),
      "refunds.yaml",
    );
    const findings = lintPolicy(both);
    const trap = findings.find((finding) => finding.kind === "trap");
    assert.ok(trap, JSON.stringify(findings));
    assert.equal(trap.severity, "error");
    assert.deepEqual(trap.example, ["issue_refund()"]);
    assert.deepEqual(trap.rules.sort(), ["R2", "R3"]);
  });

  test("differential: on random traces, each rule's verdict is the formula's on the full trace", () => {
    const formulas = [
      "G(issue_refund -> X write_audit_note)",
      "look_up_order",
      "G(issue_refund -> Y verify_receipt)",
      "verify_receipt W issue_refund",
      "G(issue_refund -> O verify_receipt)",
      "F escalate_to_human",
      "G(write_audit_note -> X !write_audit_note)",
      "!issue_refund U look_up_order",
    ];
    const policy = parsePolicy(
      refundPolicy(
        formulas.map((ltl, index) => `  - {id: F${index}, ltl: "${ltl}", sentence: "s"}`).join("\n"),
      ),
      "refunds.yaml",
    );
    const random = seededIntegers(7);
    for (let sample = 0; sample < 300; sample++) {
      const names = Array.from({ length: random(7) }, () => tools[random(tools.length)] as string);
      const run = Run.fromTrace(policy, {
        task: [],
        calls: names.map((name, index) => ({
          id: `c${index}`,
          name,
          arguments: {},
          outcome: { kind: "json", value: {} },
        })),
      });
      const letters = names.map((name) => new Set([name]));
      run.instances.forEach((instance, index) => {
        const expected = holds(parseFormula(formulas[Number(instance.rule.id.slice(1))] as string), letters);
        const got = run.satisfies(index);
        assert.equal(got, expected, `${instance.rule.id} on [${names.join(", ")}]`);
      });
    }
  });
});

describe("a broken rule is re-armed", () => {
  const policy = parsePolicy(
    refundPolicy(`
  - {id: R4, template: precedence, a: verify_receipt, b: issue_refund, mode: warn}
  - {id: R2, template: chainResponse, a: issue_refund, b: write_audit_note}`),
    "refunds.yaml",
  );
  const evaluator = new Evaluator(policy);

  test("a warn rule overridden once warns again on the second violation", () => {
    const first = evaluator.decide(conversation([]).messages, { name: "issue_refund", arguments: {} });
    assert.equal(first.verdict, "allow");
    assert.deepEqual(
      first.warnings.map((finding) => finding.rule),
      ["R4"],
    );
    const history = conversation(["issue_refund", "write_audit_note"]).messages;
    const second = evaluator.decide(history, { name: "issue_refund", arguments: {} });
    assert.deepEqual(
      second.warnings.map((finding) => finding.rule),
      ["R4"],
    );
    const run = evaluator.run(history);
    assert.deepEqual(
      run.broken.map((entry) => [run.instances[entry.instance]?.rule.id, entry.call]),
      [["R4", 0]],
    );
  });

  test("a block rule broken by a call made unshielded still blocks the next violation", () => {
    // The refund was not followed by the audit note (the client sent this trace)...
    const history = conversation(["issue_refund", "look_up_order", "issue_refund"]).messages;
    // ...and the second refund's note is due now: anything else is refused, the note allowed.
    const decision = evaluator.decide(history, { name: "look_up_order", arguments: {} });
    assert.equal(decision.verdict, "block");
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["R2"],
    );
    assert.equal(evaluator.decide(history, { name: "write_audit_note", arguments: {} }).verdict, "allow");
  });
});
