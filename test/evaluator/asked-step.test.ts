import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator, type NextAnswer } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";

// SOPBench's university: a student asks for financial aid. The duty is met by the application,
// or excused by a failed login or a record that rules it out (the policy's way of not trapping a
// run whose action must fail). The application needs the login and a record that allows it (a
// constraint on the label the record lookup returned). After a successful login the agent should
// look the record up: that is the step toward the application. Before: the lookup was no advice
// (a hypothetical lookup had no label for the constraint to read), `next` called it neutral (the
// lookup's per-binding candidates disagreed and the listed call took the worst), and the duty's
// next call was a login again (with a password nobody gave, so it might fail: an excuse), which
// the model repeated to the call limit. (The student's account, another entity of the same
// request, makes the lookup an event of two instances, as university's user and aid do.)
const policy = (asksFor: string, record = "last('get_record').label == 'eligible'") =>
  parsePolicy(
    `policy: aid_desk
manual:
  LOGIN: The student is logged in before applying.
  RECORD: The record shows the student eligible before applying.
  ENROLL: The record is read before an enrollment.
  AID: Submit the application asked for, unless the login failed or the record rules it out; or refer the student to the aid office.
tools:
  login_user:
    parameters: {username: string, password: string}
    output: text
    labels: {"yes": logged in, "no": not logged in}
  refer_to_office:
    parameters: {username: string}
  get_record:
    parameters: {username: string}
    output: text
    labels: {eligible: eligible, probation: on probation}
    fields: {gpa: {number: 'gpa (\\d+(?:\\.\\d+)?)'}}
  apply_aid:
    parameters: {username: string}
    output: text
    labels: {"yes": submitted, "no": refused}
  enroll:
    parameters: {username: string}
  get_transcript:
    parameters: {username: string}
    output: text
    labels: {read: read}
    fields: {gpa: {number: 'gpa (\\d+(?:\\.\\d+)?)'}}
task:
  request_aid: {parameters: {username: string}${asksFor}}
entities:
  student: {from: {request_aid: {u: username}}}
  account: {from: {request_aid: {w: username}}}
propositions:
  logged_in(student): {tool: login_user, when: "a.username == u", outcome: "o.label == 'yes'"}
  login_failed(student): {tool: login_user, when: "a.username == u", outcome: "o.label == 'no'"}
  ruled_out(student): {tool: get_record, when: "a.username == u", outcome: "o.label == 'probation'"}
  apply(student): {tool: apply_aid, when: "a.username == u"}
  referred(student): {tool: refer_to_office, when: "a.username == u"}
  applied(student): {tool: apply_aid, when: "a.username == u", outcome: "o.label == 'yes'"}
  read(account): {tool: get_record, when: "a.username == w"}
  enrolled(account): {tool: enroll, when: "a.username == w"}
rules:
  - {id: LOGIN, ltl: "G(apply(student) -> O logged_in(student))"}
  - {id: ENROLL, ltl: "G(enrolled(account) -> O read(account))"}
  - {id: AID, ltl: "F(applied(student) | login_failed(student) | ruled_out(student) | referred(student))", applies_to: requested}
constraints:
  - {id: RECORD, on: apply(student), require: "${record}"}
`,
    "aid.yaml",
  );

const loggedIn = () =>
  new Conversation([{ name: "request_aid", arguments: { username: "alice" } }]).call(
    "login_user",
    { username: "alice", password: "pw" },
    { text: "True", label: "yes" },
  );
const apply = { name: "apply_aid", arguments: { username: "alice" } };
const lookup = { name: "get_record", arguments: { username: "alice" } };

describe("the step toward what was asked, where excuses also meet the duty", () => {
  test("a constraint on the label a lookup returns is cleared by the lookup: it is the advice", () => {
    const decision = new Evaluator(policy("")).decide(loggedIn().messages, apply);
    assert.equal(decision.verdict, "block");
    assert.deepEqual(decision.advice, { kind: "prerequisite", call: lookup, unblocks: true });
  });

  test("a constraint on a value a lookup not made yet would read: the lookup first, which reads it", () => {
    const evaluator = new Evaluator(policy(", asks_for: [apply_aid]", "last('get_record').gpa >= 2.0"));
    const decision = evaluator.decide(loggedIn().messages, apply);
    assert.equal(decision.verdict, "block");
    // Before: no call could be shown to allow it (a hypothetical lookup reads no value), so the
    // advice was another way to meet the duty (the referral), and the duty's next call the blocked
    // application itself.
    assert.deepEqual(decision.advice, { kind: "prerequisite", call: lookup, reads: ["RECORD"] });
    assert.deepEqual(evaluator.next(loggedIn().messages).openDuties[0]?.fulfil, lookup);
    // Once read, the value decides: 3.1 allows the application.
    const read = loggedIn().call("get_record", { username: "alice" }, { text: "gpa 3.1", label: "eligible" });
    assert.equal(evaluator.decide(read.messages, apply).verdict, "allow");
  });

  test("the lookup to read first may be one no rule mentions (no call of the game): filled from the bindings", () => {
    const evaluator = new Evaluator(policy(", asks_for: [apply_aid]", "last('get_transcript').gpa >= 2.0"));
    assert.deepEqual(evaluator.decide(loggedIn().messages, apply).advice, {
      kind: "prerequisite",
      call: { name: "get_transcript", arguments: { username: "alice" } },
      reads: ["RECORD"],
    });
  });

  test("a call the game aims at two bindings is classed by its whole move: the lookup progresses", () => {
    const next = new Evaluator(policy("")).next(loggedIn().messages);
    assert.equal(next.calls.find((verdict) => verdict.call.name === "get_record")?.class, "progressing");
    assert.equal(next.tools.find((tool) => tool.name === "get_record")?.class, "progressing");
  });

  test("asks_for: the duty's next call is the step toward the application, not the referral", () => {
    const asked = new Evaluator(policy(", asks_for: [apply_aid]")).next(loggedIn().messages);
    assert.deepEqual(asked.openDuties[0]?.fulfil, lookup);
    // Without it the ways tie on the request's one field, and the first progressing call, the
    // referral (one call, and the duty is met), is the duty's next call.
    const tied = new Evaluator(policy("")).next(loggedIn().messages);
    assert.equal(tied.openDuties[0]?.fulfil?.name, "refer_to_office");
  });

  test("asks_for: the step toward the application is the progress, not the referral that would also meet the duty", () => {
    // The game's environment is cooperative, so a referral (one call, and the duty is met) lowers
    // the distance as much as the lookup the application needs: both were progressing, and the
    // token shield boosted the way out as much as the way asked for.
    const evaluator = new Evaluator(policy(", asks_for: [apply_aid]", "last('get_record').gpa >= 2.0"));
    const classOf = (next: NextAnswer, tool: string) =>
      next.tools.find((entry) => entry.name === tool)?.class;
    const next = evaluator.next(loggedIn().messages);
    assert.equal(classOf(next, "get_record"), "progressing");
    assert.equal(classOf(next, "refer_to_office"), "neutral");
    assert.deepEqual(next.calls.find((verdict) => verdict.call.name === "get_record")?.class, "progressing");
    // Once the record rules the application out (a GPA below the bound, read: observations are
    // facts), the asked way is impossible and the referral is progress again.
    const low = loggedIn().call("get_record", { username: "alice" }, { text: "gpa 1.2", label: "eligible" });
    assert.equal(evaluator.decide(low.messages, apply).verdict, "block");
    assert.equal(classOf(evaluator.next(low.messages), "refer_to_office"), "progressing");
  });

  test("a lookup only a constraint reads, the step toward the asked way, is listed and progressing", () => {
    const evaluator = new Evaluator(policy(", asks_for: [apply_aid]", "last('get_transcript').gpa >= 2.0"));
    const next = evaluator.next(loggedIn().messages);
    const transcript = { name: "get_transcript", arguments: { username: "alice" } };
    assert.deepEqual(next.openDuties[0]?.fulfil, transcript);
    assert.deepEqual(
      next.calls.filter((verdict) => verdict.call.name === "get_transcript"),
      [{ call: transcript, class: "progressing" }],
    );
    assert.equal(next.tools.find((entry) => entry.name === "get_transcript")?.class, "progressing");
  });

  test("the login made is the login the game's candidate for the student stands for: no excuse to aim for", () => {
    // The candidate login_user(username) leaves the password open; before, it stood for a login
    // with any password, one that fails (an excuse that meets the duty), so it was progressing.
    const next = new Evaluator(policy(", asks_for: [apply_aid]")).next(loggedIn().messages);
    assert.equal(next.tools.find((tool) => tool.name === "login_user")?.class, "neutral");
    assert.equal(next.calls.find((verdict) => verdict.call.name === "login_user")?.class, "neutral");
  });

  test("asks_for names a declared tool, or the policy does not load", () => {
    assert.throws(
      () => policy(", asks_for: [apply_financial_aid]"),
      /task request_aid asks_for apply_financial_aid, which is not a declared tool/,
    );
  });
});

// A call aimed at one binding whose arguments name another too: the declaration of the minor asked
// for names the student, whom the login rule is about. The game's candidate aimed at the
// declaration is no event of the student's rule, so it was progressing before the login, though
// `decide` refuses that very call (SOPBench university's declare_minor, blocked by its login rule
// and by the rule that the policy cannot read the minor's conditions, was boosted).
describe("a listed call is classed by what its arguments name", () => {
  const minors = parsePolicy(
    `policy: minors
manual:
  LOGIN: The student is logged in before declaring a minor.
  MINOR: Declare the minor asked for.
tools:
  login_user:
    parameters: {username: string, password: string}
    output: text
    labels: {"yes": logged in, "no": not logged in}
  declare_minor:
    parameters: {username: string, minor: string}
task:
  request_minor: {parameters: {username: string, minor: string}}
entities:
  student: {from: {request_minor: {u: username}}}
  declaration: {from: {request_minor: {nu: username, nm: minor}}}
propositions:
  logged_in(student): {tool: login_user, when: "a.username == u", outcome: "o.label == 'yes'"}
  declares(student): {tool: declare_minor, when: "a.username == u"}
  declared(declaration): {tool: declare_minor, when: "a.username == nu && a.minor == nm"}
rules:
  - {id: LOGIN, ltl: "G(declares(student) -> O logged_in(student))"}
  - {id: MINOR, ltl: "F declared(declaration)", applies_to: requested}
`,
    "minors.yaml",
  );
  const declare = { name: "declare_minor", arguments: { username: "alice", minor: "Physics" } };
  const asked = () =>
    new Conversation([{ name: "request_minor", arguments: { username: "alice", minor: "Physics" } }]);

  test("before the login the declaration is unsafe, as decide judges it; after it, progressing", () => {
    const evaluator = new Evaluator(minors);
    const before = evaluator.next(asked().messages);
    assert.equal(evaluator.decide(asked().messages, declare).verdict, "block");
    assert.deepEqual(
      before.calls.filter((verdict) => verdict.call.name === "declare_minor").map((verdict) => verdict.class),
      ["unsafe", "unsafe"],
    );
    assert.notEqual(before.tools.find((tool) => tool.name === "declare_minor")?.class, "progressing");
    const loggedIn = asked().call(
      "login_user",
      { username: "alice", password: "pw" },
      { text: "True", label: "yes" },
    );
    const after = evaluator.next(loggedIn.messages);
    assert.equal(
      after.calls.find((verdict) => verdict.call.arguments.minor === "Physics")?.class,
      "progressing",
    );
  });
});

// The lookup of the user's order (its owner is what the coupon's constraint reads) is the step
// toward the asked coupon. The game lists the lookup aimed at the order, which names the order
// only: another call. Before, it stood for the step, so the step was not listed and the token
// shield boosted the lookup without its user (on online_market, where such a partial call is
// unsafe, nothing was boosted at all).
describe("the step toward the asked way is listed as the call it is", () => {
  const coupons = parsePolicy(
    `policy: coupons
manual:
  MINE: The order is looked up before a coupon is applied to it.
  OWN: The order is the user's.
  COUPON: Apply the coupon the user asks for.
tools:
  get_order:
    parameters: {username: string, order_id: string}
  use_coupon:
    parameters: {username: string, order_id: string}
task:
  request_coupon: {asks_for: [use_coupon], parameters: {username: string, order_id: string}}
entities:
  user: {from: {request_coupon: {u: username}}}
  order: {from: {request_coupon: {oid: order_id}}}
  coupon: {from: {request_coupon: {cu: username, co: order_id}}}
propositions:
  user_looked_up(user): {tool: get_order, when: "a.username == u"}
  order_looked_up(order): {tool: get_order, when: "a.order_id == oid"}
  applies(order): {tool: use_coupon, when: "a.order_id == oid"}
  applied(coupon): {tool: use_coupon, when: "a.username == cu && a.order_id == co"}
rules:
  - {id: MINE, ltl: "G(applies(order) -> O order_looked_up(order))"}
  - {id: COUPON, ltl: "F applied(coupon)", applies_to: requested}
constraints:
  - {id: OWN, on: applies(order), require: "last('get_order').owner == a.username"}
`,
    "coupons.yaml",
  );
  test("the lookup of the user's order is progressing, as the duty's next call", () => {
    const conversation = new Conversation([
      { name: "request_coupon", arguments: { username: "alice", order_id: "ORD-1" } },
    ]);
    const next = new Evaluator(coupons).next(conversation.messages);
    const lookup = { name: "get_order", arguments: { order_id: "ORD-1", username: "alice" } };
    assert.deepEqual(next.openDuties[0]?.fulfil, lookup);
    assert.deepEqual(
      next.calls.filter((verdict) => verdict.call.name === "get_order"),
      [
        // The lookup by the order alone meets MINE too: the coupon, aimed at the request, is an
        // event of the order's rule (its order_id names the order), so MINE's lookup is progress.
        { call: { name: "get_order", arguments: { order_id: "ORD-1" } }, class: "progressing" },
        { call: lookup, class: "progressing" },
      ],
    );
    assert.equal(next.tools.find((tool) => tool.name === "get_order")?.class, "progressing");
  });
});

// A credit check is an excuse of the asked card (bad credit meets the duty) and, aimed at the
// user, an event of a rule about the user: the game lists one call for both aims, and whether it
// serves only the asked duty is read from the instances the call is an event of as the run reads
// it. Before, the user-aimed candidate's own instances were read, which do not include the duty's:
// the check stayed progressing (online_market's use_coupon boosted its credit check at every step).
describe("an excuse aimed at another entity of the request is neutral too", () => {
  const cards = parsePolicy(
    `policy: cards
manual:
  SCORE: The score is read before a card is issued.
  FREEZE: A frozen user's credit is checked before the account is frozen.
  CARD: Issue the card asked for, unless the credit is bad.
tools:
  check_credit:
    parameters: {username: string}
    output: text
    labels: {good: good credit, bad: bad credit}
  get_score:
    parameters: {username: string}
  issue_card:
    parameters: {username: string}
  freeze:
    parameters: {username: string}
task:
  request_card: {asks_for: [issue_card], parameters: {username: string}}
entities:
  user: {from: {request_card: {u: username}}}
  card_request: {from: {request_card: {cu: username}}}
propositions:
  credit_checked(user): {tool: check_credit, when: "a.username == u"}
  frozen(user): {tool: freeze, when: "a.username == u"}
  scored(card_request): {tool: get_score, when: "a.username == cu"}
  issues(card_request): {tool: issue_card, when: "a.username == cu"}
  bad_credit(card_request): {tool: check_credit, when: "a.username == cu", outcome: "o.label == 'bad'"}
rules:
  - {id: SCORE, ltl: "G(issues(card_request) -> O scored(card_request))"}
  - {id: FREEZE, ltl: "G(frozen(user) -> O credit_checked(user))"}
  - {id: CARD, ltl: "F(issues(card_request) | bad_credit(card_request))", applies_to: requested}
`,
    "cards.yaml",
  );
  test("the credit check is neutral while the card is possible; the score lookup is the progress", () => {
    const conversation = new Conversation([{ name: "request_card", arguments: { username: "alice" } }]);
    const next = new Evaluator(cards).next(conversation.messages);
    const classOf = (tool: string) => next.tools.find((entry) => entry.name === tool)?.class;
    assert.deepEqual(next.openDuties[0]?.fulfil, { name: "get_score", arguments: { username: "alice" } });
    assert.equal(classOf("get_score"), "progressing");
    assert.equal(classOf("check_credit"), "neutral");
  });
});

// An asked cancellation whose duty is about the order alone, blocked by a login rule about the
// user and a rule that the order's placement was checked: the duty's next call is the login, with
// the user's name and password from the task. Before, the cancellation's user was filled only by a
// value that allows the call, and none does before the login: the step was sought for a call with
// no user (the login of nobody), none was found, and the duty's next call was the blocked
// cancellation itself with `username` missing; nothing progressed, and the model repeated a check
// to the call limit (SOPBench online_market cancel_order/0, session 22).
describe("the step toward an asked call blocked by two rules, one about an entity the duty does not name", () => {
  const shop = parsePolicy(
    `policy: cancellations
manual:
  LOGIN: The user is logged in before cancelling or checking an order.
  PLACED: The order is checked to be the user's before it is cancelled.
  CANCEL: Cancel the order asked for, unless it is not the user's.
tools:
  login_user:
    parameters: {username: string, password: string}
    output: text
    labels: {"yes": logged in, "no": not logged in}
  check_order:
    parameters: {username: string, order_id: string}
    output: text
    labels: {"yes": the user's, "no": not the user's}
  cancel_order:
    parameters: {username: string, order_id: string}
task:
  request_cancel: {asks_for: [cancel_order], parameters: {username: string, password: string, order_id: string}}
entities:
  user: {from: {request_cancel: {u: username}}}
  order: {from: {request_cancel: {oid: order_id}}}
  cancel_request: {from: {request_cancel: {xo: order_id}}}
propositions:
  logged_in(user): {tool: login_user, when: "a.username == u", outcome: "o.label == 'yes'"}
  cancels(user): {tool: cancel_order, when: "a.username == u"}
  checks(user): {tool: check_order, when: "a.username == u"}
  placed(order): {tool: check_order, when: "a.order_id == oid", outcome: "o.label == 'yes'"}
  order_cancelled(order): {tool: cancel_order, when: "a.order_id == oid"}
  cancelled(cancel_request): {tool: cancel_order, when: "a.order_id == xo"}
  not_placed(cancel_request): {tool: check_order, when: "a.order_id == xo", outcome: "o.label == 'no'"}
rules:
  - {id: LOGIN, ltl: "G((cancels(user) | checks(user)) -> O logged_in(user))"}
  - {id: PLACED, ltl: "G(order_cancelled(order) -> O placed(order))"}
  - {id: CANCEL, ltl: "F(cancelled(cancel_request) | not_placed(cancel_request))", applies_to: requested}
`,
    "cancellations.yaml",
  );
  const asked = () =>
    new Conversation([
      { name: "request_cancel", arguments: { username: "alice", password: "pw", order_id: "ORD-4" } },
    ]);
  const classOf = (next: NextAnswer, tool: string) => next.tools.find((entry) => entry.name === tool)?.class;

  test("the login, then the check, then the cancellation: each the duty's next call, progressing", () => {
    const evaluator = new Evaluator(shop);
    const login = { name: "login_user", arguments: { username: "alice", password: "pw" } };
    const start = evaluator.next(asked().messages);
    assert.deepEqual(start.openDuties[0]?.fulfil, login);
    assert.equal(start.openDuties[0]?.missing, undefined);
    assert.equal(classOf(start, "login_user"), "progressing");
    const loggedIn = asked().call("login_user", login.arguments, { text: "True", label: "yes" });
    const check = evaluator.next(loggedIn.messages);
    const lookup = { name: "check_order", arguments: { order_id: "ORD-4", username: "alice" } };
    assert.deepEqual(check.openDuties[0]?.fulfil, lookup);
    assert.equal(classOf(check, "check_order"), "progressing");
    const checked = loggedIn.call("check_order", lookup.arguments, { text: "True", label: "yes" });
    const cancel = evaluator.next(checked.messages);
    assert.deepEqual(cancel.openDuties[0]?.fulfil, {
      name: "cancel_order",
      arguments: { order_id: "ORD-4", username: "alice" },
    });
    assert.equal(classOf(cancel, "cancel_order"), "progressing");
  });
});
