import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { tau2Retail } from "../../bench/domains/tau2-retail/index.js";
import { v1Tools } from "../../bench/domains/tau2-shared/tools.js";
import type { MentorError } from "../../src/errors/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";
import {
  assertCheckLoads,
  assertPolicyLintsClean,
  assertReferenceBlocksExplained,
  dataDir,
  errorOf,
  execute,
  referenceWith,
  taskCalling,
} from "./tau2-support.js";

const domain = tau2Retail;
const tasks = domain.tasks({ dataDir });
const writes = domain.writeTools(dataDir);

describe("tau2-retail: tools and tasks", () => {
  test("every tau2 retail tool is implemented; tools both benchmarks have take the same parameters", () => {
    const tools = domain.tools(dataDir);
    assert.equal(tools.length, 16);
    const v1 = v1Tools(join(dataDir, "tau-bench-v1", "retail_tools.json"));
    const shared = tools.filter((tool) => v1.has(tool.function.name));
    // tau2 adds get_item_details; tau-bench v1 had `think` instead.
    assert.deepEqual(
      tools.filter((tool) => !v1.has(tool.function.name)).map((tool) => tool.function.name),
      ["get_item_details"],
    );
    for (const tool of shared) {
      const old = v1.get(tool.function.name)?.function.parameters;
      assert.deepEqual(
        Object.keys(tool.function.parameters?.properties ?? {}).sort(),
        Object.keys(old?.properties ?? {}).sort(),
        tool.function.name,
      );
      assert.deepEqual(tool.function.parameters?.required, old?.required, tool.function.name);
    }
    assert.match(domain.manual(dataDir), /^# Retail agent policy/);
  });

  test("74 train tasks; solvability by the stated rule, with a reason for each unsolvable task", (t) => {
    assert.equal(tasks.length, 74);
    const unsolvable = tasks.filter((task) => !task.solvable);
    for (const task of unsolvable) assert.ok(task.unsolvableReason, task.id);
    for (const task of tasks) {
      assert.ok(task.opening.length > 20, task.id);
      assert.equal(task.reply, "I have told you everything I know; please proceed.");
    }
    t.diagnostic(`tau2-retail: ${tasks.length} train tasks, ${tasks.length - unsolvable.length} solvable`);
    for (const task of unsolvable) t.diagnostic(`not solvable: task ${task.id}: ${task.unsolvableReason}`);
    assert.equal(tasks.length - unsolvable.length, 73);
  });

  test("a task whose opening message lacks the user's identity is not solvable (task file option)", () => {
    const { task } = taskCalling(tasks, "cancel_pending_order");
    assert.equal(task.solvable, true);
    const anonymous = withOpening(task.id, "I want to cancel an order I no longer need.");
    assert.equal(anonymous.solvable, false);
    assert.match(anonymous.unsolvableReason ?? "", /neither the email nor the name and zip of user/);
  });
});

describe("tau2-retail: bad data", () => {
  test("a missing or malformed data file is a MNT_ERR_BENCH_DATA error naming the file and task", () => {
    const missing = join(tmpdir(), "no-such-bench-data");
    assert.throws(
      () => domain.tools(missing),
      (error: MentorError) => error.code === "MNT_ERR_BENCH_DATA" && error.message.includes(missing),
    );
    const directory = mkdtempSync(join(tmpdir(), "tau2-bad-"));
    const file = join(directory, "tasks.json");
    writeFileSync(
      file,
      JSON.stringify([{ id: "x", user_scenario: { instructions: "Hi." }, initial_state: { a: 1 } }]),
    );
    assert.throws(
      () => domain.tasks({ dataDir, tasksFile: file }),
      (error: MentorError) =>
        error.code === "MNT_ERR_BENCH_DATA" &&
        error.message.includes(`${file}: task 0 (id x) has an initial_state`),
    );
    writeFileSync(
      file,
      JSON.stringify([
        { id: "y", user_scenario: { instructions: "Hi." }, evaluation_criteria: { actions: [{ name: 3 }] } },
      ]),
    );
    assert.throws(
      () => domain.tasks({ dataDir, tasksFile: file }),
      /task 0 \(id y\): evaluation_criteria.actions\[0\] needs a name and arguments/,
    );
  });
});

describe("tau2-retail: evaluator (database comparison)", () => {
  test("oracle: the reference actions of every task pass", () => {
    for (const task of tasks) {
      const { environment, run } = execute(domain, task, task.reference ?? []);
      const verdict = domain.evaluate(task, run, environment, dataDir);
      assert.equal(verdict.pass, true, `task ${task.id}: ${verdict.reasons.join("; ")}`);
    }
  });

  test("a missing write fails, naming the record and field it left unchanged", () => {
    const { task, position } = taskCalling(tasks, "cancel_pending_order");
    const orderId = task.reference?.[position]?.arguments.order_id as string;
    const { environment, run } = execute(domain, task, referenceWith(task, position, undefined));
    const verdict = domain.evaluate(task, run, environment, dataDir);
    assert.equal(verdict.pass, false);
    assert.ok(
      verdict.reasons.includes(
        `orders[${JSON.stringify(orderId)}].status: expected "cancelled", found "pending"`,
      ),
      verdict.reasons.join("\n"),
    );
    assert.ok(verdict.reasons.some((reason) => reason.startsWith("missing write: cancel_pending_order(")));
  });

  test("a wrong argument fails, naming the field it changed", () => {
    const { task, position } = taskCalling(tasks, "cancel_pending_order");
    const action = task.reference?.[position] as { name: string; arguments: Record<string, unknown> };
    const other = action.arguments.reason === "no longer needed" ? "ordered by mistake" : "no longer needed";
    const wrong = { name: action.name, arguments: { ...action.arguments, reason: other } };
    const { environment, run } = execute(domain, task, referenceWith(task, position, wrong));
    const verdict = domain.evaluate(task, run, environment, dataDir);
    assert.equal(verdict.pass, false);
    const orderId = JSON.stringify(action.arguments.order_id);
    assert.ok(
      verdict.reasons.includes(
        `orders[${orderId}].cancel_reason: expected ${JSON.stringify(action.arguments.reason)}, found ${JSON.stringify(other)}`,
      ),
      verdict.reasons.join("\n"),
    );
    assert.ok(
      verdict.reasons.some((reason) =>
        reason.startsWith("write not in the reference: cancel_pending_order("),
      ),
    );
  });

  test("an extra write on a read-only task fails: the database must be unchanged", () => {
    const readOnly = tasks.find((task) => !(task.reference ?? []).some((action) => writes.has(action.name)));
    assert.ok(readOnly, "some task's reference makes no write");
    const pending = findOrder("pending");
    const { environment, run } = execute(domain, readOnly, [
      ...(readOnly.reference ?? []),
      { name: "cancel_pending_order", arguments: { order_id: pending, reason: "no longer needed" } },
    ]);
    const verdict = domain.evaluate(readOnly, run, environment, dataDir);
    assert.equal(verdict.pass, false);
    assert.equal(
      verdict.reasons.includes("the reference makes no write, so the database must be unchanged"),
      true,
    );
    assert.ok(
      verdict.reasons.includes(
        `orders[${JSON.stringify(pending)}].status: expected "pending", found "cancelled"`,
      ),
    );
  });

  test("runs do not share writes; the shared database cannot be changed", () => {
    const pending = findOrder("pending");
    const first = domain.freshEnvironment(dataDir);
    const second = domain.freshEnvironment(dataDir);
    assert.equal(
      first.call("cancel_pending_order", { order_id: pending, reason: "ordered by mistake" }).error,
      false,
    );
    const seen = JSON.parse(second.call("get_order_details", { order_id: pending }).output) as {
      status: string;
    };
    assert.equal(seen.status, "pending");
    const shared = (second.state() as { orders: Record<string, { status: string }> }).orders[pending];
    assert.throws(() => {
      (shared as { status: string }).status = "cancelled";
    }, TypeError);
  });
});

describe("tau2-retail: tool errors", () => {
  const environment = () => domain.freshEnvironment(dataDir);

  test("not found, wrong status, bad reason, unknown tool, bad arguments", () => {
    const env = environment();
    const processed = findOrder("processed");
    const delivered = findOrder("delivered");
    const pending = findOrder("pending");
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["get_order_details", { order_id: "#W0000000" }, /order #W0000000 not found/],
      ["find_user_id_by_email", { email: "nobody@example.com" }, /user not found/],
      [
        "cancel_pending_order",
        { order_id: processed, reason: "no longer needed" },
        /is processed; only a pending order/,
      ],
      [
        "cancel_pending_order",
        { order_id: pending, reason: "too expensive" },
        /invalid reason "too expensive"/,
      ],
      [
        "return_delivered_order_items",
        { order_id: pending, item_ids: [], payment_method_id: "x" },
        /is pending; only a delivered/,
      ],
      [
        "return_delivered_order_items",
        { order_id: delivered, item_ids: ["0"], payment_method_id: "nope" },
        /payment method nope not found/,
      ],
      [
        "exchange_delivered_order_items",
        { order_id: delivered, item_ids: ["0"], new_item_ids: ["1"], payment_method_id: "x" },
        /item 0 not found in order/,
      ],
      [
        "modify_pending_order_address",
        { order_id: pending },
        /bad arguments for modify_pending_order_address: missing argument address1/,
      ],
      ["get_order_details", { order_id: 7 }, /order_id must be a string/],
      ["get_order_details", { order_id: pending, extra: 1 }, /unknown argument extra/],
      ["book_flight", {}, /unknown tool book_flight/],
      ["calculate", { expression: "1 / 0" }, /divides by zero/],
      ["calculate", { expression: "process.exit()" }, /invalid characters/],
    ];
    for (const [name, args, expected] of cases) {
      const result = env.call(name, args);
      assert.equal(result.error, true, name);
      assert.match(errorOf(result.output), expected, name);
    }
    assert.equal(env.database.touched().size, 0, "a refused call changes nothing");
  });

  test("insufficient gift card balance and the payment-method rules", () => {
    const env = environment();
    const { orderId, giftCard } = pendingOrderPaidOtherwiseWithPoorGiftCard();
    const poor = env.call("modify_pending_order_payment", { order_id: orderId, payment_method_id: giftCard });
    assert.equal(poor.error, true);
    assert.match(errorOf(poor.output), /insufficient gift card balance/);
    const order = JSON.parse(env.call("get_order_details", { order_id: orderId }).output) as {
      payment_history: { payment_method_id: string }[];
    };
    const original = order.payment_history[0]?.payment_method_id as string;
    const same = env.call("modify_pending_order_payment", { order_id: orderId, payment_method_id: original });
    assert.match(errorOf(same.output), /must differ from the original/);
  });

  test("calculate evaluates + - * / and parentheses, rounded to cents", () => {
    const env = environment();
    assert.equal(env.call("calculate", { expression: "2 * (3 + 4.5) - 1 / 3" }).output, "14.67");
  });
});

describe("tau2-retail: policy", () => {
  test("lints clean and loads in `mentor check`", () => {
    assertPolicyLintsClean(domain.policyPath);
    const conversation = new Conversation([], "Cancel my order.");
    const answer = assertCheckLoads(domain.policyPath, conversation.messages, {
      name: "cancel_pending_order",
      arguments: { order_id: "#W1", reason: "no longer needed" },
    });
    const decide = answer.decide as { verdict: string; violations: { rule: string }[] };
    assert.equal(decide.verdict, "block");
    assert.deepEqual(decide.violations.map((finding) => finding.rule).sort(), ["R1", "R3"]);
  });

  test("reference traces: every block is a lookup the reference omits", (t) => {
    const blocked = assertReferenceBlocksExplained(domain, tasks, (rule) => {
      if (rule === "R1" || rule === "R2")
        return { tool: ["find_user_id_by_email", "find_user_id_by_name_zip"] };
      return { tool: ["get_order_details"], key: "order_id" };
    });
    const blockedTasks = new Set(blocked.map((block) => block.task));
    t.diagnostic(
      `tau2-retail: the policy blocks ${blocked.length} reference calls in ${blockedTasks.size} of ${tasks.length} reference traces, each a missing authentication or order lookup`,
    );
    assert.ok(blockedTasks.size < tasks.length);
  });
});

function findOrder(status: string): string {
  const orders = (domain.freshEnvironment(dataDir).state() as { orders: Record<string, { status: string }> })
    .orders;
  const found = Object.entries(orders).find(([, order]) => order.status === status);
  assert.ok(found, `an order with status ${status}`);
  return found[0];
}

/** A pending order paid by a non-gift-card method whose owner has a gift card that cannot cover it. */
function pendingOrderPaidOtherwiseWithPoorGiftCard(): { orderId: string; giftCard: string } {
  const state = domain.freshEnvironment(dataDir).state() as {
    orders: Record<
      string,
      { status: string; user_id: string; payment_history: { amount: number; payment_method_id: string }[] }
    >;
    users: Record<string, { payment_methods: Record<string, { source: string; balance?: number }> }>;
  };
  for (const [orderId, order] of Object.entries(state.orders)) {
    if (order.status !== "pending") continue;
    const payment = order.payment_history[0];
    if (!payment || payment.payment_method_id.startsWith("gift_card")) continue;
    const methods = state.users[order.user_id]?.payment_methods ?? {};
    const poor = Object.entries(methods).find(
      ([, method]) => method.source === "gift_card" && (method.balance ?? 0) < payment.amount,
    );
    if (poor) return { orderId, giftCard: poor[0] };
  }
  throw new Error("no pending order whose owner has a gift card too poor to pay it");
}

function withOpening(id: string, opening: string) {
  const file = join(dataDir, "tau2", "retail", "tasks.json");
  const directory = mkdtempSync(join(tmpdir(), "tau2-tasks-"));
  const raw = (
    JSON.parse(readFileSync(file, "utf8")) as { id: string; user_scenario: { instructions: unknown } }[]
  )
    .filter((task) => task.id === id)
    .map((task) => ({ ...task, user_scenario: { instructions: opening } }));
  const changed = join(directory, "tasks.json");
  writeFileSync(changed, JSON.stringify(raw));
  const [task] = domain.tasks({ dataDir, tasksFile: changed });
  assert.ok(task);
  return task;
}

describe("tau2-retail: policy decisions on hand-made runs", () => {
  const evaluator = new Evaluator(loadPolicy(domain.policyPath));
  const pending = findOrder("pending");
  const env = domain.freshEnvironment(dataDir);
  const order = JSON.parse(env.call("get_order_details", { order_id: pending }).output) as Value;
  const authenticated = () =>
    new Conversation([], "Cancel my order.").call(
      "find_user_id_by_email",
      { email: "a@example.com" },
      { json: "a_1" },
    );
  const cancel = (reason: string) => ({
    name: "cancel_pending_order",
    arguments: { order_id: pending, reason },
  });

  test("authenticated, status checked, valid reason: allowed", () => {
    const run = authenticated().call("get_order_details", { order_id: pending }, { json: order });
    assert.equal(evaluator.decide(run.messages, cancel("no longer needed")).verdict, "allow");
  });

  test("a reason the manual does not accept is blocked by R4; a failed authentication does not count", () => {
    const run = authenticated().call("get_order_details", { order_id: pending }, { json: order });
    const decision = evaluator.decide(run.messages, cancel("too expensive"));
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["R4"],
    );
    const failed = new Conversation([], "Cancel my order.").call(
      "find_user_id_by_email",
      { email: "a@example.com" },
      { json: { error: "user not found" } },
    );
    const lookup = { name: "get_order_details", arguments: { order_id: pending } };
    assert.deepEqual(
      evaluator.decide(failed.messages, lookup).violations.map((finding) => finding.rule),
      ["R1"],
    );
  });

  test("after a successful item modification the order cannot be cancelled (R7)", () => {
    const run = authenticated()
      .call("get_order_details", { order_id: pending }, { json: order })
      .call(
        "modify_pending_order_items",
        { order_id: pending, item_ids: ["1"], new_item_ids: ["2"], payment_method_id: "paypal_1" },
        { json: { order_id: pending, status: "pending (item modified)" } },
      );
    assert.deepEqual(
      evaluator.decide(run.messages, cancel("no longer needed")).violations.map((finding) => finding.rule),
      ["R7"],
    );
  });
});
