import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadPolicy, type Policy, policyForSystem } from "../../src/policy/index.js";

// No model. The SOPBench policies of bank, dmv, healthcare and hotel (policies/sopbench-<domain>/),
// as a user checks them in CI: `mentor lint` is clean and `mentor verify --suite` agrees with every
// labelled conversation of the policy's suite (compliant runs and runs that break a sentence).
const mentor = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const domains = ["bank", "dmv", "healthcare", "hotel"];

function run(args: string[]): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(process.execPath, [mentor, ...args], { encoding: "utf8" });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

interface Suite {
  manual: Record<string, string>;
  conversations: { id: string; expected: { compliant: boolean; sentence?: string } }[];
}

for (const domain of domains) {
  const policy = fileURLToPath(new URL(`../../../policies/sopbench-${domain}/policy.yaml`, import.meta.url));
  const suiteFile = fileURLToPath(
    new URL(`../../../policies/sopbench-${domain}/suite.json`, import.meta.url),
  );

  describe(`policies/sopbench-${domain}`, () => {
    test("mentor lint: no error, no warning but dmv's and healthcare's unchecked duties", () => {
      const result = run(["lint", policy]);
      assert.equal(result.status, 0, result.stdout + result.stderr);
      const lastDuty = new Map([
        ["dmv", "U0_renew_vehicle"],
        ["healthcare", "U0_get_policy_details"],
      ]).get(domain);
      if (lastDuty === undefined) {
        assert.match(result.stdout, /0 error\(s\), 0 warning\(s\)/);
        return;
      }
      // The request duties join the account's group past lint's 5,000 states
      // (policies/sopbench-<domain>/README.md, "Requests"): that group's traps are not checked.
      assert.match(result.stdout, /0 error\(s\), 1 warning\(s\)/);
      assert.match(
        result.stdout,
        new RegExp(`warning \\[unchecked\\] rules [^\\n]*${lastDuty}[^\\n]*not checked for traps`),
      );
    });

    test("the suite has compliant runs and violating runs that name a manual sentence", () => {
      const suite = JSON.parse(readFileSync(suiteFile, "utf8")) as Suite;
      const compliant = suite.conversations.filter((entry) => entry.expected.compliant);
      const violating = suite.conversations.filter((entry) => !entry.expected.compliant);
      assert.ok(compliant.length >= 3 && violating.length >= 3, `${compliant.length} + ${violating.length}`);
      for (const entry of violating)
        assert.ok(Object.hasOwn(suite.manual, entry.expected.sentence ?? ""), entry.id);
    });

    test("mentor verify --suite: the policy agrees with every label", () => {
      const result = run(["verify", "--policy", policy, "--suite", suiteFile]);
      const answer = JSON.parse(result.stdout) as {
        conversations: number;
        agree: number;
        disagreements: unknown[];
      };
      assert.deepEqual(answer.disagreements, []);
      assert.equal(answer.agree, answer.conversations);
      assert.equal(result.status, 0);
    });
  });
}

// Bank and dmv read each task's SOP from the system prompt, one `* action:` section per action: a
// section that does not state a sentence switches its rule off for that action only, a figure
// it states replaces the default, and a conversation without a prompt keeps every default.
describe("policies/sopbench-bank and -dmv: settings from the rendered SOP", () => {
  const load = (domain: string) =>
    loadPolicy(fileURLToPath(new URL(`../../../policies/sopbench-${domain}/policy.yaml`, import.meta.url)));
  const ruleIds = (policy: Policy) => policy.rules.map((rule) => rule.id);

  test("bank: the deposit section's clauses and limit, each action's own credit minimum", () => {
    const policy = load("bank");
    assert.equal(policy.settings.values.max_deposit, 10000);
    assert.ok(ruleIds(policy).includes("LOGIN_deposit_funds"));
    const variant = policyForSystem(
      policy,
      [
        "### Actions with Constraints:",
        "",
        "* deposit_funds:",
        "ALL of these conditions must be met:",
        '• The deposit amount "amount" must be less than or equal to the 1000 to be accepted.',
        "",
        "* apply_credit_card:",
        '• The user "username" **must have** a credit score higher than the 600 credit score in order to proceed.',
        "",
        "* set_safety_box:",
        '• The user "username" **must have** a credit score higher than the 700 credit score in order to proceed.',
      ].join("\n"),
    );
    const values = variant.settings.values;
    assert.equal(values.max_deposit, 1000);
    assert.equal(values.login_deposit_funds, false);
    assert.equal(values.deposit_max_deposit_funds, true);
    assert.equal(values.min_credit_apply_credit_card, 600);
    assert.equal(values.min_credit_set_safety_box, 700);
    assert.ok(!ruleIds(variant).includes("LOGIN_deposit_funds"));
    assert.ok(ruleIds(variant).includes("CREDIT_set_safety_box"));
    assert.ok(!ruleIds(variant).includes("CREDIT_get_loan"), "a section the prompt lacks states nothing");
  });

  test("dmv: the schedule_test section's attempts limit and its ANY ONE group", () => {
    const policy = load("dmv");
    assert.equal(policy.settings.values.max_attempts, 3);
    const variant = policyForSystem(
      policy,
      [
        "* schedule_test:",
        "• ANY ONE of these conditions must be met:",
        "  • The input test type \"test_type\" must be 'drive'.",
        '• The user with "username" has an "attempts" of less than 1 their "test_type" of tests.',
      ].join("\n"),
    );
    const values = variant.settings.values;
    assert.equal(values.max_attempts, 1);
    assert.equal(values.drive_branch_schedule_test, true);
    assert.equal(values.knowledge_branch_schedule_test, false);
    assert.equal(values.login_schedule_test, false);
    // The minimum age (a constraint on the birthday and the interaction time) is not stated here.
    assert.equal(values.age_schedule_test, false);
    assert.equal(policy.settings.values.age_schedule_test, true);
    const constraintIds = (of: Policy) => of.constraints.map((constraint) => constraint.id);
    assert.ok(constraintIds(policy).includes("AGE_schedule_test"));
    assert.ok(!constraintIds(variant).includes("AGE_schedule_test"));
  });
});
// The healthcare policy reads the SOP rendered for the task: the coverage percentage from
// update_policy's section, and the provider conditions as an "ANY ONE of these" group.
describe("policies/sopbench-healthcare reads the system prompt", () => {
  const base = loadPolicy(
    fileURLToPath(new URL("../../../policies/sopbench-healthcare/policy.yaml", import.meta.url)),
  );
  test("the defaults without a prompt, the prompt's figures and groups with one", () => {
    assert.equal(base.settings.values.max_coverage_percentage, 20);
    assert.equal(base.settings.values.provider_any_submit_claim, false);
    const read = policyForSystem(
      base,
      [
        "### Actions with Constraints:",
        "",
        "* update_policy:",
        "ALL of these conditions must be met:",
        '• The requested coverage amount "coverage_amount" **MUST NOT EXCEED** 10 percent of the annual income "annual_income" provided by the user.',
        "",
        "* submit_claim:",
        "ALL of these conditions must be met:",
        "• ANY ONE of these conditions must be met:",
        '  • The provider with ID "provider_id" **MUST HAVE** the service type that match the policy type of the user "username" in order to perform this action.',
        '  • The provider with ID "provider_id" **MUST BE** authorized for the user "username".',
        "",
      ].join("\n"),
    );
    assert.equal(read.settings.values.max_coverage_percentage, 10);
    assert.equal(read.settings.values.provider_any_submit_claim, true);
    assert.equal(read.settings.values.pending_update_policy, false);
    assert.equal(read.settings.values.enrollment_update_policy, false);
  });
});

// Hotel reads each task's SOP from the system prompt: a sentence the goal action's section leaves
// out switches its rule off, and the hours are the ones rendered.
describe("policies/sopbench-hotel: settings from the system prompt", () => {
  const policy = loadPolicy(
    fileURLToPath(new URL("../../../policies/sopbench-hotel/policy.yaml", import.meta.url)),
  );
  const system = [
    "### Actions with Constraints:",
    "",
    "* process_guest_checkin:",
    "ALL of these conditions must be met:",
    "• The current interaction time must be **on or after** the check-in time 14:00 on the interaction date.",
    "",
    "* process_guest_checkout:",
    'The guest "guest_name" must be listed in the room check-in records.',
    "",
    "### Internal Verification Functions:",
  ].join("\n");

  test("without a system prompt every sentence applies, with the default hours", () => {
    const { values } = policy.settings;
    assert.equal(values.checkout_time, true);
    assert.equal(values.checkin_id, true);
    assert.equal(values.check_in_hour, 15);
  });

  test("a rendered SOP: the sentences of each action's own section, its own hours", () => {
    const { values } = policyForSystem(policy, system).settings;
    assert.equal(values.checkout_listed, true);
    assert.equal(values.checkout_time, false);
    assert.equal(values.checkout_key, false);
    assert.equal(values.checkin_time, true);
    assert.equal(values.checkin_id, false);
    assert.equal(values.check_in_hour, 14);
    assert.equal(values.check_out_hour, 11);
    // The check-in section's time sentence is not read as the checkout's.
    assert.equal(values.service_hours, false);
  });

  // A sentence mentor cannot check (dates, costs, record joins) closes its action while its section
  // states it, and only then.
  test("an uncheckable sentence refuses its action while its section states it", () => {
    const closing = (variant: Policy) =>
      variant.rules.filter((rule) => /mentor cannot check/i.test(rule.sentence)).map((rule) => rule.id);
    assert.ok(closing(policy).includes("AVAILABLE_book"));
    assert.ok(closing(policy).includes("CHECKED_IN_checkout"));
    const read = closing(policyForSystem(policy, system));
    assert.ok(read.includes("CHECKED_IN_checkout"));
    assert.ok(!read.includes("AVAILABLE_book"), "a section the prompt lacks states nothing");
    assert.ok(!read.includes("ID_TYPE_age"));
  });
});
