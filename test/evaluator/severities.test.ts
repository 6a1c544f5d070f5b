import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../src/errors/index.js";
import { type Action, Evaluator, type Monitor, type ProposedCall } from "../../src/evaluator/index.js";
import type { ChatMessage } from "../../src/openai/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { blockedText, stoppedText } from "../../src/shield/index.js";

const file = fileURLToPath(new URL("../../../test/evaluator/fixtures/ops.yaml", import.meta.url));
const text = readFileSync(file, "utf8");

/** The ops policy, with one substitution in its text. */
function ops(from = "", to = ""): Evaluator {
  const changed = text.replace(from, to);
  assert.ok(from === "" || changed !== text, `${from} is in ops.yaml`);
  return new Evaluator(parsePolicy(changed, file));
}

const call = (name: string, args: Record<string, string | number> = {}): ProposedCall => ({
  name,
  arguments: args,
});
const emailOut = call("send_email", { to: "press" });
const bigRefund = call("refund", { amount: 500 });
const payment = call("pay", { amount: 20 });
const drop = call("drop_table", { name: "users" });

/** The actions of checking each call in turn (made ones, marked `+`, are recorded as made when allowed). */
function actions(monitor: Monitor, calls: (ProposedCall | "+tests")[]): Action[] {
  return calls.map((entry) => {
    if (entry === "+tests") {
      const decision = monitor.check(call("run_tests"));
      monitor.record(call("run_tests"), { kind: "json", value: { ok: true } });
      return decision.action;
    }
    return monitor.check(entry).action;
  });
}

describe("severities", () => {
  it("block refuses every time; warn and record allow (the modes they replace)", () => {
    const monitor = ops().monitor();
    assert.deepEqual(actions(monitor, [call("deploy"), call("deploy"), call("deploy")]), [
      "block",
      "block",
      "block",
    ]);
    const restart = monitor.check(call("restart"));
    assert.equal(restart.action, "warn");
    assert.deepEqual(
      restart.warnings.map((finding) => finding.rule),
      ["S6"],
    );
    assert.deepEqual(
      restart.recorded.map((finding) => finding.rule),
      ["S7"],
    );
    // The same policy written with `mode:` decides the same.
    const moded = ops(
      '{id: S6, ltl: "G(restarted -> O read)", severity: warn}',
      '{id: S6, ltl: "G(restarted -> O read)", mode: warn}',
    );
    assert.equal(moded.monitor().check(call("restart")).action, "warn");
  });

  it("escalate, consecutive: `after` refusals in a row get retry, the next escalates; a made call starts the count again", () => {
    const monitor = ops().monitor();
    assert.deepEqual(actions(monitor, [emailOut, emailOut, "+tests", emailOut, emailOut, emailOut]), [
      "retry",
      "retry",
      "allow",
      "retry",
      "retry",
      "stop",
    ]);
    assert.equal(monitor.stopped?.rules[0], "S4");
  });

  it("escalate, cumulative: refusals count over the whole run", () => {
    const monitor = ops("counting: consecutive", "counting: cumulative").monitor();
    assert.deepEqual(actions(monitor, [emailOut, "+tests", emailOut, "+tests", emailOut]), [
      "retry",
      "allow",
      "retry",
      "allow",
      "stop",
    ]);
  });

  it("escalate, hybrid: `after` in a row or `total` in the run, whichever comes first", () => {
    const hybrid = "counting: hybrid, total: 3, to: ask";
    const inRun = ops("counting: consecutive", hybrid).monitor();
    assert.deepEqual(actions(inRun, [emailOut, "+tests", emailOut, "+tests", emailOut, "+tests", emailOut]), [
      "retry",
      "allow",
      "retry",
      "allow",
      "retry",
      "allow",
      "ask",
    ]);
    const inRow = ops("counting: consecutive", hybrid).monitor();
    const decisions = [emailOut, emailOut, emailOut, emailOut].map((call) => inRow.check(call));
    // The escalation to ask hands the rule to a person: its count starts again.
    assert.deepEqual(
      decisions.map((decision) => decision.action),
      ["retry", "retry", "ask", "retry"],
    );
    assert.deepEqual(decisions[2]?.escalated, ["S4"]);
  });

  it("override: refused once, the identical call proposed again goes through with a warning, unless a call was made in between", () => {
    const monitor = ops().monitor();
    const first = monitor.check(bigRefund);
    assert.equal(first.action, "block");
    assert.deepEqual(first.overridable, ["S5"]);
    assert.match(blockedText(first), /To override S5 deliberately, make the identical call again next\./);
    const second = monitor.check(bigRefund);
    assert.equal(second.verdict, "allow");
    assert.equal(second.action, "warn");
    assert.deepEqual(second.overridden, ["S5"]);
    assert.deepEqual(
      second.warnings.map((finding) => finding.rule),
      ["S5"],
    );
    // Another amount is not the identical call.
    const evaluator = ops();
    assert.deepEqual(actions(evaluator.monitor(), [bigRefund, call("refund", { amount: 501 })]), [
      "block",
      "block",
    ]);
    // A refusal of another call in between leaves the chance (as in AgentLTL: only a made call ends it).
    assert.deepEqual(actions(evaluator.monitor(), [bigRefund, call("deploy"), bigRefund]), [
      "block",
      "block",
      "warn",
    ]);
    // A made call in between ends the chance.
    assert.deepEqual(actions(evaluator.monitor(), [bigRefund, "+tests", bigRefund]), [
      "block",
      "allow",
      "block",
    ]);
    // A refund within the bound is not refused at all.
    assert.equal(evaluator.monitor().check(call("refund", { amount: 50 })).action, "allow");
  });

  it("stop: latched until resumed; done is not allowed while stopped", () => {
    const monitor = ops().monitor();
    const stopped = monitor.check(drop);
    assert.equal(stopped.action, "stop");
    assert.match(
      stoppedText(stopped),
      /^\[SHIELD\] Stopped the run at drop_table\(name="users"\)\. Rule S1: Never drop a table\./,
    );
    assert.deepEqual(monitor.stopped, { rules: ["S1"], call: drop });
    const later = monitor.check(call("run_tests"));
    assert.equal(later.verdict, "block");
    assert.equal(later.action, "stop");
    assert.equal(monitor.checkDone().allowed, false);
    monitor.resume();
    assert.equal(monitor.check(call("run_tests")).action, "allow");
    assert.equal(monitor.checkDone().allowed, true);
  });

  it("ask: held until a person approves the identical call; the approval is used up by the next made call", () => {
    const monitor = ops().monitor();
    assert.equal(monitor.check(payment).action, "ask");
    monitor.approve(call("pay", { amount: 21 }));
    assert.equal(monitor.check(payment).action, "ask", "another amount was approved");
    monitor.approve(payment);
    const approved = monitor.check(payment);
    assert.equal(approved.action, "allow");
    assert.deepEqual(approved.approved, ["S3"]);
    monitor.record(payment, { kind: "json", value: { paid: true } });
    assert.equal(monitor.check(payment).action, "ask");
  });

  it("several rules: the strongest severity decides (stop, block, ask, escalate, override)", () => {
    // A refund breaking an override rule and an escalate rule: the escalate rule's retry decides.
    const both = text
      .replace(
        "  refunded: {tool: refund}",
        '  refunded: {tool: refund}\n  refunded_out: {tool: refund, when: "a.amount > 400"}',
      )
      .replace(
        "rules:\n",
        'rules:\n  - {id: S9, ltl: "G !refunded_out", severity: escalate, escalate: {after: 1}}\n',
      )
      .replace("  S7: Restarts are noted.", "  S7: Restarts are noted.\n  S9: No refund above 400.");
    const monitor = new Evaluator(parsePolicy(both, file)).monitor();
    const first = monitor.check(bigRefund);
    assert.deepEqual(
      [first.action, first.violations.map((finding) => finding.rule).sort()],
      ["retry", ["S5", "S9"]],
    );
    // Insisting overrides S5, but S9 escalates: the run stops.
    assert.equal(monitor.check(bigRefund).action, "stop");
  });

  it("several rules: an approval does not lift a block", () => {
    const policy = text
      .replace("  paid: {tool: pay}", '  paid: {tool: pay}\n  big_pay: {tool: pay, when: "a.amount > 1000"}')
      .replace(
        "constraints:",
        'constraints:\n  - {id: S8, on: big_pay, require: "a.amount < 0", sentence: "No payment above 1000."}',
      );
    const monitor = new Evaluator(parsePolicy(policy, file)).monitor();
    const big = call("pay", { amount: 5000 });
    assert.equal(monitor.check(big).action, "block");
    monitor.approve(big);
    const decision = monitor.check(big);
    assert.equal(decision.action, "block");
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["S8"],
    );
  });

  it("what the token shield masks: every refusing severity's calls are unsafe, warn and record ones are not", () => {
    const classes = new Map(
      ops()
        .monitor()
        .next()
        .tools.map((tool) => [tool.name, tool.class]),
    );
    // stop (drop_table), ask (pay), block (deploy before tests): every call of the tool is refused.
    assert.equal(classes.get("drop_table"), "unsafe");
    assert.equal(classes.get("pay"), "unsafe");
    assert.equal(classes.get("deploy"), "unsafe");
    // warn (S6) and record (S7) refuse no restart.
    assert.notEqual(classes.get("restart"), "unsafe");
    // The same rules as warn mask nothing.
    const tolerant = ops(
      '{id: S1, ltl: "G !dropped", severity: stop}',
      '{id: S1, ltl: "G !dropped", severity: warn}',
    );
    assert.notEqual(
      new Map(
        tolerant
          .monitor()
          .next()
          .tools.map((tool) => [tool.name, tool.class]),
      ).get("drop_table"),
      "unsafe",
    );
  });

  it("the loader names the rule and field of a bad severity", () => {
    const cases: [string, string, RegExp][] = [
      ["severity: stop}", "severity: stop, mode: block}", /rule S1: give `severity` or `mode`, not both/],
      [
        ", severity: escalate, escalate: {after: 2, counting: consecutive}",
        ", severity: escalate",
        /rule S4: `severity: escalate` needs `escalate: \{after: N\}`/,
      ],
      [
        "severity: stop}",
        "severity: stop, escalate: {after: 1}}",
        /rule S1: `escalate` needs `severity: escalate`/,
      ],
      [
        "counting: consecutive}",
        "counting: consecutive, total: 3}",
        /rule S4: `escalate.total` is only for `counting: hybrid`/,
      ],
      ["severity: ask}", "severity: later}", /rules\[2\]\.severity|Invalid option/],
    ];
    for (const [from, to, expected] of cases) {
      assert.throws(
        () => ops(from, to),
        (error: unknown) => {
          assert.ok(error instanceof MentorError);
          const messages = [error.message, ...error.problems.map((problem) => problem.message)].join("\n");
          assert.match(messages, expected);
          assert.match(messages, /ops\.yaml:\d+:\d+/);
          return true;
        },
      );
    }
  });
});

describe("what the run remembers, read from the messages", () => {
  const evaluator = ops();
  let id = 0;
  /** An assistant call and its tool message (the shield's feedback when refused). */
  function exchange(proposed: ProposedCall, result: string): ChatMessage[] {
    id++;
    return [
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: `c${id}`,
            type: "function",
            function: { name: proposed.name, arguments: JSON.stringify(proposed.arguments) },
          },
        ],
      },
      { role: "tool", tool_call_id: `c${id}`, content: result },
    ];
  }
  const user: ChatMessage = { role: "user", content: "Tidy up." };

  it("refusals in the messages count for escalation, as a live monitor counts them", () => {
    const messages: ChatMessage[] = [user];
    const live = evaluator.monitor();
    for (let attempt = 0; attempt < 2; attempt++) {
      const decision = live.check(emailOut);
      messages.push(...exchange(emailOut, blockedText(decision)));
    }
    assert.equal(evaluator.decide(messages, emailOut).action, "stop");
    assert.equal(live.check(emailOut).action, "stop");
    // The refused calls are not made calls of the run.
    assert.equal(evaluator.run(messages).calls.length, 0);
  });

  it("a refused call the policy would not refuse there does not count", () => {
    const messages = [
      user,
      ...exchange(call("run_tests"), "[SHIELD] Blocked run_tests()."),
      ...exchange(emailOut, "[SHIELD] Blocked"),
    ];
    assert.deepEqual(evaluator.monitorOf(messages).toJSON().log, [{ kind: "refused", call: emailOut }]);
  });

  it("an override, an approval, a stop and a resume in the messages", () => {
    const refused = [user, ...exchange(bigRefund, blockedText(evaluator.monitor().check(bigRefund)))];
    assert.equal(evaluator.decide(refused, bigRefund).action, "warn");
    const asked: ChatMessage[] = [user, { role: "user", content: "Yes, pay.", mentor: { approve: payment } }];
    assert.equal(evaluator.decide(asked, payment).action, "allow");
    assert.equal(evaluator.decide([user], payment).action, "ask");
    const stopped: ChatMessage[] = [
      user,
      { role: "assistant", content: stoppedText(evaluator.monitor().check(drop)) },
    ];
    assert.equal(evaluator.decide(stopped, call("run_tests")).action, "stop");
    const resumed: ChatMessage[] = [
      ...stopped,
      { role: "user", content: "Go on.", mentor: { resume: true } },
    ];
    assert.equal(evaluator.decide(resumed, call("run_tests")).action, "allow");
  });

  it("an approval must name a tool of the policy, with arguments", () => {
    assert.throws(
      () =>
        evaluator.run([{ role: "user", content: "ok", mentor: { approve: { name: "rm", arguments: {} } } }]),
      /messages\[0\]\.mentor\.approve\.name must be a tool of the policy/,
    );
  });
});
