import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { shieldSetsFor, withDoneTool } from "../../src/shield/token/index.js";
import { Conversation } from "../support/conversation.js";

// Ending is the progressing move once the run's duties are met. A run that never had a duty (a
// policy of prohibitions only, like SOPBench's: the request is the user's, not a rule) was asked
// nothing the policy knows: ending is allowed and no progress, so the token shield neither
// penalizes opening a call nor boosts the tool that ends the run. Before, every accepting run
// counted ending as progress, and on SOPBench's bank the shield pushed the model to end right
// after the existence check it had been led to, before the card application it had wanted.
const policy = (duty: string) =>
  parsePolicy(
    `policy: card_desk
manual:
  EXISTS: The username must exist before a card application.
  APPLY: Apply for the card that was asked for.
tools:
  check_username_exist:
    parameters: {username: string}
    output: text
    labels: {exists: it exists, missing: it does not}
  apply_credit_card:
    parameters: {username: string}
  exit_conversation:
    parameters: {}
task:
  name_account: {parameters: {username: string}}
entities:
  account: {from: {name_account: {u: username}}}
propositions:
  exists(account): {tool: check_username_exist, when: "a.username == u", outcome: "o.label == 'exists'"}
  apply(account): {tool: apply_credit_card, when: "a.username == u"}
rules:
  - {id: EXISTS, ltl: "G(apply(account) -> O exists(account))"}
${duty}
done:
  tool: exit_conversation
`,
    "card.yaml",
  );

const checked = () =>
  new Conversation([{ name: "name_account", arguments: { username: "john_doe" } }]).call(
    "check_username_exist",
    { username: "john_doe" },
    { text: "True", label: "exists" },
  );

describe("ending is progress only for a run that had a duty", () => {
  test("a run of prohibitions only: ending allowed, not progressing, and the shield biases neither way", () => {
    const evaluator = new Evaluator(policy(""));
    for (const messages of [
      new Conversation([{ name: "name_account", arguments: { username: "john_doe" } }]).messages,
      checked().messages,
    ]) {
      assert.deepEqual(evaluator.next(messages).done, { allowed: true, progressing: false });
      const sets = withDoneTool(shieldSetsFor(evaluator, messages), "exit_conversation");
      assert.equal(sets.doneProgressing, false);
      assert.ok(!sets.progressingTools?.includes("exit_conversation"), "the end is not boosted");
    }
  });

  test("a run whose duty is met: ending is the progressing move", () => {
    const evaluator = new Evaluator(
      policy('  - {id: APPLY, ltl: "F apply(account)", applies_to: requested}'),
    );
    const open = checked();
    assert.deepEqual(evaluator.next(open.messages).done, { allowed: false, progressing: false });
    const met = open.call("apply_credit_card", { username: "john_doe" }, { text: "True" });
    assert.deepEqual(evaluator.next(met.messages).done, { allowed: true, progressing: true });
    const sets = withDoneTool(shieldSetsFor(evaluator, met.messages), "exit_conversation");
    assert.ok(sets.progressingTools?.includes("exit_conversation"), "the end is boosted");
  });
});
