import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Evaluator } from "../../src/evaluator/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy, policyForSystem } from "../../src/policy/index.js";

// No model. The SOPBench policies written from the library, online market and university SOPs:
// each lints clean and agrees with its suite of labelled conversations (policies/<id>/suite.json).
const mentor = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const policies = fileURLToPath(new URL("../../../policies/", import.meta.url));

function run(args: string[]): { stdout: string; status: number | null } {
  const result = spawnSync(process.execPath, [mentor, ...args], { encoding: "utf8" });
  return { stdout: result.stdout, status: result.status };
}

interface Suite {
  conversations: { id: string; expected: { compliant: boolean; sentence?: string } }[];
}

for (const id of ["sopbench-library", "sopbench-online_market", "sopbench-university"]) {
  const policy = join(policies, id, "policy.yaml");
  const suiteFile = join(policies, id, "suite.json");
  const suite = JSON.parse(readFileSync(suiteFile, "utf8")) as Suite;

  describe(`policies/${id}`, () => {
    test("lints clean", () => {
      const result = run(["lint", policy]);
      assert.equal(result.status, 0, result.stdout);
      assert.match(result.stdout, /0 error\(s\), 0 warning\(s\)/);
    });

    test("its suite has compliant and violating conversations, and the policy agrees with every label", () => {
      const verdicts = suite.conversations.map((conversation) => conversation.expected.compliant);
      assert.ok(suite.conversations.length >= 6);
      assert.ok(verdicts.includes(true) && verdicts.includes(false));
      const result = run(["verify", "--policy", policy, "--suite", suiteFile]);
      const answer = JSON.parse(result.stdout) as { agree: number; disagreements: unknown[] };
      assert.deepEqual(answer.disagreements, []);
      assert.equal(answer.agree, suite.conversations.length);
      assert.equal(result.status, 0);
    });
  });
}

// The university policy reads its figures and clauses from the rendered SOP: financial aid's
// minimum GPA from apply_financial_aid's section, and whether enroll_course states a condition
// the policy cannot read (then enrolling is refused).
describe("policies/sopbench-university reads the system prompt", () => {
  const base = loadPolicy(join(policies, "sopbench-university", "policy.yaml"));
  const prompt = (aid: string, enroll: string) =>
    `### Actions with Constraints:\n\n* enroll_course:\nALL of these conditions must be met:\n${enroll}\n\n* apply_financial_aid:\nALL of these conditions must be met:\n${aid}\n`;
  test("the defaults without a prompt, the prompt's figures and clauses with one", () => {
    assert.equal(base.settings.values.aid_min_gpa, 2);
    assert.equal(base.settings.values.unreadable_enroll_course, true);
    const read = policyForSystem(
      base,
      prompt(
        '• The student "username" **MUST HAVE** a minimum GPA of 3.0 to qualify for financial aid',
        "• The user is logged in previously with the correct credentials to perform this action.",
      ),
    );
    assert.equal(read.settings.values.aid_min_gpa, 3);
    assert.equal(read.settings.values.unreadable_enroll_course, false);
    assert.equal(read.settings.values.income_apply_financial_aid, false);
  });
});

// The library and online market policies read each task's SOP from the system prompt (settings):
// a suite conversation whose rendered prompt switches a clause off or changes a figure is
// compliant with its prompt (the suite above) and breaks the default SOP without it.
const withoutPrompt: { id: string; conversation: string; sentence: string }[] = [
  { id: "sopbench-library", conversation: "borrow-below-a-rendered-limit-of-3", sentence: "L5" },
  { id: "sopbench-library", conversation: "borrow-restricted-where-the-sop-leaves-it-out", sentence: "L4" },
  { id: "sopbench-library", conversation: "reserve-within-a-rendered-cap-of-5", sentence: "L12" },
  {
    id: "sopbench-online_market",
    conversation: "place-order-suspended-where-the-sop-leaves-it-out",
    sentence: "M6",
  },
  { id: "sopbench-online_market", conversation: "review-where-the-sop-asks-only-a-login", sentence: "M8" },
];

describe("SOPBench settings from the rendered SOP", () => {
  for (const { id, conversation, sentence } of withoutPrompt) {
    test(`${id}: ${conversation} breaks ${sentence} without its system prompt`, () => {
      const suite = JSON.parse(readFileSync(join(policies, id, "suite.json"), "utf8")) as {
        manual: unknown;
        conversations: { id: string; messages: { role: string }[] }[];
      };
      const found = suite.conversations.find((entry) => entry.id === conversation);
      assert.ok(found, `${conversation} is in ${id}/suite.json`);
      assert.equal(found.messages[0]?.role, "system");
      const dir = mkdtempSync(join(tmpdir(), "mentor-sopbench-settings-"));
      try {
        const file = join(dir, "suite.json");
        const stripped = {
          ...found,
          messages: found.messages.slice(1),
          expected: { compliant: false, sentence },
        };
        writeFileSync(file, JSON.stringify({ manual: suite.manual, conversations: [stripped] }));
        const result = run(["verify", "--policy", join(policies, id, "policy.yaml"), "--suite", file]);
        const answer = JSON.parse(result.stdout) as { agree: number; disagreements: unknown[] };
        assert.deepEqual(answer.disagreements, []);
        assert.equal(answer.agree, 1);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

/** An assistant message with one call and the tool's answer, as SOPBench's loop sends them. */
function called(id: string, name: string, args: Record<string, unknown>, content: string) {
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    },
    { role: "tool", tool_call_id: id, content },
  ];
}

// A cancellation is blocked by three rules (the login, the order checked to be the user's, its
// status read) and its duty names only the order. Each step is the duty's next call and the one
// progressing tool, through to the end. Before, the order's lookups were judged without the user
// (blocked for nobody's login), no step was found, the duty's next call was the blocked
// cancellation itself and nothing progressed: the model checked the user's name ten times to the
// call limit (SOPBench online_market cancel_order/0, session 22).
describe("policies/sopbench-online_market leads an asked cancellation step by step", () => {
  test("login, order check, order details, cancellation, then the end", async () => {
    const policy = loadPolicy(join(policies, "sopbench-online_market", "policy.yaml"));
    // The searches' decision bound shapes the answers; their clock (a backstop) is lifted so that
    // a loaded machine gets the same ones.
    const evaluator = new Evaluator(policy, { search: { maxMs: Number.POSITIVE_INFINITY } });
    const labeler = new Labeler(policy);
    const messages: Record<string, unknown>[] = [
      {
        role: "user",
        content:
          'Hello! I would like to cancel an order. My username is "alice", my password is "sadfnjskdanfksadjnfl", and the order ID I wish to cancel is "ORD-2".',
      },
    ];
    const details =
      "{'order_id': 'ORD-2', 'items': [{'product_id': 'Headphones', 'quantity': 1, 'price': 100.0}], 'status': 'Processing', 'total_amount': 100.0, 'order_placed_date': '2024-10-01', 'number_of_exchanges': 0, 'coupons_used': []}";
    const user = { username: "alice" };
    const order = { order_id: "ORD-2", username: "alice" };
    const steps = [
      { name: "login_user", arguments: { ...user, password: "sadfnjskdanfksadjnfl" }, output: "True" },
      { name: "internal_check_order_exist", arguments: order, output: "True" },
      { name: "get_order_details", arguments: order, output: details },
      { name: "cancel_order", arguments: order, output: "True" },
    ];
    for (const [index, step] of steps.entries()) {
      const next = evaluator.next((await labeler.ground(messages)).messages);
      assert.deepEqual(next.openDuties[0]?.fulfil, { name: step.name, arguments: step.arguments }, step.name);
      assert.deepEqual(
        next.tools.filter((tool) => tool.class === "progressing").map((tool) => tool.name),
        [step.name],
      );
      messages.push(...called(`call_${index}`, step.name, step.arguments, step.output));
    }
    const end = evaluator.next((await labeler.ground(messages)).messages);
    assert.deepEqual(end.openDuties, []);
    assert.equal(end.done.allowed, true);
  });
});

// An asked exchange, blocked by the login and the order's and the old product's lookups, whose
// duty the interaction time would excuse (the policy cannot compute the exchange period). After the
// name check, the new product's details and the order check, the step is the login. Before, the
// exchange's user was left unfilled (no value allows the call while a constraint on the order's
// details blocks it too), no step was found, and the excuse was the progressing call: the model read
// the time and ended without the exchange (SOPBench online_market exchange_product/0, session 23).
describe("policies/sopbench-online_market leads an asked exchange, not its excuse", () => {
  test("the login is the step and the time read is not progress", async () => {
    const policy = loadPolicy(join(policies, "sopbench-online_market", "policy.yaml"));
    const evaluator = new Evaluator(policy, { search: { maxMs: Number.POSITIVE_INFINITY } });
    const messages = [
      {
        role: "user",
        content:
          "Hello! I would like to exchange a product. Username: alice - Password: sadfnjskdanfksadjnfl - Order ID: ORD-2 - Old Product ID: Headphones - New Product ID: Mouse - Quantity: 1",
      },
      ...called("call_0", "internal_check_username_exist", { username: "alice" }, "True"),
      ...called(
        "call_1",
        "get_product_details",
        { product_id: "Mouse" },
        "{'price': 50.0, 'stock': 30, 'description': 'Wireless mouse', 'reviews': [], 'average_rating': 0}",
      ),
      ...called("call_2", "internal_check_order_exist", { username: "alice", order_id: "ORD-2" }, "True"),
    ];
    const next = evaluator.next((await new Labeler(policy).ground(messages)).messages);
    assert.deepEqual(next.openDuties[0]?.fulfil, {
      name: "login_user",
      arguments: { username: "alice", password: "sadfnjskdanfksadjnfl" },
    });
    assert.deepEqual(
      next.tools.filter((tool) => tool.class === "progressing").map((tool) => tool.name),
      ["login_user"],
    );
  });
});
