import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { seededIntegers } from "../../src/base/random.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { holds } from "../../src/logic/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { Run, traceFromMessages } from "../../src/run/index.js";
import { Conversation } from "../support/conversation.js";

// A proposition over two entities: a refund names a customer and one of their orders.
const policy = loadPolicy(
  fileURLToPath(new URL("../../../test/run/fixtures/refunds-by-order.yaml", import.meta.url)),
);

const refund = (customer_id: string, order_id: string) => ({
  name: "refund",
  arguments: { customer_id, order_id },
});
const task = [{ name: "request_refund", arguments: { customer_id: "c1", order_id: "o1" } }];

describe("a proposition over two entities", () => {
  const evaluator = new Evaluator(policy);

  test("the requested refund before verifying its customer is blocked by R1", () => {
    const decision = evaluator.decide(new Conversation(task).messages, refund("c1", "o1"));
    assert.equal(decision.verdict, "block");
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["R1"],
    );
  });

  test("after verifying the customer the refund is allowed, and a second refund of it is blocked by R2", () => {
    const verified = new Conversation(task).call("verify", { customer_id: "c1" });
    assert.equal(evaluator.decide(verified.messages, refund("c1", "o1")).verdict, "allow");
    verified.call("refund", { customer_id: "c1", order_id: "o1" });
    const again = evaluator.decide(verified.messages, refund("c1", "o1"));
    assert.equal(again.verdict, "block");
    assert.deepEqual(
      again.violations.map((finding) => finding.rule),
      ["R2"],
    );
  });

  test("an order the task did not name is still judged: refunding it unverified is blocked", () => {
    assert.equal(evaluator.decide(new Conversation(task).messages, refund("c1", "o2")).verdict, "block");
    assert.equal(evaluator.decide(new Conversation(task).messages, refund("c2", "o9")).verdict, "block");
  });

  test("verifying one customer does not allow refunding another's order", () => {
    const verified = new Conversation(task).call("verify", { customer_id: "c1" });
    assert.equal(evaluator.decide(verified.messages, refund("c2", "o1")).verdict, "block");
    assert.equal(evaluator.decide(verified.messages, refund("c1", "o2")).verdict, "allow");
  });
});

describe("the game over a proposition over two entities", () => {
  const evaluator = new Evaluator(policy);
  const considered = (messages: unknown) =>
    evaluator.next(messages).calls.map((entry) => [entry.call.name, entry.call.arguments, entry.class]);

  test("its calls are aimed at a customer and an order together, never at one with the other left null", () => {
    assert.deepEqual(considered(new Conversation(task).messages), [
      ["verify", { customer_id: "c1" }, "progressing"],
      ["refund", { customer_id: "c1", order_id: "o1" }, "unsafe"],
    ]);
  });

  test("the open duty is fulfilled by the refund of the requested order once the customer is verified", () => {
    const verified = new Conversation(task).call("verify", { customer_id: "c1" });
    const next = evaluator.next(verified.messages);
    assert.deepEqual(
      next.openDuties.map((duty) => [duty.rule, duty.fulfil]),
      [["R3", { name: "refund", arguments: { customer_id: "c1", order_id: "o1" } }]],
    );
    assert.deepEqual(next.arguments.find((entry) => entry.argument === "order_id")?.progressing, ["o1"]);
    verified.call("refund", { customer_id: "c1", order_id: "o1" });
    assert.equal(evaluator.next(verified.messages).done.allowed, true);
  });
});

describe("a run over a proposition over two entities", () => {
  const verdicts = (conversation: Conversation) => {
    const run = Run.fromTrace(policy, traceFromMessages(conversation.messages, policy));
    return run.instances.map(
      (instance, index) =>
        `${instance.rule.id}(${instance.bindings.map((binding) => Object.values(binding.values)[0]).join(",")}) ${run.satisfies(index)}`,
    );
  };

  test("an order first named after its customer's verification reads that verification", () => {
    const conversation = new Conversation(task)
      .call("verify", { customer_id: "c1" })
      .call("refund", { customer_id: "c1", order_id: "o2" })
      .call("refund", { customer_id: "c1", order_id: "o1" });
    assert.deepEqual(verdicts(conversation), [
      "R1(c1,o1) true",
      "R2(c1,o1) true",
      "R3(c1,o1) true",
      "R1(c1,o2) true",
      "R2(c1,o2) true",
    ]);
  });

  test("a refund before the verification breaks R1 for its order only; a second one breaks R2", () => {
    const conversation = new Conversation(task)
      .call("refund", { customer_id: "c1", order_id: "o2" })
      .call("verify", { customer_id: "c1" })
      .call("refund", { customer_id: "c1", order_id: "o1" })
      .call("refund", { customer_id: "c1", order_id: "o1" });
    assert.deepEqual(verdicts(conversation), [
      "R1(c1,o1) true",
      "R2(c1,o1) false",
      "R3(c1,o1) true",
      "R1(c1,o2) false",
      "R2(c1,o2) true",
    ]);
  });

  test("a customer first named by a refund of a known order is not verified by another's verification", () => {
    // The instances over (c2, o1) read the calls before them: the refund of (c1, o1) is not theirs.
    const conversation = new Conversation(task)
      .call("verify", { customer_id: "c1" })
      .call("refund", { customer_id: "c1", order_id: "o1" })
      .call("refund", { customer_id: "c2", order_id: "o1" });
    assert.deepEqual(verdicts(conversation), [
      "R1(c1,o1) true",
      "R2(c1,o1) true",
      "R3(c1,o1) true",
      "R1(c2,o1) false",
      "R2(c2,o1) true",
    ]);
  });
});

describe("differential: a proposition over two entities", () => {
  test("on random runs, each instance's verdict is its formula's on the run's calls as they concern it", () => {
    const random = seededIntegers(11);
    const keyOf = (tool: string) =>
      [...policy.propositions.values()].find((proposition) => proposition.tool === tool)?.key as string;
    const customers = ["c1", "c2"];
    const orders = ["o1", "o2", "o3"];
    for (let sample = 0; sample < 300; sample++) {
      const requested = [
        { customer_id: customers[random(2)] as string, order_id: orders[random(3)] as string },
      ];
      const conversation = new Conversation(
        requested.map((args) => ({ name: "request_refund", arguments: args })),
      );
      const calls: { name: string; arguments: Record<string, string> }[] = Array.from(
        { length: random(7) },
        () =>
          random(2) === 0
            ? { name: "verify", arguments: { customer_id: customers[random(2)] as string } }
            : refund(customers[random(2)] as string, orders[random(3)] as string),
      );
      for (const call of calls) conversation.call(call.name, call.arguments);
      const run = Run.fromTrace(policy, traceFromMessages(conversation.messages, policy));
      run.instances.forEach((instance, index) => {
        const values = Object.assign({}, ...instance.bindings.map((binding) => binding.values));
        // What each call is for this instance, written from the policy's \`when\`s by hand.
        const letters = calls.map((call) => {
          const letter = new Set<string>();
          if (call.arguments.customer_id !== values.cid) return letter;
          if (call.name === "verify") letter.add(keyOf("verify"));
          else if (call.arguments.order_id === values.oid) letter.add(keyOf("refund"));
          return letter;
        });
        const description = `${instance.rule.id} for ${JSON.stringify(values)} on ${JSON.stringify(calls)}`;
        assert.equal(run.satisfies(index), holds(instance.rule.formula, letters), description);
      });
    }
  });
});
