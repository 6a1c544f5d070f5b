import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import { parsePolicy, policyForSystem } from "../../src/policy/index.js";
import { buildServer } from "../../src/server/index.js";
import { policyText, withLogin, withoutLogin } from "../support/card-desk.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";

// Settings read from the system prompt (docs/policy.md, "Settings from the system prompt"): one
// policy for a manual whose deployments render it with their own figures and clauses.
describe("settings from the system prompt", () => {
  const policy = parsePolicy(policyText, "card.yaml");

  it("without a prompt every setting keeps its default", () => {
    assert.deepEqual(policy.settings.values, { apply_needs_login: true, min_score: 600, max_amount: 1000 });
    assert.deepEqual(
      policy.rules.map((rule) => rule.id),
      ["LOGIN", "SCORE"],
    );
    assert.equal(policy.constraints[0]?.requireText, "a.amount <= 1000");
    assert.equal(policyForSystem(policy, undefined), policy);
  });

  it("a prompt's clauses switch rules, its figures fill the thresholds; one variant per set of values", () => {
    const variant = policyForSystem(policy, withoutLogin);
    assert.deepEqual(variant.settings.values, { apply_needs_login: false, min_score: 700, max_amount: 5000 });
    assert.deepEqual(
      variant.rules.map((rule) => rule.id),
      ["SCORE"],
    );
    assert.equal(variant.constraints[0]?.requireText, "a.amount <= 5000");
    const score = variant.tools.get("get_score")?.labeler.rules[0]?.test;
    assert.deepEqual(score?.kind === "number" ? score.bounds : undefined, { gt: 700 });
    assert.equal(policyForSystem(policy, `${withoutLogin}\n`), variant);
    // The defaults' values give the policy itself.
    assert.equal(policyForSystem(policy, withLogin.replace("600.", "600. At most 1000 dollars.")), policy);
  });

  it("a clause counts only in its section", () => {
    // "logged in" is said of get_score, not of apply_card.
    assert.equal(policyForSystem(policy, withoutLogin).settings.values.apply_needs_login, false);
    assert.equal(policyForSystem(policy, withLogin).settings.values.apply_needs_login, true);
    const noSection = withLogin.replace("* apply_card:", "* open_account:");
    assert.equal(policyForSystem(policy, noSection).settings.values.apply_needs_login, false);
  });

  it("an unknown setting, a default of the wrong type and a section without system_sections are errors with their lines", () => {
    const broken = policyText
      .replace(`a.amount <= \${max_amount}`, `a.amount <= \${max_amont}`)
      .replace("default: 600}", "default: true}")
      .replace("system_sections: '^\\* (?<name>\\w+):'\n", "");
    assert.throws(
      () => parsePolicy(broken, "card.yaml"),
      (error: unknown) => {
        assert.ok(error instanceof MentorError);
        assert.match(error.message, /card\.yaml:\d+:\d+.*unknown setting max_amont/);
        assert.match(error.message, /default of a `number` setting is a number/);
        assert.match(error.message, /in_section needs `system_sections`/);
        return true;
      },
    );
  });
});

describe("the server reads each conversation's system prompt", () => {
  const directory = mkdtempSync(join(tmpdir(), "mentor-settings-"));
  const file = join(directory, "card.yaml");
  writeFileSync(file, policyText);
  after(() => rmSync(directory, { recursive: true, force: true }));

  it("the same call is blocked under one manual and allowed under another", async () => {
    const app = await buildServer({
      generator: new ScriptedGenerator([]),
      modelId: "scripted",
      logger: false,
      labeler: "rules",
      policies: [file],
    });
    try {
      const conversation = (system: string) => [
        { role: "system", content: system },
        { role: "user", content: "I would like a card for 4000 dollars, username ann." },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "get_score", arguments: '{"username":"ann"}' } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "650" },
      ];
      const check = async (system: string) => {
        const answer = await app.inject({
          method: "POST",
          url: "/v1/monitor/check",
          payload: {
            messages: conversation(system),
            call: { name: "apply_card", arguments: { username: "ann", amount: 4000 } },
          },
        });
        assert.equal(answer.statusCode, 200);
        const decide = answer.json().decide as { verdict: string; violations: { rule: string }[] };
        return [decide.verdict, decide.violations.map((finding) => finding.rule).sort()];
      };
      // 650 is not above 700, and this manual asks for no login.
      assert.deepEqual(await check(withoutLogin), ["block", ["SCORE"]]);
      // 650 is above 600; the login is missing and 4000 is over the default 1000.
      assert.deepEqual(await check(withLogin), ["block", ["LOGIN", "MAX"]]);
      assert.deepEqual(await check(withoutLogin.replace("700", "600")), ["allow", []]);
    } finally {
      await app.close();
    }
  });
});
