import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Evaluator } from "../../src/evaluator/index.js";
import { Game, StrategyTemplate } from "../../src/game/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { Run } from "../../src/run/index.js";
import { Conversation } from "../support/conversation.js";

const policyFile = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const request = {
  name: "request_travel",
  arguments: { origin: "Toronto", destination: "Chicago", urgent: false },
};

// Memo tables belong to the object that owns their lifetime: nothing is shared through a module.
describe("what an evaluator learns is its own", () => {
  test("two evaluators of one policy share no game states", () => {
    const policy = loadPolicy(policyFile);
    const messages = new Conversation([request]).messages;
    const first = new Evaluator(policy).next(messages).gameStates;
    const second = new Evaluator(policy).next(messages).gameStates;
    // The second searches again (a shared table would leave it nothing to explore).
    assert.ok(first.explored > 0 && first.known > 0);
    assert.deepEqual(second, first);
  });

  test("an evaluator keeps what its searches learned", () => {
    const evaluator = new Evaluator(loadPolicy(policyFile));
    const messages = new Conversation([request]).messages;
    const first = evaluator.next(messages).gameStates;
    const again = evaluator.next(messages).gameStates;
    assert.deepEqual(again, { explored: 0, known: first.known });
  });

  test("a template refuses the game of another policy", () => {
    const policy = loadPolicy(policyFile);
    const game = new Game(loadPolicy(policyFile));
    const run = Run.start(policy, [request]);
    assert.throws(() => new StrategyTemplate(run, { game }), { code: "MNT_ERR_BAD_INPUT" });
    assert.equal(new StrategyTemplate(run, { game: new Game(policy) }).game.policy, policy);
  });
});
