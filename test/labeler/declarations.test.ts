import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../src/errors/index.js";
import { parsePolicy } from "../../src/policy/index.js";

const travel = readFileSync(
  fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url)),
  "utf8",
);

/** Loads the travel policy with one substitution; returns the problem matching `message` and the line of `at`. */
function problemAfter(
  from: string,
  to: string,
  at: string,
  message: RegExp,
): { problem: MentorError; line: number } {
  assert.ok(travel.includes(from), `the travel policy contains ${from}`);
  const text = travel.replace(from, to);
  try {
    parsePolicy(text, "travel.yaml");
  } catch (error) {
    assert.ok(error instanceof MentorError);
    const problem = error.problems.find((candidate) => message.test(candidate.message));
    assert.ok(problem, error.message);
    const offset = text.indexOf(at);
    assert.ok(offset >= 0, `${at} occurs in the changed text`);
    return { problem, line: text.slice(0, offset).split("\n").length };
  }
  assert.fail("expected the policy to be rejected");
}

function assertProblem(
  from: string,
  to: string,
  at: string,
  code: string,
  message: RegExp,
  path: RegExp,
): void {
  const { problem, line } = problemAfter(from, to, at, message);
  assert.equal(problem.code, code);
  assert.equal(problem.location?.file, "travel.yaml");
  assert.equal(problem.location?.line, line, problem.message);
  assert.match(problem.location?.path ?? "", path);
}

const firstRule =
  "- {label: long, number: '(\\d[\\d,]*(?:\\.\\d+)?)\\s*(?:km|kms|kilomet(?:er|re)s?)\\b', gte: 500,";

describe("labeler declarations in a policy", () => {
  test("the travel policy's declarations compile", () => {
    const policy = parsePolicy(travel, "travel.yaml");
    assert.equal(policy.tools.get("check_distance")?.labeler.rules.length, 4);
    assert.equal(policy.tools.get("check_distance")?.labeler.llm, false);
    assert.equal(policy.tools.get("check_seats")?.labeler.llm, false);
    assert.equal(policy.taskCalls.get("request_travel")?.grounding?.llm, true);
    assert.equal(policy.taskCalls.get("request_travel")?.grounding?.patterns.length, 4);
  });

  test("a rule naming an undeclared label", () => {
    assertProblem(
      firstRule,
      firstRule.replace("label: long", "label: far"),
      "label: far",
      "MNT_ERR_POLICY_REFERENCE",
      /tool check_distance has no label far \(its labels: short, long\)/,
      /tools\.check_distance\.labeler\.rules\[0\]\.label/,
    );
  });

  test("a rule with two tests", () => {
    assertProblem(
      firstRule,
      firstRule.replace("gte: 500,", "gte: 500, regex: 'far',"),
      "regex: 'far'",
      "MNT_ERR_POLICY_SCHEMA",
      /exactly one of json, regex, keywords, number \(found regex, number\)/,
      /rules\[0\]$/,
    );
  });

  test("an invalid regex", () => {
    assertProblem(
      "- {label: available, regex: '\\b(?:not",
      "- {label: available, regex: '\\b(?:not(",
      "label: available, regex",
      "MNT_ERR_POLICY_SCHEMA",
      /invalid regex/,
      /check_seats\.labeler\.rules\[4\]\.regex/,
    );
  });

  test("a number rule without a bound, and one without a group", () => {
    assertProblem(
      firstRule,
      firstRule.replace("gte: 500,", ""),
      firstRule.slice(0, 20),
      "MNT_ERR_POLICY_SCHEMA",
      /needs a bound/,
      /rules\[0\]\.number/,
    );
    assertProblem(
      firstRule,
      firstRule.replace("number: '(\\d[\\d,]*(?:\\.\\d+)?)", "number: '\\d+"),
      "number: '\\d+",
      "MNT_ERR_POLICY_SCHEMA",
      /needs a group around the number/,
      /rules\[0\]\.number/,
    );
  });

  test("a labeler on a tool whose output is JSON", () => {
    assertProblem(
      "  book_train:\n    description: Book a train ticket.\n",
      "  book_train:\n    description: Book a train ticket.\n    labeler: {llm: true}\n",
      "labeler: {llm: true}",
      "MNT_ERR_POLICY_SCHEMA",
      /tool book_train has a labeler but its output is not text/,
      /tools\.book_train\.labeler/,
    );
  });

  test("a label named none", () => {
    assertProblem(
      "      available: seats are available\n",
      "      available: seats are available\n      none: no flight\n",
      "none: no flight",
      "MNT_ERR_POLICY_SCHEMA",
      /reserves it/,
      /check_seats\.labels\.none/,
    );
  });

  test("a task pattern with a group that is not a field, or an undefined fragment", () => {
    assertProblem(
      "(?<destination>{{city}})\\s+from",
      "(?<target>{{city}})\\s+from",
      "(?<target>",
      "MNT_ERR_POLICY_REFERENCE",
      /task call request_travel has no field target/,
      /grounding\.patterns\[1\]/,
    );
    assertProblem(
      "\\s+(?:to|into|for)\\s+(?<destination>{{city}})",
      "\\s+(?:to|into|for)\\s+(?<destination>{{town}})",
      "{{town}}",
      "MNT_ERR_POLICY_REFERENCE",
      /\{\{town\}\} is not defined/,
      /grounding\.patterns\[0\]/,
    );
  });

  test("a field rule for an unknown field, a field nothing fills, a keyword list on a non-boolean field", () => {
    const renamed = [
      "        urgent:\n          keywords:",
      "        urgency:\n          keywords:",
    ] as const;
    assertProblem(
      ...renamed,
      "urgency:",
      "MNT_ERR_POLICY_REFERENCE",
      /task call request_travel has no field urgency/,
      /grounding\.fields\.urgency/,
    );
    assertProblem(
      ...renamed,
      "    grounding:",
      "MNT_ERR_POLICY_SCHEMA",
      /field urgent of task call request_travel is filled by no pattern group and no field rule/,
      /task\.request_travel\.grounding$/,
    );
    assertProblem(
      "      fields:\n        urgent:",
      "      fields:\n        origin: {keywords: [home]}\n        urgent:",
      "keywords: [home]",
      "MNT_ERR_POLICY_SCHEMA",
      /a keyword list sets a boolean field; origin is not boolean/,
      /grounding\.fields\.origin\.keywords/,
    );
  });
});
