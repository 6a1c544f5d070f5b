import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { travelConversation } from "../../bench/cli/workload.js";
import { MentorError } from "../../src/errors/index.js";
import { type Decision, Evaluator, verifyConversation } from "../../src/evaluator/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy, type Policy } from "../../src/policy/index.js";
import { type Binding, Run, traceFromMessages } from "../../src/run/index.js";
import { conversationDomains, randomConversation } from "../support/random-calls.js";

// `verifyConversation` walks one monitor through the conversation. It must judge each call as
// deciding that call on its own prefix does (a new run per call: the calls before it, the notes
// up to it and the task calls of the messages before it), and report every rule as the run
// rebuilt from the whole trace does, less the breaks by calls made before the request of one of
// the instance's bindings.

/** Each call decided on its own prefix, and the rules read from the run of the whole trace. */
function reference(policy: Policy, messages: unknown[]): unknown {
  try {
    const trace = traceFromMessages(messages, policy);
    const evaluator = new Evaluator(policy, { runCache: { maxMessages: 0 } });
    const calls = trace.calls.map((call, index) => {
      const prefix = {
        task: trace.task.filter((_, at) => (trace.taskAt?.[at] ?? 0) <= index),
        calls: trace.calls.slice(0, index),
        notes: (trace.notes ?? []).filter((note) => note.position <= index),
      };
      const decision: Decision = evaluator.decide(prefix, { name: call.name, arguments: call.arguments });
      return {
        call: { name: call.name, arguments: call.arguments },
        verdict: decision.verdict,
        violations: decision.violations.map((finding) => finding.rule),
        warnings: decision.warnings.map((finding) => finding.rule),
        failClosed: decision.failClosed,
        advice: decision.advice,
      };
    });
    const run = Run.fromTrace(policy, trace);
    const requestedAt = (binding: Binding): number =>
      binding.taskCall ? (trace.taskAt?.[trace.task.indexOf(binding.taskCall)] ?? 0) : 0;
    const rules = run.instances.map((instance, index) => {
      const brokenBy = run.broken
        .filter((entry) => entry.instance === index)
        .filter((entry) => instance.bindings.every((binding) => requestedAt(binding) <= entry.call))
        .map((entry) => entry.call);
      return {
        rule: instance.rule.id,
        binding: instance.bindings.map((binding) => binding.values),
        satisfied:
          brokenBy.length === 0 &&
          run.beliefs.every((belief) => instance.rule.automaton.isAccepting(belief[index] as number)),
        brokenBy,
      };
    });
    return { calls, rules };
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    return { error: error.code, message: error.message };
  }
}

function verified(policy: Policy, messages: unknown[]): unknown {
  try {
    const verification = verifyConversation(policy, new Evaluator(policy), messages);
    return {
      calls: verification.calls.map((call) => ({
        ...call,
        failClosed: call.failClosed,
        advice: call.advice,
      })),
      rules: verification.rules.map((rule) => ({
        rule: rule.rule,
        binding: rule.binding,
        satisfied: rule.satisfied,
        brokenBy: rule.brokenBy ?? [],
      })),
    };
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    return { error: error.code, message: error.message };
  }
}

describe("verify judges each call as deciding it on its own prefix does", () => {
  for (const [name, domain] of Object.entries(conversationDomains)) {
    test(`${name}: 30 random conversations`, () => {
      for (let seed = 1; seed <= 30; seed++) {
        const messages = randomConversation(domain, seed, 8 + (seed % 20));
        assert.deepEqual(
          verified(domain.policy, messages),
          reference(domain.policy, messages),
          `seed ${seed}: ${JSON.stringify(messages)}`,
        );
      }
    });
  }

  test("a long travel conversation (bench:cli's, its outputs labelled as mentor verify does)", async () => {
    const policy = conversationDomains.travel?.policy as Policy;
    const { messages } = await new Labeler(policy).ground(travelConversation(60, 7));
    assert.deepEqual(verified(policy, messages), reference(policy, messages));
  });
});

test("verify steps the run once per call, not once per call before each call", async () => {
  const policy = loadPolicy(fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url)));
  const calls = 80;
  const { messages } = await new Labeler(policy).ground(travelConversation(calls));
  const made = Run.prototype.made;
  let steps = 0;
  Run.prototype.made = function (this: Run, ...args: Parameters<Run["made"]>) {
    steps++;
    return made.apply(this, args);
  };
  try {
    const verification = verifyConversation(policy, new Evaluator(policy), messages);
    assert.equal(verification.calls.length, calls);
  } finally {
    Run.prototype.made = made;
  }
  assert.equal(steps, calls);
});
