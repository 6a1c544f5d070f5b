import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Evaluator } from "../../src/evaluator/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { Conversation } from "../support/conversation.js";
import { historyPolicy } from "../support/history-policy.js";

const mentor = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const travel = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-cli-"));
const route = { origin: "Toronto", destination: "Chicago" };

function run(args: string[]): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(process.execPath, [mentor, ...args], { encoding: "utf8" });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

function messagesFile(name: string, conversation: Conversation): string {
  const file = join(directory, name);
  writeFileSync(file, JSON.stringify({ messages: conversation.messages }));
  return file;
}

const task = [{ name: "request_travel", arguments: { ...route, urgent: false } }];

describe("mentor lint / check / verify", () => {
  test("lint: the travel policy is clean; a broken policy lists located problems and exits 2", () => {
    const clean = run(["lint", travel]);
    assert.equal(clean.status, 0);
    assert.match(clean.stdout, /0 error\(s\), 0 warning\(s\)/);
    const broken = join(directory, "broken.yaml");
    writeFileSync(broken, "policy: x\nmanual: {}\ntools: {t: {}}\npropositions: {p: {tool: u}}\n");
    const result = run(["lint", broken]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /MNT_ERR_POLICY_INVALID/);
    assert.match(
      result.stderr,
      /broken\.yaml:4:26 \(propositions\.p\.tool\): proposition p refers to unknown tool u/,
    );
    // --json answers in JSON for a policy that does not load, too.
    const json = run(["lint", broken, "--json"]);
    assert.equal(json.status, 2);
    const answer = JSON.parse(json.stdout) as {
      loaded: boolean;
      problems: { code: string; message: string; location: { line: number } }[];
    };
    assert.equal(answer.loaded, false);
    assert.ok(
      answer.problems.some(
        (problem) => /refers to unknown tool u/.test(problem.message) && problem.location.line === 4,
      ),
      json.stdout,
    );
  });

  test("lint: a pattern with nested quantifiers does not load (exit 2, its file, line and place)", () => {
    const nested = join(directory, "nested.yaml");
    const rule = String.raw`number: '(\d[\d,]*(?:\.\d+)?)\s*(?:km|kms|kilomet(?:er|re)s?)\b', gte: 500`;
    const text = readFileSync(travel, "utf8");
    assert.ok(text.includes(rule));
    writeFileSync(nested, text.replace(rule, String.raw`number: '((?:\d+,?)+)\s*km\b', gte: 500`));
    const line = text.slice(0, text.indexOf(rule)).split("\n").length;
    const result = run(["lint", nested]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, new RegExp(`nested\\.yaml:${line}:\\d+ `));
    assert.match(
      result.stderr,
      /\(tools\.check_distance\.labeler\.rules\[0\]\.number\): at character 2 of the pattern: \(\?:\\d\+,\?\)\+ can match the same text in more than one way/,
    );
  });

  test("lint: constraints that can never hold together are an error (exit 1)", () => {
    const file = join(directory, "bounds.yaml");
    writeFileSync(
      file,
      [
        "policy: bounds",
        "manual: {R1: At most 100., R2: Above 200.}",
        "tools: {refund: {parameters: {amount: number}}}",
        "propositions: {refund: {tool: refund}}",
        "rules: []",
        "constraints:",
        '  - {id: R1, on: refund, require: "a.amount <= 100"}',
        '  - {id: R2, on: refund, require: "a.amount > 200"}',
        "",
      ].join("\n"),
    );
    const result = run(["lint", file]);
    assert.equal(result.status, 1, result.stderr);
    assert.match(
      result.stdout,
      /error \[unsatisfiable-constraints\] constraints R1, R2 on refund can never hold together/,
    );
  });

  test("check: the next answer, and the decision on a proposed call", () => {
    const file = messagesFile("start.json", new Conversation(task));
    const result = run([
      "check",
      "--policy",
      travel,
      "--messages",
      file,
      "--call",
      JSON.stringify({ name: "book_train", arguments: route }),
    ]);
    assert.equal(result.status, 0, result.stderr);
    const output = JSON.parse(result.stdout);
    assert.equal(output.next.done.allowed, false);
    assert.equal(output.decide.verdict, "block");
    assert.deepEqual(output.decide.advice.call, { name: "check_distance", arguments: route });
  });

  test("check and verify refuse a policy with lint errors (exit 2, each error located) unless --allow-lint-errors", () => {
    const vacuous = join(directory, "vacuous.yaml");
    writeFileSync(
      vacuous,
      readFileSync(travel, "utf8").replace(
        / {2}- \{id: P1, .*\n/,
        '  - {id: P1, ltl: "G(false -> O checked(route))"}\n',
      ),
    );
    const file = messagesFile("lint-gate.json", new Conversation(task));
    for (const command of [["check"], ["verify"]]) {
      const refused = run([...command, "--policy", vacuous, "--messages", file]);
      assert.equal(refused.status, 2, refused.stderr);
      assert.match(refused.stderr, /MNT_ERR_POLICY_LINT: .*vacuous\.yaml has 1 lint error\(s\)/);
      assert.match(refused.stderr, /\[vacuous\] rule P1 \(.*vacuous\.yaml:\d+:\d+\) can never be broken/);
      const allowed = run([...command, "--policy", vacuous, "--messages", file, "--allow-lint-errors"]);
      assert.notEqual(allowed.status, 2, allowed.stderr);
      assert.doesNotMatch(allowed.stderr, /MNT_ERR_POLICY_LINT/);
    }
    // serve refuses it before it starts (an upstream, so that no model is loaded).
    const serve = spawnSync(
      process.execPath,
      [mentor, "serve", "--policy", vacuous, "--upstream", "http://127.0.0.1:9/v1", "--port", "0"],
      { encoding: "utf8", timeout: 60_000 },
    );
    assert.equal(serve.status, 2, serve.stderr);
    assert.match(serve.stderr, /MNT_ERR_POLICY_LINT: .*\[vacuous\] rule P1/s);
  });

  test("verify: a compliant run scores 1 and exits 0; a violating one is reported and exits 1", () => {
    const good = new Conversation(task)
      .call("check_distance", route, { label: "short" })
      .call("book_train", route, { json: { status: "confirmed" } });
    const ok = run(["verify", "--policy", travel, "--messages", messagesFile("good.json", good)]);
    assert.equal(ok.status, 0, ok.stderr);
    const report = JSON.parse(ok.stdout);
    assert.equal(report.score, 1);
    assert.equal(report.violated, false);

    const bad = new Conversation(task).call(
      "book_flight",
      { ...route, travel_class: "economy" },
      { json: { status: "confirmed" } },
    );
    const failed = run(["verify", "--policy", travel, "--messages", messagesFile("bad.json", bad)]);
    assert.equal(failed.status, 1);
    const badReport = JSON.parse(failed.stdout);
    assert.equal(badReport.violated, true);
    assert.deepEqual(badReport.calls[0].violations.sort(), ["P1", "P5"]);
    assert.ok(badReport.score < 1);
    const p1 = badReport.rules.find((rule: { rule: string }) => rule.rule === "P1");
    assert.equal(p1.colour, "PERM_VIOL");
  });

  test("verify: a blocked call says why without a broken rule (failClosed) and gives the shield's advice", () => {
    const conversation = new Conversation(task)
      .call("book_flight", { ...route, travel_class: "economy" }, { json: { status: "confirmed" } })
      .call("cancel_everything", {}, { json: { status: "done" } });
    const result = run([
      "verify",
      "--policy",
      travel,
      "--messages",
      messagesFile("undeclared.json", conversation),
    ]);
    assert.equal(result.status, 1, result.stderr);
    const [flight, undeclared] = JSON.parse(result.stdout).calls;
    assert.deepEqual(flight.advice, {
      kind: "prerequisite",
      call: { name: "check_distance", arguments: route },
      unblocks: true,
    });
    assert.equal(flight.failClosed, undefined);
    assert.equal(undeclared.verdict, "block");
    assert.deepEqual(undeclared.violations, []);
    assert.match(undeclared.failClosed, /cancel_everything is not a tool of policy travel/);
  });

  test("verify judges each call as decide did before it was made (constraints read the history before the call)", () => {
    const policyFile = join(directory, "history.yaml");
    writeFileSync(policyFile, historyPolicy);
    const evaluator = new Evaluator(parsePolicy(historyPolicy, policyFile));
    const conversation = new Conversation([
      { name: "request_refund", arguments: { order: "A1", limit: 100 } },
    ])
      .call("lookup", { order: "A1" }, { json: { balance: 80 } })
      .call("check", { order: "A1", amount: 50 }, { json: { ok: true } });
    const decided: string[][] = [];
    for (const [amount, reason] of [
      [30, ""],
      [40, "late"],
      [30, "late"],
      [20, ""],
    ] as const) {
      const proposed = { name: "refund", arguments: { order: "A1", amount, reason } };
      decided.push(evaluator.decide(conversation.messages, proposed).violations.map((found) => found.rule));
      conversation.call("refund", proposed.arguments, { json: { amount } });
    }
    assert.deepEqual(decided, [[], ["H2"], ["H3", "H4"], ["H3", "H5"]]);
    const result = run([
      "verify",
      "--policy",
      policyFile,
      "--messages",
      messagesFile("history.json", conversation),
    ]);
    assert.equal(result.status, 1, result.stderr);
    const calls = JSON.parse(result.stdout).calls as { call: { name: string }; violations: string[] }[];
    assert.deepEqual(
      calls.filter((entry) => entry.call.name === "refund").map((entry) => entry.violations),
      decided,
    );
  });

  test("bad messages name the message and field", () => {
    const file = join(directory, "broken-messages.json");
    writeFileSync(
      file,
      JSON.stringify([
        { role: "user", content: "hi" },
        {
          role: "assistant",
          tool_calls: [{ id: "a", type: "function", function: { name: "book_train", arguments: "{oops" } }],
        },
      ]),
    );
    const result = run(["check", "--policy", travel, "--messages", file]);
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /MNT_ERR_MESSAGES: messages\[1\]\.tool_calls\[0\]\.function\.arguments is not valid JSON/,
    );
  });
});

describe("verify reads what the run remembers besides its calls", () => {
  test("an approved ask call is judged allowed, and a refused call is not a made call", () => {
    const ops = fileURLToPath(new URL("../../../test/evaluator/fixtures/ops.yaml", import.meta.url));
    const pay = { name: "pay", arguments: { amount: 20 } };
    const messages = [
      { role: "user", content: "Pay." },
      { role: "user", content: "Yes, pay 20.", mentor: { approve: pay } },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "pay", arguments: '{"amount":20}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: '{"paid":true}' },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c2", type: "function", function: { name: "deploy", arguments: "{}" } }],
      },
      {
        role: "tool",
        tool_call_id: "c2",
        content: "[SHIELD] Blocked deploy(). Rule S2: Run the tests before every deploy.",
      },
    ];
    const file = join(directory, "approved.json");
    writeFileSync(file, JSON.stringify(messages));
    const result = run(["verify", "--policy", ops, "--messages", file]);
    const report = JSON.parse(result.stdout) as { calls: { call: { name: string }; verdict: string }[] };
    assert.deepEqual(
      report.calls.map((entry) => [entry.call.name, entry.verdict]),
      [["pay", "allow"]],
    );
  });
});

describe("check and verify ground plain conversations", () => {
  test("a plain request gets its duty: finishing without the booking is not compliant", () => {
    const plain = join(directory, "plain.json");
    writeFileSync(
      plain,
      JSON.stringify([
        { role: "user", content: "Book me a train from Toronto to Chicago." },
        { role: "assistant", content: "Your trip is approved." },
      ]),
    );
    const verified = run(["verify", "--policy", travel, "--messages", plain]);
    assert.equal(verified.status, 1, verified.stderr);
    const report = JSON.parse(verified.stdout) as {
      violated: boolean;
      rules: { rule: string; satisfied: boolean; binding: unknown[] }[];
      ungrounded: unknown[];
    };
    assert.equal(report.violated, true);
    const duty = report.rules.find((rule) => rule.rule === "P4");
    assert.deepEqual(duty?.binding, [{ x: "Toronto", y: "Chicago" }]);
    assert.equal(duty?.satisfied, false);
    assert.deepEqual(report.ungrounded, []);
    const checked = JSON.parse(run(["check", "--policy", travel, "--messages", plain]).stdout) as {
      next: { done: { allowed: boolean } };
    };
    assert.equal(checked.next.done.allowed, false);
  });

  test("what cannot be grounded is reported; --strict-grounding makes it an error", () => {
    const vague = join(directory, "vague.json");
    writeFileSync(vague, JSON.stringify([{ role: "user", content: "hello, can you help me travel?" }]));
    const lenient = JSON.parse(run(["check", "--policy", travel, "--messages", vague]).stdout) as {
      ungrounded: { message: number; kind: string; error: string }[];
    };
    assert.deepEqual(
      lenient.ungrounded.map((note) => [note.message, note.kind]),
      [[0, "task"]],
    );
    const strict = run(["check", "--policy", travel, "--messages", vague, "--strict-grounding"]);
    assert.equal(strict.status, 2);
    assert.match(
      strict.stderr,
      /MNT_ERR_UNGROUNDED: messages\[0\]: the request could not be grounded into policy travel/,
    );
  });
});
