import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { tau2Retail } from "../../bench/domains/tau2-retail/index.js";
import { compareGrounding, countKinds } from "../../bench/domains/tau2-shared/reference-policy.js";
import { v1Tools } from "../../bench/domains/tau2-shared/tools.js";
import type { MentorError } from "../../src/errors/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import type { Value } from "../../src/expression/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { shieldSetsFor } from "../../src/shield/token/index.js";
import { Conversation } from "../support/conversation.js";
import {
  assertCheckLoads,
  assertMentorLintClean,
  assertOracleRunsFinish,
  assertPolicyLintsClean,
  assertReferenceBlocksExplained,
  dataDir,
  errorOf,
  execute,
  groundedCalls,
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
    assert.match(domain.manual(dataDir), /^# Shop assistant policy/);
  });

  test("the tasks' solvability by the stated rule, with a reason for each unsolvable task", (t) => {
    assert.equal(tasks.length, 10);
    const unsolvable = tasks.filter((task) => !task.solvable);
    for (const task of unsolvable) assert.ok(task.unsolvableReason, task.id);
    for (const task of tasks) {
      assert.ok(task.opening.length > 20, task.id);
      assert.equal(task.reply, "I have told you everything I know; please proceed.");
    }
    t.diagnostic(`tau2-retail: ${tasks.length} train tasks, ${tasks.length - unsolvable.length} solvable`);
    for (const task of unsolvable) t.diagnostic(`not solvable: task ${task.id}: ${task.unsolvableReason}`);
    assert.deepEqual(
      unsolvable.map((task) => [task.id, task.unsolvableReason]),
      [
        [
          "new_home_unsaid",
          'reference action 2 (modify_user_address) needs address1 = "48 Elm Street", found neither in the instructions, nor in the user\'s records or the catalogue, nor in an earlier reference output',
        ],
      ],
    );
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
      if (/^R(1[89]|20)m?$/.test(rule)) return { tool: ["get_product_details"] };
      // A payment method the order was not paid with is known from the user's profile.
      if (/^R23[mpr]?$/.test(rule)) return { tool: ["get_user_details"] };
      return { tool: ["get_order_details"], key: "order_id" };
    });
    const blockedTasks = new Set(blocked.map((block) => block.task));
    t.diagnostic(
      `tau2-retail: the policy blocks ${blocked.length} reference calls in ${blockedTasks.size} of ${tasks.length} reference traces, each a missing authentication, order, product or user lookup`,
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
    const decision = evaluator.decide(run.messages, cancel("no longer needed"));
    assert.deepEqual(
      decision.violations.map((finding) => finding.rule),
      ["R7"],
    );
    // Nothing unblocks it: a second modification whose outcome breaks a rule would only take R7 out of the game.
    assert.equal(decision.advice, undefined);
  });

  // What the model wrote on tasks 0–6 at f28ffc2 and 2a72c4f (bench/RESULTS.md, sessions 24 and
  // 25): an order id without its '#', items modified into themselves, a return of no items, item
  // ids the order does not have (the tool description's example id). Each the tool refused or made
  // a change of nothing.
  test("the tool descriptions' rules: an order id starts with '#', new items are not the items, a return names some, the items are the order's (each as often as it holds it), the new ones its products' variants, position by position, paid by a method the user has (R16, R15, R15b, R12r, R17, R18, R20, R23)", () => {
    const productLookup = (run: Conversation, productId: string) =>
      run.call(
        "get_product_details",
        { product_id: productId },
        { json: JSON.parse(env.call("get_product_details", { product_id: productId }).output) as Value },
      );
    const seen = productLookup(
      authenticated().call("get_order_details", { order_id: pending }, { json: order }),
      "1000000001",
    );
    const rulesOf = (run: Conversation, name: string, args: Record<string, Value>) =>
      evaluator.decide(run.messages, { name, arguments: args }).violations.map((finding) => finding.rule);
    const itemOf = (details: Value) =>
      (details as { items: { item_id: string }[] }).items[0]?.item_id as string;
    assert.deepEqual(rulesOf(authenticated(), "get_order_details", { order_id: pending.slice(1) }), ["R16"]);
    const paid = (order as { payment_history: { payment_method_id: string }[] }).payment_history[0]
      ?.payment_method_id as string;
    const modify = { order_id: pending, item_ids: [itemOf(order)], payment_method_id: paid };
    // Into itself: R15b, and R18m (an item the order holds is no new item).
    assert.deepEqual(
      rulesOf(seen, "modify_pending_order_items", { ...modify, new_item_ids: [itemOf(order)] }),
      ["R15b", "R18m"],
    );
    assert.deepEqual(
      rulesOf(seen, "modify_pending_order_items", { ...modify, new_item_ids: ["2000000012"] }),
      [],
    );
    // A payment method the order was not paid with and no profile looked up lists: R23m.
    assert.deepEqual(
      rulesOf(seen, "modify_pending_order_items", {
        ...modify,
        new_item_ids: ["2000000012"],
        payment_method_id: "gift_card_0000000",
      }),
      ["R23m"],
    );
    // Not available, not a variant of the product looked up.
    assert.deepEqual(
      rulesOf(seen, "modify_pending_order_items", { ...modify, new_item_ids: ["2000000013"] }),
      ["R18m"],
    );
    // No variant at all: nor of the product of the item at its position (R20m).
    assert.deepEqual(rulesOf(seen, "modify_pending_order_items", { ...modify, new_item_ids: ["2"] }), [
      "R18m",
      "R20m",
    ]);
    assert.deepEqual(
      rulesOf(seen, "modify_pending_order_items", {
        ...modify,
        item_ids: ["1008292230"],
        new_item_ids: ["2000000012"],
      }),
      ["R17m", "R20m"],
    );
    const delivered = findOrder("delivered");
    const deliveredOrder = JSON.parse(env.call("get_order_details", { order_id: delivered }).output) as Value;
    const seenDelivered = productLookup(
      authenticated().call("get_order_details", { order_id: delivered }, { json: deliveredOrder }),
      "1000000002",
    );
    const payment = (deliveredOrder as { payment_history: { payment_method_id: string }[] })
      .payment_history[0]?.payment_method_id as string;
    const item = itemOf(deliveredOrder);
    const exchange = { order_id: delivered, item_ids: [item], payment_method_id: payment };
    assert.deepEqual(
      rulesOf(seenDelivered, "exchange_delivered_order_items", { ...exchange, new_item_ids: [item] }),
      ["R15", "R18"],
    );
    assert.deepEqual(
      rulesOf(seenDelivered, "exchange_delivered_order_items", { ...exchange, new_item_ids: ["2000000022"] }),
      [],
    );
    assert.deepEqual(
      rulesOf(seenDelivered, "exchange_delivered_order_items", {
        ...exchange,
        item_ids: [item, "1"],
        new_item_ids: ["2000000022", "2000000023"],
      }),
      ["R17", "R20"],
    );
    // The order's item twice (it holds it once): R17; its new item in two positions is no fault.
    assert.deepEqual(
      rulesOf(seenDelivered, "exchange_delivered_order_items", {
        ...exchange,
        item_ids: [item, item],
        new_item_ids: ["2000000022", "2000000022"],
      }),
      ["R17"],
    );
    // The order's other item, whose product (1000000003) was not looked up: R19, and its lookup advised.
    const other = (deliveredOrder as { items: { item_id: string }[] }).items[1]?.item_id as string;
    const twoItems = evaluator.decide(seenDelivered.messages, {
      name: "exchange_delivered_order_items",
      arguments: { ...exchange, item_ids: [item, other], new_item_ids: ["2000000022", "2000000023"] },
    });
    assert.deepEqual(
      twoItems.violations.map((finding) => finding.rule),
      ["R19", "R20"],
    );
    assert.deepEqual(twoItems.advice?.call, {
      name: "get_product_details",
      arguments: { product_id: "1000000003" },
    });
    const back = { order_id: delivered, payment_method_id: payment };
    assert.deepEqual(rulesOf(seenDelivered, "return_delivered_order_items", { ...back, item_ids: [] }), [
      "R12r",
    ]);
    assert.deepEqual(
      rulesOf(seenDelivered, "return_delivered_order_items", { ...back, item_ids: [item] }),
      [],
    );
    // The order holds the item once.
    assert.deepEqual(
      rulesOf(seenDelivered, "return_delivered_order_items", { ...back, item_ids: [item, item] }),
      ["R17r"],
    );
    assert.deepEqual(rulesOf(seenDelivered, "return_delivered_order_items", { ...back, item_ids: ["1"] }), [
      "R17r",
    ]);
  });
  test("the items and options the opening names: changed items are of the products it names, new items change options to values it names where any variant does (R21, R21r, R22)", () => {
    const delivered = "#W5000002";
    const deliveredOrder = JSON.parse(env.call("get_order_details", { order_id: delivered }).output) as Value;
    const bottle = JSON.parse(env.call("get_product_details", { product_id: "1000000002" }).output) as Value;
    const backpack = JSON.parse(
      env.call("get_product_details", { product_id: "1000000003" }).output,
    ) as Value;
    const payment = (deliveredOrder as { payment_history: { payment_method_id: string }[] })
      .payment_history[0]?.payment_method_id as string;
    const looked = (text: string) =>
      new Conversation([{ name: "opening", arguments: { text } }], text)
        .call("find_user_id_by_email", { email: "a@example.com" }, { json: "a_1" })
        .call("get_order_details", { order_id: delivered }, { json: deliveredOrder })
        .call("get_product_details", { product_id: "1000000002" }, { json: bottle })
        .call("get_product_details", { product_id: "1000000003" }, { json: backpack });
    const exchange = (item_ids: string[], new_item_ids: string[]) => ({
      name: "exchange_delivered_order_items",
      arguments: { order_id: delivered, item_ids, new_item_ids, payment_method_id: payment },
    });
    const rulesOf = (run: Conversation, call: { name: string; arguments: Record<string, Value> }) =>
      evaluator.decide(run.messages, call).violations.map((finding) => finding.rule);
    // The bottle is 500ml and green; its variants: 750ml green, 750ml grey. The backpack is small and navy.
    const grey = looked("Please exchange the water bottles of order #W5000002 for a grey one.");
    assert.deepEqual(rulesOf(grey, exchange(["2000000031"], ["2000000032"])), ["R21"]);
    // The green one changes no option to a value the opening names, and a grey one does.
    assert.deepEqual(rulesOf(grey, exchange(["2000000021"], ["2000000022"])), ["R22"]);
    assert.deepEqual(rulesOf(grey, exchange(["2000000021"], ["2000000023"])), []);
    assert.deepEqual(
      rulesOf(grey, {
        name: "return_delivered_order_items",
        arguments: { order_id: delivered, item_ids: ["2000000031"], payment_method_id: payment },
      }),
      ["R21r"],
    );
    // The prompt shield's advice: the same call, its lists kept to what the opening asks.
    const repaired = (call: { name: string; arguments: Record<string, Value> }) =>
      evaluator.decide(grey.messages, call).advice;
    assert.deepEqual(repaired(exchange(["2000000031", "2000000021"], ["2000000032", "2000000022"])), {
      kind: "repair",
      call: exchange(["2000000021"], ["2000000023"]),
    });
    assert.deepEqual(repaired(exchange(["2000000021"], ["2000000022"])), {
      kind: "repair",
      call: exchange(["2000000021"], ["2000000023"]),
    });
    // The token shield's masks: the bottle only, and only into the grey one.
    const limits = (run: Conversation, argument: string) =>
      evaluator
        .next(run.messages)
        .arguments.find(
          (entry) => entry.tool === "exchange_delivered_order_items" && entry.argument === argument,
        )?.limits;
    assert.deepEqual(limits(grey, "item_ids")?.itemsOneOf, ["2000000021"]);
    assert.ok(
      limits(grey, "new_item_ids")?.itemsPaired?.groups.some(
        (group) =>
          group.includes("2000000021") && group.includes("2000000023") && !group.includes("2000000022"),
      ),
    );
    // An opening that names no product of the order, or a value no variant takes, or all the
    // items: the other rules decide.
    for (const text of [
      "Please exchange the items of order #W5000002 for bigger ones.",
      "Please exchange everything except the receipt in order #W5000002.",
    ]) {
      assert.deepEqual(rulesOf(looked(text), exchange(["2000000031"], ["2000000032"])), [], text);
      assert.deepEqual(rulesOf(looked(text), exchange(["2000000021"], ["2000000022"])), [], text);
    }
    // Without the opening (a run grounded without it), the same.
    const unnamed = new Conversation([], "Exchange.")
      .call("find_user_id_by_email", { email: "a@example.com" }, { json: "a_1" })
      .call("get_order_details", { order_id: delivered }, { json: deliveredOrder })
      .call("get_product_details", { product_id: "1000000002" }, { json: bottle });
    assert.deepEqual(rulesOf(unnamed, exchange(["2000000021"], ["2000000022"])), []);
  });
});

describe("tau2-retail: requests (task grounding) and duties", () => {
  const policy = loadPolicy(domain.policyPath);
  const evaluator = new Evaluator(policy);
  const labeler = new Labeler(policy, { only: "rules" });
  // The requests; every message also grounds `opening`, the message as written (R21, R22).
  const ground = async (text: string) =>
    (await groundedCalls(labeler)(text)).filter((call) => !call.startsWith("opening("));

  test("`mentor lint`: no error and no warning, with the duties and the solver's constraint checks", async () => {
    await assertMentorLintClean(domain.policyPath);
  });

  test("oracle grounding: one request per successful reference write, on the order it writes", () => {
    const kinds: Record<string, string> = {
      cancel_pending_order: "request_cancel",
      return_delivered_order_items: "request_return",
      exchange_delivered_order_items: "request_item_change",
      modify_pending_order_items: "request_item_change",
      modify_pending_order_address: "request_address_change",
      modify_pending_order_payment: "request_payment_change",
    };
    for (const task of tasks) {
      const { run } = execute(domain, task, task.reference ?? []);
      const expected = new Set(
        run
          .filter((call) => !call.error && kinds[call.name])
          .map((call) => `${kinds[call.name]} ${call.arguments.order_id}`),
      );
      const grounding = (domain.grounding?.(task) ?? []).filter((call) => call.name !== "opening");
      const orders = new Set(
        grounding
          .filter((call) => call.name !== "request_user_address_change")
          .map((call) => `${call.name} ${call.arguments.order_id}`),
      );
      assert.deepEqual([...orders].sort(), [...expected].sort(), `task ${task.id}`);
      for (const call of grounding.filter((one) => one.name === "request_cancel")) {
        assert.ok(["no longer needed", "ordered by mistake"].includes(call.arguments.reason as string));
      }
    }
    // A reference write that fails on a fresh database (an exchange a gift card cannot pay) asks nothing.
    const failing = tasks.find((task) => {
      const { run } = execute(domain, task, task.reference ?? []);
      return (
        run.some((call) => call.error && writes.has(call.name)) &&
        !run.some((call) => !call.error && writes.has(call.name))
      );
    });
    assert.ok(failing, "a task whose only reference write fails");
    assert.deepEqual(domain.grounding?.(failing), [
      { name: "opening", arguments: { text: failing.opening } },
    ]);
  });

  test("the patterns ground the openings that write order ids; each id grounded is written in the opening", async (t) => {
    const comparisons = await compareGrounding(domain, tasks);
    const counts = countKinds(comparisons);
    const grounded = comparisons.filter((comparison) => comparison.patterns.length > 0).length;
    t.diagnostic(
      `tau2-retail: the patterns ground ${grounded} of ${tasks.length} openings; ${counts.agree} agree with the oracle (${comparisons.filter((one) => one.kind === "agree" && one.oracle.length > 0).length} with requests, the others none on both sides), ${counts.partial} partly, ${counts.extra} with a request the oracle lacks, ${counts.none} ground nothing the oracle grounds`,
    );
    for (const comparison of comparisons.filter((one) => one.kind !== "agree" && one.patterns.length > 0))
      t.diagnostic(
        `task ${comparison.task}: patterns ${JSON.stringify(comparison.patterns)}, oracle ${JSON.stringify(comparison.oracle)}`,
      );
    assert.deepEqual(counts, { agree: 7, partial: 1, extra: 1, none: 1 });
    for (const comparison of comparisons) {
      const opening = tasks.find((task) => task.id === comparison.task)?.opening ?? "";
      for (const call of comparison.patterns) {
        const id = (call.arguments.order_id ?? call.arguments.user_id) as string;
        assert.ok(opening.includes(id), `task ${comparison.task}: ${id} is not in the opening`);
      }
    }
  });

  test("patterns: the ids in the request's clause, lists, other requests, negations, an order named as a source", async () => {
    assert.deepEqual(
      await ground("Please cancel orders #W1111111 and #W2222222, I ordered them by mistake."),
      ["request_cancel(#W1111111, ordered by mistake)", "request_cancel(#W2222222, ordered by mistake)"],
    );
    assert.deepEqual(await groundedCalls(labeler)("Return #W1111111, it's broken."), [
      "opening(Return #W1111111, it's broken.)",
      "request_return(#W1111111)",
    ]);
    assert.deepEqual(await ground("Cancel #W1111111 and return #W2222222."), [
      "request_cancel(#W1111111, unstated)",
      "request_return(#W2222222)",
    ]);
    assert.deepEqual(await ground("For order #W1111111, change the address to the one of order #W2222222."), [
      "request_address_change(#W1111111)",
    ]);
    assert.deepEqual(await ground("For #W1111111, you want to exchange the lamp for a brighter one."), [
      "request_item_change(#W1111111)",
    ]);
    assert.deepEqual(await ground("Switch the payment method of #W1111111 to my PayPal."), [
      "request_payment_change(#W1111111)",
    ]);
    assert.deepEqual(await ground("Please update my default address; my user id is ann_lee_1234."), [
      "request_user_address_change(ann_lee_1234)",
    ]);
    assert.deepEqual(
      await ground("I do not want to cancel #W1111111, just tell me its tracking number."),
      [],
    );
    assert.deepEqual(await ground("Undo cancelling #W1111111."), []);
    assert.deepEqual(await ground("What is the tracking number of my cancelled order #W1111111?"), []);
    assert.deepEqual(await ground("Return the water bottle I received last week."), []);
  });

  test("reference runs with the oracle grounding end with done allowed; without their writes done is refused", () => {
    const verdicts = assertOracleRunsFinish(domain, tasks);
    assert.equal(verdicts.length, 9);
  });

  const order = (status: string): Value => ({ order_id: "#W1111111", status, payment_history: [] });
  const requested = (name: string, args: Record<string, Value> = {}) =>
    new Conversation([{ name, arguments: { order_id: "#W1111111", ...args } }], "…").call(
      "find_user_id_by_email",
      { email: "a@example.com" },
      { json: "a_1" },
    );
  const done = (conversation: Conversation) => evaluator.next(conversation.messages).done.allowed;
  const lookup = (conversation: Conversation, status: string) =>
    conversation.call("get_order_details", { order_id: "#W1111111" }, { json: order(status) });

  test("a cancellation is owed until done, unless the order is seen not pending or its items were modified (R13_cancel)", () => {
    const asked = () => requested("request_cancel", { reason: "unstated" });
    assert.equal(done(asked()), false);
    const open = evaluator.next(asked().messages).openDuties;
    // The way asked for is the cancellation; the order's lookup is the step that unblocks it.
    assert.deepEqual(
      open.map((duty) => [duty.rule, duty.binding, duty.fulfil?.name]),
      [["R13_cancel", 'cancellation(co="#W1111111")', "get_order_details"]],
    );
    assert.equal(done(lookup(asked(), "pending")), false);
    assert.equal(done(lookup(asked(), "delivered")), true);
    const unknown = asked().call(
      "get_order_details",
      { order_id: "#W1111111" },
      { json: { error: "not found" } },
    );
    assert.equal(done(unknown), true);
    const cancelled = lookup(asked(), "pending").call(
      "cancel_pending_order",
      { order_id: "#W1111111", reason: "no longer needed" },
      { json: order("cancelled") },
    );
    assert.equal(done(cancelled), true);
    const refused = lookup(asked(), "pending").call(
      "cancel_pending_order",
      { order_id: "#W1111111", reason: "no longer needed" },
      { json: { error: "something went wrong" } },
    );
    assert.equal(done(refused), false);
    const modified = lookup(asked(), "pending").call(
      "modify_pending_order_items",
      { order_id: "#W1111111", item_ids: ["1"], new_item_ids: ["2"], payment_method_id: "paypal_1" },
      { json: order("pending (item modified)") },
    );
    assert.equal(done(modified), true);
    // Another order's cancellation does not count.
    const other = asked()
      .call(
        "get_order_details",
        { order_id: "#W2222222" },
        { json: { ...(order("pending") as object), order_id: "#W2222222" } },
      )
      .call(
        "cancel_pending_order",
        { order_id: "#W2222222", reason: "no longer needed" },
        { json: { order_id: "#W2222222", status: "cancelled" } },
      );
    assert.equal(done(other), false);
  });

  test("the requested order's change before its lookup: unsafe in `next` as in `decide`, the lookup advised and steered to", () => {
    // The change binds the order itself (R11 and R5 are about `order`, which the request does not
    // bind): the game's candidates do not know it, `decide` does, and `next` must agree with it.
    const asked = requested("request_item_change");
    const next = evaluator.next(asked.messages);
    const classOf = (name: string) => next.calls.find((entry) => entry.call.name === name)?.class;
    assert.equal(classOf("exchange_delivered_order_items"), "unsafe");
    assert.equal(classOf("modify_pending_order_items"), "unsafe");
    assert.equal(classOf("get_order_details"), "progressing");
    const lookupFirst = { name: "get_order_details", arguments: { order_id: "#W1111111" } };
    for (const order_id of ["#W1111111", "W1111111"]) {
      const exchange = {
        name: "exchange_delivered_order_items",
        arguments: { order_id, item_ids: ["1"], new_item_ids: ["2"], payment_method_id: "paypal_1" },
      };
      const decision = evaluator.decide(asked.messages, exchange);
      // R18, R19, R20: no lookup lists the order's items or their variants yet; R23 nor its payments.
      assert.deepEqual(
        decision.violations.map((finding) => finding.rule),
        ["R11", "R18", "R19", "R20", "R23"],
      );
      // An id the request did not write is still advised the requested order's lookup.
      assert.deepEqual(decision.advice?.call, lookupFirst, order_id);
    }
    const sets = shieldSetsFor(evaluator, asked.messages);
    assert.deepEqual(
      sets.redirects?.find((redirect) => redirect.tool === "exchange_delivered_order_items"),
      {
        tool: "exchange_delivered_order_items",
        to: "get_order_details",
        arguments: { order_id: "#W1111111" },
      },
    );
    // The duty's fulfil (the exchange) is unsafe before the lookup: an end of the turn is steered
    // to the lookup that unblocks it, not left to a call the model picks with no advice.
    assert.deepEqual(sets.doneRedirect, {
      to: "get_order_details",
      arguments: { order_id: "#W1111111" },
    });
    assert.deepEqual(shieldSetsFor(evaluator, lookup(asked, "delivered").messages).doneRedirect, {
      to: "exchange_delivered_order_items",
      arguments: { order_id: "#W1111111" },
    });
  });

  test("a return is owed unless the order is seen not delivered; an item change unless neither pending nor delivered", () => {
    assert.equal(done(lookup(requested("request_return"), "delivered")), false);
    assert.equal(done(lookup(requested("request_return"), "pending")), true);
    const returned = lookup(requested("request_return"), "delivered").call(
      "return_delivered_order_items",
      { order_id: "#W1111111", item_ids: ["1"], payment_method_id: "paypal_1" },
      { json: order("return requested") },
    );
    assert.equal(done(returned), true);
    assert.equal(done(lookup(requested("request_item_change"), "pending")), false);
    assert.equal(done(lookup(requested("request_item_change"), "delivered")), false);
    assert.equal(done(lookup(requested("request_item_change"), "processed")), true);
    const exchanged = lookup(requested("request_item_change"), "delivered").call(
      "exchange_delivered_order_items",
      { order_id: "#W1111111", item_ids: ["1"], new_item_ids: ["2"], payment_method_id: "paypal_1" },
      { json: order("exchange requested") },
    );
    assert.equal(done(exchanged), true);
    assert.equal(done(lookup(requested("request_address_change"), "pending")), false);
    assert.equal(done(lookup(requested("request_address_change"), "processed")), true);
    assert.equal(done(lookup(requested("request_payment_change"), "delivered")), true);
  });

  test("the cancellation reason the user gave is the one to use (R4_reason); an unstated one leaves both", () => {
    const cancel = (reason: string) => ({
      name: "cancel_pending_order",
      arguments: { order_id: "#W1111111", reason },
    });
    const stated = lookup(requested("request_cancel", { reason: "ordered by mistake" }), "pending");
    assert.deepEqual(
      evaluator.decide(stated.messages, cancel("no longer needed")).violations.map((finding) => finding.rule),
      ["R4_reason"],
    );
    assert.equal(evaluator.decide(stated.messages, cancel("ordered by mistake")).verdict, "allow");
    const unstated = lookup(requested("request_cancel", { reason: "unstated" }), "pending");
    assert.equal(evaluator.decide(unstated.messages, cancel("no longer needed")).verdict, "allow");
    // Another order's cancellation is not bound by this order's reason.
    const other = stated.call(
      "get_order_details",
      { order_id: "#W2222222" },
      { json: { ...(order("pending") as object), order_id: "#W2222222" } },
    );
    assert.equal(
      evaluator.decide(other.messages, {
        name: "cancel_pending_order",
        arguments: { order_id: "#W2222222", reason: "no longer needed" },
      }).verdict,
      "allow",
    );
  });
});
