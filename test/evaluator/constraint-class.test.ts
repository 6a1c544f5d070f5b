import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// A call that a constraint over values already read blocks is unsafe in `next`, as `decide` judges
// it (the game judges rules only: it called such a call progressing and the token shield boosted
// it, on SOPBench's university a change of major refused on a GPA read before). And a request's
// duty met by another way while the action it asked for is still allowed: ending is refused
// (before, it was boosted right after the lookup that excuses the duty, then allowed and not pushed).
const cardDesk = `policy: card_desk
manual:
  SCORE: A card needs a credit score of 600 or more.
  APPLY: Apply for the card asked for, unless the score was read (the duty cannot compare it).
tools:
  check_score:
    parameters: {username: string}
  apply_credit_card:
    parameters: {username: string}
task:
  request_card: {asks_for: [apply_credit_card], parameters: {username: string}}
entities:
  account: {from: {request_card: {u: username}}}
propositions:
  score_read(account): {tool: check_score, when: "a.username == u"}
  apply(account): {tool: apply_credit_card, when: "a.username == u"}
rules:
  - {id: APPLY, ltl: "F(apply(account) | score_read(account))", applies_to: requested}
constraints:
  - {id: SCORE, on: apply(account), require: "last('check_score').score >= 600"}
`;
const policy = parsePolicy(cardDesk, "card.yaml");

const checked = (score: number) =>
  new Conversation([{ name: "request_card", arguments: { username: "ann" } }]).call(
    "check_score",
    { username: "ann" },
    { json: { score } },
  );

const classOf = (evaluator: Evaluator, messages: unknown, tool: string) =>
  evaluator.next(messages).tools.find((entry) => entry.name === tool)?.class;

describe("next judges the constraints a listed call decides, and ending by an excuse", () => {
  test("a call a constraint over values read blocks is unsafe, as decide says", () => {
    const evaluator = new Evaluator(policy);
    const apply = { name: "apply_credit_card", arguments: { username: "ann" } };
    const low = checked(540).messages;
    assert.equal(evaluator.decide(low, apply).verdict, "block");
    assert.equal(classOf(evaluator, low, "apply_credit_card"), "unsafe");
    const high = checked(720).messages;
    assert.equal(evaluator.decide(high, apply).verdict, "allow");
    assert.notEqual(classOf(evaluator, high, "apply_credit_card"), "unsafe");
  });

  test("a duty met by the lookup: ending is refused while the action asked for is allowed, pushed once it is taken or refused", () => {
    const evaluator = new Evaluator(policy);
    // The score allows the card (SCORE, the card's one constraint, reads no argument the listed
    // call leaves out): the action asked for is the progress, and ending is refused until it is
    // taken (SOPBench's dmv: the model, the license's details read, ended without the renewal).
    const high = checked(720);
    const next = evaluator.next(high.messages);
    assert.deepEqual(next.done, { allowed: false, progressing: false });
    assert.deepEqual(
      next.openDuties.map((duty) => [duty.rule, duty.fulfil]),
      [["APPLY", { name: "apply_credit_card", arguments: { username: "ann" } }]],
    );
    assert.equal(classOf(evaluator, high.messages, "apply_credit_card"), "progressing");
    // The score rules it out: ending is the progress.
    assert.deepEqual(evaluator.next(checked(540).messages).done, { allowed: true, progressing: true });
    // The card applied for: ending is the progress.
    const applied = high.call("apply_credit_card", { username: "ann" }, { json: { ok: true } });
    assert.deepEqual(evaluator.next(applied.messages).done, { allowed: true, progressing: true });
  });
});

// The same desk where the card also needs a login: the score read meets the duty, the card is
// blocked until the login, so the login is the progress and ending is refused (SOPBench's dmv: the
// vehicle's details read, its renewal waited on the time lookup; the shield boosted nothing).
const loginPolicy = parsePolicy(
  cardDesk
    .replace(
      "tools:\n",
      "  LOGIN: The user logs in before applying.\ntools:\n  login_user:\n    parameters: {username: string}\n",
    )
    .replace(
      "propositions:\n",
      'propositions:\n  logged_in(account): {tool: login_user, when: "a.username == u"}\n',
    )
    .replace(
      "constraints:\n",
      '  - {id: LOGIN, ltl: "G(apply(account) -> O logged_in(account))"}\nconstraints:\n',
    ),
  "card-login.yaml",
);

describe("a duty met by the lookup while the action asked for waits on a step", () => {
  test("the step is the progress and ending is refused until the action is taken", () => {
    const evaluator = new Evaluator(loginPolicy);
    const next = evaluator.next(checked(720).messages);
    assert.deepEqual(next.done, { allowed: false, progressing: false });
    assert.equal(classOf(evaluator, checked(720).messages, "login_user"), "progressing");
    assert.equal(classOf(evaluator, checked(720).messages, "apply_credit_card"), "unsafe");
    assert.deepEqual(
      next.openDuties.map((duty) => [duty.rule, duty.fulfil]),
      [["APPLY", { name: "login_user", arguments: { username: "ann" } }]],
    );
    // Logged in: the card itself.
    const loggedIn = checked(720).call("login_user", { username: "ann" }, { json: { ok: true } });
    assert.equal(classOf(evaluator, loggedIn.messages, "apply_credit_card"), "progressing");
    assert.equal(evaluator.next(loggedIn.messages).done.allowed, false);
    // A score that rules the card out, logged in: nothing to wait on, ending is the progress. (Not
    // logged in, the login is still advised: the advice's search takes a constraint for one the
    // call's arguments can repair.)
    const ruledOut = checked(540).call("login_user", { username: "ann" }, { json: { ok: true } });
    assert.deepEqual(evaluator.next(ruledOut.messages).done, { allowed: true, progressing: true });
  });
});
