import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seededRandom } from "../../src/base/random.js";
import { Evaluator, verifyConversation } from "../../src/evaluator/index.js";
import { Labeler } from "../../src/labeler/index.js";
import type { ChatMessage } from "../../src/openai/index.js";
import type { Policy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";
import { pharmacyPolicy, refillRequest } from "../support/pharmacy.js";
import {
  conversationDomains,
  type Domain,
  type Message,
  type Pick,
  randomCall,
} from "../support/random-calls.js";

// `mentor verify` judges each call on the conversation as it stood when the call was made: a
// request in a later user message counts from that message on, not from the start. The
// reference is what `mentor check --call` answers on the messages before the call (the same
// library calls: the labeler's rules ground the messages, `Evaluator.monitorOf(messages).decide`).

/** The verdict, violations and warnings `mentor check --call` gives the call on `prefix`. */
async function checked(evaluator: Evaluator, prefix: Message[], call: { name: string; arguments: object }) {
  const { messages } = await new Labeler(evaluator.policy).ground(prefix as unknown as ChatMessage[]);
  const decision = evaluator.monitorOf(messages).decide(call as never);
  return {
    verdict: decision.verdict,
    violations: decision.violations.map((finding) => finding.rule),
    warnings: decision.warnings.map((finding) => finding.rule),
  };
}

async function verified(policy: Policy, conversation: Message[]) {
  const { messages } = await new Labeler(policy).ground(conversation as unknown as ChatMessage[]);
  return verifyConversation(policy, new Evaluator(policy), messages).calls.map((call) => ({
    verdict: call.verdict,
    violations: call.violations,
    warnings: call.warnings,
  }));
}

/**
 * A conversation of one-call turns, each answered at once (a result or the shield's refusal),
 * interleaved with user messages that add task calls, and plain user text.
 */
function interleaved(domain: Domain, seed: number, turns: number): { messages: Message[]; callAt: number[] } {
  const next = seededRandom(seed);
  const pick: Pick = (values) => values[Math.floor(next() * values.length)] as (typeof values)[number];
  const messages: Message[] = [
    next() < 0.5
      ? { role: "user", content: "Please help.", mentor: { task: domain.task(pick) } }
      : { role: "user", content: "Hello." },
  ];
  const callAt: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const roll = next();
    if (roll < 0.25) {
      messages.push({ role: "user", content: "Also this.", mentor: { task: domain.task(pick) } });
      continue;
    }
    if (roll < 0.3) {
      messages.push({ role: "user", content: "Thanks." });
      continue;
    }
    const call = randomCall(domain, pick);
    const id = `c${seed}_${turn}`;
    callAt.push(messages.length);
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [
        { id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } },
      ],
    });
    const tool = domain.policy.tools.get(call.name);
    const answer: Message =
      next() < 0.1
        ? { role: "tool", tool_call_id: id, content: `[SHIELD] Blocked ${call.name}(). Rule X: no.` }
        : tool?.output === "text"
          ? {
              role: "tool",
              tool_call_id: id,
              content: "text",
              mentor: { label: pick(Object.keys(tool.labels)) },
            }
          : { role: "tool", tool_call_id: id, content: JSON.stringify(pick(domain.results)) };
    messages.push(answer);
  }
  return { messages, callAt };
}

const pharmacy: Domain = {
  policy: pharmacyPolicy,
  task: (pick) =>
    pick([
      [{ ...refillRequest, arguments: { ...refillRequest.arguments, rx_id: pick(["RX1003", "RX2"]) } }],
      [{ name: "report_allergy", arguments: { allergy: pick(["sulfa", "penicillin"]) } }],
    ]),
  values: {
    name: ["Ada Byron"],
    date_of_birth: ["1990-04-01"],
    rx_id: ["RX1003", "RX2"],
    patient_id: ["P100"],
    days_supply: [30, 90],
    reason: ["no_refills", "controlled"],
    message: ["sorry"],
    allergy: ["sulfa", "penicillin"],
    kind: ["counselling"],
    text: ["take with food"],
  },
  results: [{ found: true }, { refills: 2, schedule: "IV" }, { refills: 0, schedule: "II" }, { ok: true }],
};

const domains: Record<string, Domain> = {
  pharmacy,
  travel: conversationDomains.travel as Domain,
  refundsByOrder: conversationDomains.refundsByOrder as Domain,
};

describe("verify's verdict on each call is check --call's on the messages before it", () => {
  for (const [name, domain] of Object.entries(domains)) {
    test(`${name}: 8 random conversations with requests made along the way`, async () => {
      let late = 0;
      // One evaluator for every prefix: its answers do not depend on the questions asked before
      // (test/evaluator/question-order.test.ts).
      const evaluator = new Evaluator(domain.policy);
      for (let seed = 1; seed <= 8; seed++) {
        const { messages, callAt } = interleaved(domain, seed, 10);
        const calls = await verified(domain.policy, messages);
        const expected = [];
        for (const at of callAt) {
          const message = messages[at] as { tool_calls: { function: { name: string; arguments: string } }[] };
          const fn = message.tool_calls[0]?.function as { name: string; arguments: string };
          const answer = messages[at + 1] as { content: string };
          // A refused call is a refusal, not a call of the run: verify does not list it.
          if (answer.content.startsWith("[SHIELD] Blocked")) continue;
          expected.push(
            await checked(evaluator, messages.slice(0, at), {
              name: fn.name,
              arguments: JSON.parse(fn.arguments),
            }),
          );
        }
        assert.deepEqual(calls, expected, `seed ${seed}: ${JSON.stringify(messages)}`);
        if (messages.some((message, index) => index > 1 && message.content === "Also this.")) late++;
      }
      assert.ok(late >= 4, `only ${late} conversations had a request after their start`);
    });
  }
});

test("an allergy reported after the dispense: the dispense was allowed, and the allergy's rule is not broken by it", () => {
  const patient = { patient_id: "P100" };
  const dispense = { rx_id: "RX1003", ...patient, days_supply: 30 };
  const conversation = new Conversation([refillRequest], "Refill RX1003, please.")
    .call(
      "lookup_patient",
      { name: "Ada Byron", date_of_birth: "1990-04-01" },
      { json: { found: true, ...patient } },
    )
    .call("check_refill_count", { rx_id: "RX1003" }, { json: { refills: 2, schedule: "IV" } })
    .call("dispense", dispense, { json: { ok: true } });
  conversation.messages.push({
    role: "user",
    content: "Oh, I am allergic to sulfa.",
    mentor: { task: [{ name: "report_allergy", arguments: { allergy: "sulfa" } }] },
  });
  conversation
    .call("record_allergy", { ...patient, allergy: "sulfa" }, { json: { ok: true } })
    .call(
      "add_note",
      { rx_id: "RX1003", kind: "counselling", text: "take with food" },
      { json: { ok: true } },
    )
    .call("dispense", dispense, { json: { ok: true } });
  const messages = conversation.messages;
  const verification = verifyConversation(pharmacyPolicy, new Evaluator(pharmacyPolicy), messages);
  assert.deepEqual(
    verification.calls.map((entry) => [entry.call.name, entry.verdict, entry.violations]),
    [
      ["lookup_patient", "allow", []],
      ["check_refill_count", "allow", []],
      ["dispense", "allow", []],
      ["record_allergy", "allow", []],
      ["add_note", "allow", []],
      ["dispense", "allow", []],
    ],
  );
  const allergyRule = verification.rules.find(
    (rule) => rule.rule === "M6" && JSON.stringify(rule.binding).includes("sulfa"),
  );
  assert.equal(allergyRule?.satisfied, true, JSON.stringify(allergyRule));
  assert.equal(allergyRule?.brokenBy, undefined);
  // The last dispense leaves its counselling note due (M7): the only open duty.
  assert.deepEqual(
    verification.rules.filter((rule) => !rule.satisfied).map((rule) => rule.rule),
    ["M7"],
  );
});
