import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import { maxFormulaDepth } from "../../src/logic/index.js";
import { parsePolicy } from "../../src/policy/index.js";

// Files a careless operator or an attacker could hand the loader: each is one located problem,
// never a crash.

/** The error of a policy that does not load, with its one problem. */
function onlyProblem(text: string): { error: MentorError; problem: MentorError } {
  try {
    parsePolicy(text, "p.yaml");
  } catch (error) {
    assert.ok(error instanceof MentorError, String(error));
    assert.equal(error.code, "MNT_ERR_POLICY_INVALID");
    assert.equal(error.problems.length, 1, error.message);
    return { error, problem: error.problems[0] as MentorError };
  }
  assert.fail("expected the policy to be rejected");
}

const header = [
  "policy: p",
  "manual: {R1: A rule.}",
  "tools: {ta: {}}",
  "propositions: {a: {tool: ta}}",
  "rules:",
].join("\n");

describe("loading a policy: input limits", () => {
  test("an empty file is one problem at 1:1, reported on one line", () => {
    for (const text of ["", "\n", "# only a comment\n"]) {
      const { error, problem } = onlyProblem(text);
      assert.equal(problem.code, "MNT_ERR_POLICY_SCHEMA");
      assert.deepEqual(problem.location, { file: "p.yaml", line: 1, column: 1 });
      assert.match(error.message, /^p\.yaml:1:1: the file is empty/);
      assert.ok(!error.message.includes("\n"), error.message);
    }
  });

  test("an alias bomb (billion laughs) is a YAML problem at the first alias", () => {
    const lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
    for (const [index, name] of ["b", "c", "d", "e", "f", "g", "h", "i"].entries()) {
      const previous = String.fromCharCode("a".charCodeAt(0) + index);
      lines.push(`${name}: &${name} [${Array.from({ length: 9 }, () => `*${previous}`).join(", ")}]`);
    }
    const { problem } = onlyProblem(`${lines.join("\n")}\n`);
    assert.equal(problem.code, "MNT_ERR_POLICY_YAML");
    assert.deepEqual(problem.location, { file: "p.yaml", line: 2, column: 8 });
    assert.match(problem.message, /alias bomb/);
  });

  test("a formula of 20,000 nested G's is MNT_ERR_FORMULA_TOO_LARGE at its file, line and column", () => {
    const { problem } = onlyProblem(`${header}\n  - {id: R1, ltl: "${"G ".repeat(20_000)}a"}\n`);
    assert.equal(problem.code, "MNT_ERR_FORMULA_TOO_LARGE");
    // The formula's first G is at column 20 of line 6; the limit is passed at its 257th G.
    assert.deepEqual(problem.location, {
      file: "p.yaml",
      line: 6,
      column: 20 + 2 * maxFormulaDepth,
      path: "rules[0].ltl",
    });
    assert.match(problem.message, /rule R1: the formula nests deeper than 256 levels/);
  });
});
