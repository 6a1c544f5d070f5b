import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { shieldSetsFor } from "../../src/shield/token/index.js";
import { Conversation } from "../support/conversation.js";

// SOPBench's bank: a transfer names two accounts, its own and the destination, and each must have
// been checked. `next` lists the transfer as calls that name one account each (the game aims a call
// at each binding), and such a call leaves the other account out, so it introduces an account with
// no username, which the destination's rule refuses. Before, every listed transfer was unsafe, the
// tool was unsafe and the token shield masked its name and both usernames, though `decide` allows
// the transfer the agent writes.
const policy = parsePolicy(
  `policy: transfer_desk
manual:
  FROM: The account is checked before it sends money.
  TO: The destination is checked before it receives money.
  LIMIT: A transfer sends 500 at most.
tools:
  check_exists:
    parameters: {username: string}
    output: text
    labels: {exists: it exists, missing: it does not}
  transfer_funds:
    parameters: {username: string, destination_username: string, amount: number}
task:
  name_account: {parameters: {username: string, amount: number}}
entities:
  account: {from: {name_account: {u: username}}}
propositions:
  exists(account): {tool: check_exists, when: "a.username == u", outcome: "o.label == 'exists'"}
  sends(account): {tool: transfer_funds, when: "a.username == u"}
  receives(account): {tool: transfer_funds, when: "a.destination_username == u"}
rules:
  - {id: FROM, ltl: "G(sends(account) -> O exists(account))"}
  - {id: TO, ltl: "G(receives(account) -> O exists(account))"}
constraints:
  - {id: LIMIT, on: sends(account), require: "a.amount <= 500"}
`,
  "transfer.yaml",
);

describe("a tool whose calls name two entities", () => {
  const checked = new Conversation([
    { name: "name_account", arguments: { username: "alice", amount: 200 } },
    { name: "name_account", arguments: { username: "jane" } },
  ])
    .call("check_exists", { username: "alice" }, { text: "True", label: "exists" })
    .call("check_exists", { username: "jane" }, { text: "True", label: "exists" });
  const evaluator = new Evaluator(policy);
  const transfer = {
    name: "transfer_funds",
    arguments: { username: "alice", destination_username: "jane", amount: 200 },
  };

  test("is not unsafe for calls that leave an entity out: the transfer written in full is allowed", () => {
    assert.equal(evaluator.decide(checked.messages, transfer).verdict, "allow");
    const next = evaluator.next(checked.messages);
    assert.notEqual(next.tools.find((tool) => tool.name === "transfer_funds")?.class, "unsafe");
    const usernames = next.arguments.find(
      (entry) => entry.tool === "transfer_funds" && entry.argument === "username",
    );
    assert.deepEqual(usernames?.unsafe ?? [], []);
    // Nor the values of an argument a constraint reads: an amount within the limit stays writable.
    const amounts = next.arguments.find(
      (entry) => entry.tool === "transfer_funds" && entry.argument === "amount",
    );
    assert.deepEqual(amounts?.unsafe ?? [], []);
    const sets = shieldSetsFor(evaluator, checked.messages);
    assert.ok(!sets.unsafeTools?.includes("transfer_funds"), "the token shield does not mask the transfer");
  });

  test("stays unsafe where no account was checked", () => {
    const unchecked = new Conversation([{ name: "name_account", arguments: { username: "alice" } }]);
    assert.equal(evaluator.decide(unchecked.messages, transfer).verdict, "block");
  });

  // SOPBench's dmv: the model, asked to change a vehicle's address, wrote the change 50 times
  // under the token shield, each blocked (the user not logged in): every listed change names one
  // entity and was left out as above, so the tool was never masked.
  test("is unsafe where every call it could write is blocked, known accounts and new ones alike", () => {
    const named = new Conversation([{ name: "name_account", arguments: { username: "alice" } }]);
    const next = evaluator.next(named.messages);
    assert.equal(next.tools.find((tool) => tool.name === "transfer_funds")?.class, "unsafe");
    assert.ok(shieldSetsFor(evaluator, named.messages).unsafeTools?.includes("transfer_funds"));
    for (const destination of ["alice", "bob"])
      assert.equal(
        evaluator.decide(named.messages, {
          name: "transfer_funds",
          arguments: { username: "alice", destination_username: destination, amount: 1 },
        }).verdict,
        "block",
      );
  });

  test("is not unsafe while one combination of known accounts is allowed (a transfer to oneself)", () => {
    const one = new Conversation([{ name: "name_account", arguments: { username: "alice" } }]).call(
      "check_exists",
      { username: "alice" },
      { text: "True", label: "exists" },
    );
    const self = {
      name: "transfer_funds",
      arguments: { username: "alice", destination_username: "alice", amount: 1 },
    };
    assert.equal(evaluator.decide(one.messages, self).verdict, "allow");
    assert.notEqual(
      evaluator.next(one.messages).tools.find((tool) => tool.name === "transfer_funds")?.class,
      "unsafe",
    );
  });
});
