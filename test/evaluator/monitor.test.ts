import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import {
  createMonitor,
  type Decision,
  Evaluator,
  type Monitor,
  type ProposedCall,
} from "../../src/evaluator/index.js";
import type { ChatMessage } from "../../src/openai/index.js";
import { loadPolicy, type Policy } from "../../src/policy/index.js";
import { type Outcome, Run, type TaskCall } from "../../src/run/index.js";
import { blockedText } from "../../src/shield/index.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// The embeddable monitor: stepped one entry at a time, it must agree with a monitor rebuilt from
// scratch — from the equivalent OpenAI messages (what the server does on every request) and from
// its own JSON — on the run and on the decision about every call, after every entry.

const opsPolicy = loadPolicy(
  fileURLToPath(new URL("../../../test/evaluator/fixtures/ops.yaml", import.meta.url)),
);
const travelPolicy = loadPolicy(travelPolicyFile);

interface Domain {
  policy: Policy;
  task: TaskCall[];
  /** Calls the random runs propose, each with the outcomes it may have when made. */
  pool: { call: ProposedCall; outcomes: Outcome[] }[];
}

const json = (value: Record<string, string | boolean>): Outcome => ({ kind: "json", value });
const label = (name: string): Outcome => ({ kind: "label", label: name });

const ops: Domain = {
  policy: opsPolicy,
  task: [],
  pool: [
    { call: { name: "run_tests", arguments: {} }, outcomes: [json({ ok: true })] },
    { call: { name: "deploy", arguments: {} }, outcomes: [json({ ok: true })] },
    { call: { name: "pay", arguments: { amount: 20 } }, outcomes: [json({ paid: true })] },
    { call: { name: "send_email", arguments: { to: "press" } }, outcomes: [json({ sent: true })] },
    { call: { name: "send_email", arguments: { to: "team" } }, outcomes: [json({ sent: true })] },
    { call: { name: "refund", arguments: { amount: 500 } }, outcomes: [json({ ok: true })] },
    { call: { name: "drop_table", arguments: { name: "users" } }, outcomes: [json({ ok: true })] },
    { call: { name: "restart", arguments: {} }, outcomes: [json({ ok: true })] },
  ],
};

const route = (origin: string, destination: string) => ({ origin, destination });
const travel: Domain = {
  policy: travelPolicy,
  task: [
    {
      name: "request_travel",
      arguments: { ...route("Toronto", "Chicago"), urgent: false, mode: "any", travel_class: "any" },
    },
  ],
  pool: [
    {
      call: { name: "check_distance", arguments: route("Toronto", "Chicago") },
      outcomes: [label("short"), label("long")],
    },
    { call: { name: "check_distance", arguments: route("Toronto", "Montreal") }, outcomes: [label("long")] },
    {
      call: { name: "check_seats", arguments: route("Toronto", "Chicago") },
      outcomes: [label("available"), label("full")],
    },
    {
      call: { name: "book_train", arguments: route("Toronto", "Chicago") },
      outcomes: [json({ status: "confirmed" })],
    },
    {
      call: { name: "book_train", arguments: route("Toronto", "Montreal") },
      outcomes: [json({ status: "confirmed" })],
    },
    {
      call: { name: "book_flight", arguments: { ...route("Toronto", "Chicago"), travel_class: "economy" } },
      outcomes: [json({ status: "confirmed" })],
    },
  ],
};

/** One entry of a random run: propose a call (made if allowed and `make`), approve one, resume. */
type Step =
  | { kind: "propose"; call: number; make: boolean; outcome: number }
  | { kind: "approve"; call: number }
  | { kind: "resume" };

function steps(domain: Domain): fc.Arbitrary<Step[]> {
  const call = fc.integer({ min: 0, max: domain.pool.length - 1 });
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant("propose" as const),
        call,
        make: fc.boolean(),
        outcome: fc.nat(3),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("approve" as const), call }) },
    { weight: 1, arbitrary: fc.constant({ kind: "resume" as const }) },
  );
  return fc.array(step, { minLength: 1, maxLength: 14 });
}

/** The parts of a decision the monitors must agree on. */
function summary(decision: Decision) {
  return {
    verdict: decision.verdict,
    action: decision.action,
    violations: decision.violations.map((finding) => `${finding.rule} ${finding.binding ?? ""}`),
    warnings: decision.warnings.map((finding) => finding.rule),
    recorded: decision.recorded.map((finding) => finding.rule),
    escalated: decision.escalated,
    overridden: decision.overridden,
    approved: decision.approved,
    stopped: decision.stopped,
    failClosed: decision.failClosed,
  };
}

function assertSameRun(left: Run, right: Run, where: string): void {
  assert.deepEqual(
    left.beliefs.map((belief) => [...belief]),
    right.beliefs.map((belief) => [...belief]),
    where,
  );
  assert.deepEqual(left.broken, right.broken, where);
  assert.equal(left.calls.length, right.calls.length, where);
  assert.deepEqual(
    left.bindings.map((binding) => binding.values),
    right.bindings.map((binding) => binding.values),
    where,
  );
}

function checkRandomRuns(domain: Domain, numRuns: number): void {
  const live = new Evaluator(domain.policy);
  // Another evaluator: the rebuilt monitors share no cache with the live one.
  const rebuilt = new Evaluator(domain.policy);
  fc.assert(
    fc.property(steps(domain), (run) => {
      const monitor: Monitor = live.monitor(domain.task);
      const messages: ChatMessage[] = [{ role: "user", content: "Go.", mentor: { task: domain.task } }];
      let id = 0;
      const exchange = (call: ProposedCall, result: string, outcome?: Outcome): void => {
        const callId = `call_${id++}`;
        messages.push({
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: callId,
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.arguments) },
            },
          ],
        });
        messages.push({
          role: "tool",
          tool_call_id: callId,
          content: result,
          ...(outcome?.kind === "label" ? { mentor: { label: outcome.label } } : {}),
        });
      };
      run.forEach((step, index) => {
        if (step.kind === "propose") {
          const entry = domain.pool[step.call] as Domain["pool"][number];
          const decision = monitor.check(entry.call);
          if (decision.verdict === "block") exchange(entry.call, blockedText(decision));
          else if (step.make) {
            const outcome = entry.outcomes[step.outcome % entry.outcomes.length] as Outcome;
            monitor.record(entry.call, outcome);
            exchange(entry.call, outcome.kind === "json" ? JSON.stringify(outcome.value) : "done", outcome);
          }
        } else if (step.kind === "approve") {
          const call = (domain.pool[step.call] as Domain["pool"][number]).call;
          monitor.approve(call);
          messages.push({ role: "user", content: "Approved.", mentor: { approve: call } });
        } else {
          monitor.resume();
          messages.push({ role: "user", content: "Resume.", mentor: { resume: true } });
        }
        const where = `after step ${index} of ${JSON.stringify(run)}`;
        const fromMessages = rebuilt.monitorOf(messages);
        const fromJSON = rebuilt.monitorFromJSON(JSON.parse(JSON.stringify(monitor.toJSON())));
        assertSameRun(monitor.run, fromMessages.run, where);
        assertSameRun(monitor.run, fromJSON.run, where);
        assertSameRun(
          monitor.run,
          Run.fromTrace(domain.policy, { task: domain.task, calls: [...monitor.run.calls] }),
          where,
        );
        assert.deepEqual(monitor.stopped, fromMessages.stopped, where);
        for (const { call } of domain.pool) {
          const expected = summary(monitor.decide(call, false));
          assert.deepEqual(summary(fromMessages.decide(call, false)), expected, `${where}: ${call.name}`);
          assert.deepEqual(summary(fromJSON.decide(call, false)), expected, `${where}: ${call.name}`);
        }
      });
    }),
    { numRuns, seed: 21 },
  );
}

describe("the embeddable monitor", () => {
  it("stepped entry by entry, it agrees with monitors rebuilt from the messages and from its JSON (ops: every severity)", () => {
    checkRandomRuns(ops, 60);
  });

  it("… and on a policy with bindings and labelled outcomes (travel)", () => {
    checkRandomRuns(travel, 25);
  });

  it("record steps the run by one call: the runs before are kept, not rebuilt", () => {
    const monitor = createMonitor(travelPolicy, { task: travel.task });
    const before = monitor.run;
    monitor.record({ name: "check_distance", arguments: route("Toronto", "Chicago") }, label("long"));
    assert.notEqual(monitor.run, before);
    assert.equal(before.calls.length, 0, "the earlier run is not changed");
    assert.equal(monitor.run.calls.length, 1);
  });

  it("checkChain judges parallel calls each after the ones before it; checkDone and next answer for the run", () => {
    const monitor = createMonitor(travelPolicy, { task: travel.task });
    assert.deepEqual(monitor.checkDone().allowed, false);
    assert.equal(monitor.checkDone().openDuties[0]?.rule, "P4");
    const check = { name: "check_distance", arguments: route("Toronto", "Chicago") };
    const train = { name: "book_train", arguments: route("Toronto", "Chicago") };
    // The booking in the same message as the check: the check's outcome is not known yet, so P1 still blocks it.
    const [first, second] = monitor.checkChain([check, train]);
    assert.equal(first?.action, "allow");
    assert.equal(second?.action, "block");
    // All or nothing: the decisions end at the first refused call.
    assert.deepEqual(
      monitor.checkChain([train, check]).map((decision) => decision.action),
      ["block"],
    );
    monitor.record(check, label("short"));
    assert.equal(monitor.check(train).action, "allow");
    assert.ok(
      monitor.next().tools.some((tool) => tool.name === "book_train" && tool.class === "progressing"),
    );
    monitor.record(train, json({ status: "confirmed" }));
    assert.equal(monitor.checkDone().allowed, true);
  });

  it("checkChain's decisions are those of a conversation that ends in the chain's message", () => {
    for (const domain of [ops, travel]) {
      const evaluator = new Evaluator(domain.policy);
      const start: ChatMessage[] = [{ role: "user", content: "Go.", mentor: { task: domain.task } }];
      for (const { call: first } of domain.pool) {
        for (const { call: second } of domain.pool) {
          const chain = evaluator.monitor(domain.task).checkChain([first, second]);
          if (chain.length < 2) continue;
          const message: ChatMessage = {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_0",
                type: "function",
                function: { name: first.name, arguments: JSON.stringify(first.arguments) },
              },
            ],
          };
          assert.deepEqual(
            summary(chain[1] as Decision),
            summary(evaluator.decide([...start, message], second)),
            `${first.name} then ${second.name}`,
          );
        }
      }
    }
  });

  it("fromJSON refuses another policy's JSON, and an evaluator of another policy", () => {
    const monitor = createMonitor(opsPolicy);
    assert.throws(
      () => createMonitor(travelPolicy, { state: monitor.toJSON() }),
      /for policy ops, not travel/,
    );
    assert.throws(
      () => createMonitor(travelPolicy, { evaluator: new Evaluator(opsPolicy) }),
      /options.evaluator is for policy ops, not travel/,
    );
    const broken = { ...monitor.toJSON(), log: [{ kind: "ran" }] } as never;
    assert.throws(
      () => createMonitor(opsPolicy, { state: broken }),
      /log\[0\] of the monitor's JSON has kind "ran"/,
    );
  });
});
