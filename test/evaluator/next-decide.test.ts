import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seededRandom } from "../../src/base/random.js";
import { Evaluator, type ProposedCall } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";
import type { Pick } from "../support/random-calls.js";

// One semantics for both questions: a call `next` lists as neutral or progressing is one
// `decide` allows, on random policies and random conversations. The token shield boosts what
// `next` calls progressing; a call it boosts that `decide` then refuses is a shield at odds with
// itself. What this found: a proposition whose `when` does not pin its entity (no `a.id == i`)
// names every binding of it in the run (`Run.namedBindings`), while the game aimed its calls at
// one binding each, so a lookup before authentication was neutral in `next` and blocked in
// `decide` (issue 32, item 3). The game's candidates now name bindings as the run does.

const tools = ["a", "b", "c"];

/** A proposition over the entity `item` (or none): how its `when` names a binding, and an outcome. */
function randomProposition(pick: Pick, name: string): string {
  const tool = pick(tools);
  const outcome = pick(["", "", `, outcome: "o.ok == true"`, `, outcome: "o.ok != true"`]);
  const shape = pick([
    `${name}(item): {tool: ${tool}, when: "a.id == i"${outcome}}`,
    `${name}(item): {tool: ${tool}, when: "a.id == i && a.k == 'x'"${outcome}}`,
    `${name}(item): {tool: ${tool}, when: "a.k == 'x'"${outcome}}`,
    `${name}(item): {tool: ${tool}${outcome}}`,
    `${name}: {tool: ${tool}${outcome}}`,
    `${name}: {tool: ${tool}, when: "a.k == 'y'"${outcome}}`,
  ]);
  return shape;
}

/** A random policy: three tools, one entity, up to five propositions and three rules. */
function randomPolicyText(pick: Pick): string {
  const count = pick([2, 3, 4, 5]);
  const propositions = Array.from({ length: count }, (_, index) => randomProposition(pick, `p${index}`));
  const atom = (): string => {
    const index = pick(Array.from({ length: count }, (_, at) => at));
    return (propositions[index] as string).split(":")[0] as string;
  };
  const rules = Array.from({ length: pick([1, 2, 3]) }, (_, index) => {
    const [a, b] = [atom(), atom()];
    const mode = pick(["block", "block", "warn"]);
    return pick([
      `{id: R${index}, ltl: "G(${a} -> O ${b})", mode: ${mode}}`,
      `{id: R${index}, ltl: "F(${a})", applies_to: requested, mode: ${mode}}`,
      `{id: R${index}, ltl: "G !${a}", mode: ${mode}}`,
      `{id: R${index}, template: response, a: "${a}", b: "${b}", mode: ${mode}}`,
      `{id: R${index}, template: chainResponse, a: "${a}", b: "${b}", mode: ${mode}}`,
      `{id: R${index}, template: absence, a: "${a}", n: 1, mode: ${mode}}`,
    ]);
  });
  return [
    "policy: random",
    "manual:",
    ...rules.map((_, index) => `  R${index}: Rule ${index}.`),
    "tools:",
    ...tools.map((tool) => `  ${tool}: {parameters: {id: string, k: {enum: [x, y]}}}`),
    "task:",
    "  ask: {parameters: {id: string}}",
    "entities:",
    "  item: {from: {ask: {i: id}}}",
    "propositions:",
    ...propositions.map((line) => `  ${line}`),
    "rules:",
    ...rules.map((line) => `  - ${line}`),
  ].join("\n");
}

function randomCall(pick: Pick): ProposedCall {
  return { name: pick(tools), arguments: { id: pick(["i1", "i2", "i3"]), k: pick(["x", "y"]) } };
}

// The wire-transfer desk of issue 32: a lookup, a screening and a decline are about every customer
// (their propositions have no binding pattern), so before the requested customer is authenticated
// `decide` blocks them, and `next` calls none of them neutral or progressing.
const wire = parsePolicy(
  `
policy: wire
manual:
  W1: Authenticate the customer before any lookup, screening or decline.
  W2: Every request ends sent or declined.
tools:
  authenticate: {parameters: {customer_id: string}}
  lookup_account: {parameters: {customer_id: string}}
  screen: {parameters: {beneficiary: string}}
  decline: {parameters: {reason: string}}
  send: {parameters: {customer_id: string, beneficiary: string}}
task:
  request_wire: {parameters: {customer_id: string, beneficiary: string}}
entities:
  customer: {from: {request_wire: {c: customer_id}}}
propositions:
  authed(customer): {tool: authenticate, when: "a.customer_id == c"}
  looked_up(customer): {tool: lookup_account}
  screened(customer): {tool: screen}
  declined(customer): {tool: decline}
  sent(customer): {tool: send, when: "a.customer_id == c"}
rules:
  - {id: W1, ltl: "G((looked_up(customer) | screened(customer) | declined(customer)) -> O authed(customer))"}
  - {id: W2, ltl: "F(sent(customer) | declined(customer))", applies_to: requested}
`,
  "wire.yaml",
);

describe("next and decide agree", () => {
  test("wire transfer: before the requested customer is authenticated, lookup, screening and decline are unsafe in next and blocked by decide", () => {
    const evaluator = new Evaluator(wire);
    const conversation = new Conversation([
      { name: "request_wire", arguments: { customer_id: "C1", beneficiary: "B1" } },
    ]).call("authenticate", { customer_id: "C2" }, { json: { ok: true } });
    const answer = evaluator.next(conversation.messages);
    for (const tool of ["lookup_account", "screen", "decline"]) {
      const listed = answer.calls.filter((entry) => entry.call.name === tool);
      assert.ok(listed.length > 0, tool);
      for (const { call, class: callClass } of listed) {
        assert.equal(callClass, "unsafe", `${tool}: ${JSON.stringify(call)}`);
        assert.equal(evaluator.decide(conversation.messages, call).verdict, "block", tool);
      }
    }
  });

  test("a call next calls neutral or progressing is one decide allows (random policies and conversations)", () => {
    let checked = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const next = seededRandom(seed);
      const pick: Pick = (values) => values[Math.floor(next() * values.length)] as (typeof values)[number];
      const text = randomPolicyText(pick);
      const policy = parsePolicy(text, `random-${seed}.yaml`);
      const task = Array.from({ length: pick([1, 2]) }, () => ({
        name: "ask",
        arguments: { id: pick(["i1", "i2"]) } as Record<string, Value>,
      }));
      const conversation = new Conversation(task);
      const evaluator = new Evaluator(policy, { strict: seed % 4 === 0 });
      for (let step = 0; step < 5; step++) {
        const answer = evaluator.next(conversation.messages);
        for (const { call, class: callClass } of answer.calls) {
          if (callClass === "unsafe") continue;
          const decision = evaluator.decide(conversation.messages, call);
          checked++;
          assert.notEqual(
            decision.verdict,
            "block",
            `seed ${seed}: next calls ${JSON.stringify(call)} ${callClass}, decide blocks it (${decision.violations.map((found) => found.rule).join(", ")})\n${text}\nafter ${JSON.stringify(conversation.messages)}`,
          );
        }
        const made = randomCall(pick);
        conversation.call(
          made.name,
          made.arguments,
          pick([{ json: { ok: true } }, { json: { ok: false } }, { text: "?" }]),
        );
      }
    }
    assert.ok(checked > 500, `only ${checked} calls checked`);
  });
});
