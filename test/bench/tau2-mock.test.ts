import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { ExecutedCall } from "../../bench/domains/domain.js";
import { type MockBenchTask, tau2Mock } from "../../bench/domains/tau2-mock/index.js";
import { replayCalls } from "../../bench/domains/tau2-shared/reference-policy.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { lintPolicy } from "../../src/game/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { fixtureBenchData as dataDir } from "../support/bench-data.js";
import { Conversation } from "../support/conversation.js";

const tasks = tau2Mock.tasks({ dataDir }) as MockBenchTask[];
const taskNamed = (id: string) => tasks.find((task) => task.id === id) as MockBenchTask;

function judge(task: MockBenchTask, calls: { name: string; arguments: Record<string, unknown> }[]) {
  const environment = tau2Mock.environment(task, dataDir);
  const run: ExecutedCall[] = calls.map((call) => ({
    ...call,
    ...environment.call(call.name, call.arguments),
  }));
  return tau2Mock.evaluate(task, run, environment, dataDir);
}

describe("tau2-mock environment", () => {
  test("create_task numbers tasks, records them for the user and returns the task", () => {
    const environment = tau2Mock.environment(taskNamed("add_library_card"), dataDir);
    const created = environment.call("create_task", { user_id: "user_1", title: "Plan" });
    assert.deepEqual(JSON.parse(created.output), {
      task_id: "task_2",
      title: "Plan",
      description: null,
      status: "pending",
    });
    const state = environment.state() as { users: Record<string, { tasks: string[] }> };
    assert.deepEqual(state.users.user_1?.tasks, ["task_1", "task_2"]);
    assert.deepEqual(
      JSON.parse(environment.call("get_users", {}).output).map((user: { user_id: string }) => user.user_id),
      ["user_1"],
    );
  });

  test("errors leave the database unchanged", () => {
    const environment = tau2Mock.environment(taskNamed("add_library_card"), dataDir);
    const before = environment.state();
    for (const [name, args] of [
      ["create_task", { user_id: "user_9", title: "Plan" }],
      ["create_task", { user_id: "user_1", title: "" }],
      ["update_task_status", { task_id: "task_1", status: "deleted" }],
      ["update_task_status", { task_id: "task_7", status: "completed" }],
      ["delete_task", { task_id: "task_1" }],
    ] as const) {
      assert.equal(environment.call(name, args).error, true, name);
    }
    assert.deepEqual(environment.state(), before);
  });

  test("initialization data and actions shape the starting database", () => {
    for (const id of ["finish_seeded_by_data", "finish_seeded_by_action"]) {
      const state = tau2Mock.environment(taskNamed(id), dataDir).state() as {
        tasks: Record<string, { status: string }>;
      };
      assert.equal(state.tasks.task_2?.status, "pending", id);
    }
  });
});

describe("tau2-mock evaluator (no policy)", () => {
  test("the oracle passes every solvable task", () => {
    const solvable = tasks.filter((task) => task.solvable);
    assert.equal(solvable.length, 6);
    for (const task of solvable)
      assert.deepEqual(judge(task, task.reference ?? []), { pass: true, reasons: [] }, task.id);
  });

  test("tasks that need a conversation or an LLM judge are marked, with a reason", () => {
    const unsolvable = tasks.filter((task) => !task.solvable);
    assert.deepEqual(
      unsolvable.map((task) => task.id),
      ["add_library_card_and_joke", "finish_after_history", "finish_after_history_checked"],
    );
    for (const task of unsolvable) assert.ok((task.unsolvableReason ?? "").length > 20);
  });

  test("a missing write fails, naming the table, record and field", () => {
    const verdict = judge(taskNamed("finish_plants"), []);
    assert.equal(verdict.pass, false);
    assert.deepEqual(verdict.reasons, ['database: tasks.task_1.status: "pending", expected "completed"']);
  });

  test("a wrong argument fails", () => {
    const verdict = judge(taskNamed("add_library_card"), [
      { name: "create_task", arguments: { user_id: "user_1", title: "Meeting" } },
    ]);
    assert.equal(verdict.pass, false);
    assert.match(verdict.reasons.join(";"), /tasks\.task_2\.title: "Meeting", expected "Renew library card"/);
  });

  test("the refusal task: a transfer with any summary passes; a write or no transfer fails", () => {
    const task = taskNamed("clear_everything");
    assert.equal(
      judge(task, [{ name: "transfer_to_human_agents", arguments: { summary: "wants deletion" } }]).pass,
      true,
    );
    const noTransfer = judge(task, []);
    assert.match(noTransfer.reasons.join(";"), /^action: no transfer_to_human_agents/);
    const write = judge(task, [
      { name: "update_task_status", arguments: { task_id: "task_1", status: "completed" } },
      { name: "transfer_to_human_agents", arguments: { summary: "x" } },
    ]);
    assert.deepEqual(write.reasons, ['database: tasks.task_1.status: "completed", expected "pending"']);
  });

  test("environment assertions are checked on the final database", () => {
    const task = taskNamed("add_library_card_checked");
    const created = [{ name: "create_task", arguments: { user_id: "user_1", title: "Renew library card" } }];
    const completed = [
      ...created,
      { name: "update_task_status", arguments: { task_id: "task_2", status: "completed" } },
    ];
    assert.equal(judge(task, created).pass, true);
    assert.match(
      judge(task, completed).reasons.join(";"),
      /assertion: task_2 has status completed, expected pending/,
    );
  });
});

describe("tau2-mock policy", () => {
  const policy = loadPolicy(tau2Mock.policyPath);
  const evaluator = new Evaluator(policy);

  // That every rule cites a sentence of tau2's own policy.md is checked on the real data by
  // `npm run bench:tau2`; the fixture's manual is made-up text.
  test("lints clean; the manual is the data directory's policy.md", () => {
    assert.deepEqual(lintPolicy(policy), []);
    const file = join(dataDir, "tau2", "mock", "policy.md");
    assert.equal(tau2Mock.manual(dataDir), readFileSync(file, "utf8").trim());
  });

  test("the tools match the domain's tools", () => {
    assert.deepEqual(
      tau2Mock
        .tools(dataDir)
        .map((tool) => tool.function.name)
        .sort(),
      [...policy.tools.keys()].sort(),
    );
  });

  test("a task without a title and a status other than pending/completed are blocked", () => {
    const messages = new Conversation([], "Please help").messages;
    assert.equal(
      evaluator.decide(messages, { name: "create_task", arguments: { user_id: "user_1", title: "" } })
        .verdict,
      "block",
    );
    assert.equal(
      evaluator.decide(messages, { name: "create_task", arguments: { user_id: "user_1", title: "Plan" } })
        .verdict,
      "allow",
    );
    assert.equal(
      evaluator.decide(messages, {
        name: "update_task_status",
        arguments: { task_id: "task_1", status: "archived" },
      }).verdict,
      "block",
    );
  });

  test("a deletion request leaves a transfer to do before the answer", () => {
    const request = new Conversation(
      [{ name: "request_deletion", arguments: { tasks: "all" } }],
      "Delete my tasks",
    );
    assert.equal(evaluator.next(request.messages).done.allowed, false);
    request.call("transfer_to_human_agents", { summary: "wants deletion" }, { text: "Transfer successful" });
    assert.equal(evaluator.next(request.messages).done.allowed, true);
  });

  test("no reference trace of a solvable task is blocked by the policy", () => {
    for (const task of tasks.filter((one) => one.solvable)) {
      const run = new Conversation([], task.opening);
      for (const call of task.reference ?? []) {
        const decision = evaluator.decide(
          run.messages,
          call as { name: string; arguments: Record<string, never> },
        );
        assert.equal(decision.verdict, "allow", `${task.id} ${call.name}`);
        run.call(call.name, call.arguments as Record<string, never>, { json: {} });
      }
    }
  });

  test("the patterns ground the deletion request (M4) and nothing else; the oracle reads it from the reference's transfer", async (t) => {
    const labeler = new Labeler(policy, { only: "rules" });
    const ground = async (text: string) => {
      const result = await labeler.groundTask(text, true);
      return "value" in result ? result.value : [];
    };
    let agree = 0;
    for (const task of tasks) {
      const found = await ground(task.opening);
      const oracle = tau2Mock.grounding?.(task) ?? [];
      if (JSON.stringify(found) === JSON.stringify(oracle)) agree += 1;
    }
    t.diagnostic(`tau2-mock: the patterns ground ${agree} of ${tasks.length} openings as the oracle does`);
    assert.equal(agree, tasks.length);
    assert.deepEqual(tau2Mock.grounding?.(taskNamed("clear_everything")), [
      { name: "request_deletion", arguments: { tasks: "all" } },
    ]);
    assert.deepEqual(await ground("Please remove task_2 and task_3."), [
      { name: "request_deletion", arguments: { tasks: "task_2" } },
    ]);
    assert.deepEqual(await ground("Do not delete any of my tasks; mark task_1 as completed."), []);
  });

  test("with the oracle grounding, the reference ends with done allowed; without its transfer done is refused", () => {
    for (const task of tasks.filter((one) => one.solvable)) {
      const grounding = tau2Mock.grounding?.(task) ?? [];
      const reference = task.reference ?? [];
      const full = replayCalls(evaluator, task, reference, grounding, tau2Mock.environment(task, dataDir));
      assert.equal(full.doneAllowed, true, `${task.id}: ${full.openDuties.join("; ")}`);
      assert.deepEqual(full.blocked, [], task.id);
      if (grounding.length === 0) continue;
      const stopped = replayCalls(
        evaluator,
        task,
        reference.filter((call) => call.name !== "transfer_to_human_agents"),
        grounding,
        tau2Mock.environment(task, dataDir),
      );
      assert.deepEqual(stopped.openDuties, ['M4 for deletion(d="all")'], task.id);
    }
  });
});
