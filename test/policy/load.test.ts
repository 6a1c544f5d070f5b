import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../src/errors/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";

const travelFile = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const travel = readFileSync(travelFile, "utf8");

/** The policy text with one substitution, and the problems loading it reports. */
function problemsAfter(from: string, to: string): { text: string; problems: readonly MentorError[] } {
  assert.ok(travel.includes(from), `the travel policy contains ${from}`);
  const text = travel.replace(from, to);
  try {
    parsePolicy(text, "travel.yaml");
  } catch (error) {
    assert.ok(error instanceof MentorError);
    assert.equal(error.code, "MNT_ERR_POLICY_INVALID");
    return { text, problems: error.problems };
  }
  assert.fail("expected the policy to be rejected");
}

/** Line and column (1-based) of the first occurrence of `needle` in `text`. */
function positionOf(text: string, needle: string): { line: number; column: number } {
  const offset = text.indexOf(needle);
  assert.ok(offset >= 0, `${needle} occurs in the text`);
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, column: offset - before.lastIndexOf("\n") };
}

function assertOne(
  result: { text: string; problems: readonly MentorError[] },
  code: string,
  at: string,
  message: RegExp,
): void {
  assert.equal(result.problems.length, 1, result.problems.map((problem) => problem.message).join("\n"));
  const [problem] = result.problems as [MentorError];
  assert.equal(problem.code, code);
  assert.match(problem.message, message);
  assert.equal(problem.location?.file, "travel.yaml");
  const expected = positionOf(result.text, at);
  assert.deepEqual({ line: problem.location?.line, column: problem.location?.column }, expected);
}

describe("loadPolicy", () => {
  test("loads the travel policy", () => {
    const policy = loadPolicy(travelFile);
    assert.equal(policy.name, "travel");
    assert.deepEqual(
      policy.rules.map((rule) => rule.id),
      ["P1", "P2", "P4", "P5", "P6", "P7", "P4_mode", "P4_only"],
    );
    assert.deepEqual(
      policy.constraints.map((constraint) => constraint.id),
      ["P3", "P4_class"],
    );
    assert.deepEqual(policy.propositions.get("checked")?.bindingPattern, {
      x: ["origin"],
      y: ["destination"],
    });
    assert.deepEqual(policy.tools.get("book_flight")?.parameters[2]?.jsonSchema, {
      type: "string",
      enum: ["economy", "business"],
      description: "Cabin class",
    });
  });

  test("an unknown proposition in a rule points at the atom and names the rule", () => {
    const result = problemsAfter("O checked(route))", "O chekced(route))");
    assertOne(result, "MNT_ERR_POLICY_REFERENCE", "chekced(route)", /rule P1: unknown proposition chekced/);
  });

  test("a proposition used with the wrong entities is an arity error", () => {
    const result = problemsAfter('a: "seats_checked(route)"', 'a: "seats_checked"');
    assertOne(
      result,
      "MNT_ERR_POLICY_ARITY",
      'seats_checked"',
      /rule P5: seats_checked does not match the declaration seats_checked\(route\)/,
    );
  });

  test("a bad formula reports the column inside the formula, in file coordinates", () => {
    const result = problemsAfter(
      'ltl: "G(short(route) -> G !flight(route))"',
      'ltl: "G(short(route) -> G !flight(route)"',
    );
    assertOne(result, "MNT_ERR_FORMULA_SYNTAX", '"}\n  - {id: P4', /rule P2: expected '\)' to close/);
  });

  test("an unknown tool in a proposition", () => {
    const result = problemsAfter(
      "seats_checked(route): {tool: check_seats,",
      "seats_checked(route): {tool: check_seat,",
    );
    assert.equal(result.problems[0]?.code, "MNT_ERR_POLICY_REFERENCE");
    assert.match(
      result.problems[0]?.message ?? "",
      /proposition seats_checked refers to unknown tool check_seat/,
    );
    assert.deepEqual(
      { line: result.problems[0]?.location?.line, column: result.problems[0]?.location?.column },
      positionOf(result.text, "check_seat,"),
    );
  });

  test("an unknown argument in a predicate points at the field", () => {
    const result = problemsAfter(
      'train(route): {tool: book_train, when: "a.origin == x && a.destination == y"}',
      'train(route): {tool: book_train, when: "a.origin == x && a.destiny == y"}',
    );
    assertOne(result, "MNT_ERR_POLICY_REFERENCE", "a.destiny", /unknown argument 'destiny'/);
  });

  test("a label that the tool does not declare", () => {
    const result = problemsAfter("o.label == 'short'", "o.label == 'near'");
    assertOne(
      result,
      "MNT_ERR_POLICY_REFERENCE",
      "'near'",
      /'near' is not one of the values of o.label: 'short', 'long'/,
    );
  });

  test("a field after last() of a text tool that it does not have names the rule and the fields", () => {
    const result = problemsAfter(
      `require: "a.travel_class == 'economy' || task.request_travel.urgent == true"`,
      `require: "a.travel_class == 'economy' || last('check_distance').lable == 'short'"`,
    );
    assertOne(
      result,
      "MNT_ERR_POLICY_REFERENCE",
      "last('check_distance').lable",
      /rule P3: unknown field 'lable' of last\('check_distance'\) \(what check_distance returned\); its fields are: label/,
    );
    const label = problemsAfter(
      `require: "a.travel_class == 'economy' || task.request_travel.urgent == true"`,
      `require: "a.travel_class == 'economy' || last('check_distance').label == 'near'"`,
    );
    assertOne(
      label,
      "MNT_ERR_POLICY_REFERENCE",
      "'near'",
      /rule P3: 'near' is not one of the values of last\('check_distance'\).label: 'short', 'long'/,
    );
  });

  test("duplicate rule ids", () => {
    const result = problemsAfter("{id: P7, template: notSuccession", "{id: P6, template: notSuccession");
    assert.deepEqual(
      result.problems.map((problem) => problem.code),
      ["MNT_ERR_POLICY_REFERENCE", "MNT_ERR_POLICY_DUPLICATE"].filter(
        (code) => code === "MNT_ERR_POLICY_DUPLICATE",
      ),
    );
    assert.match(result.problems[0]?.message ?? "", /rule P6: duplicate id P6/);
  });

  test("a rule without a manual sentence", () => {
    const result = problemsAfter(
      "  P7: Never book a flight for a route whose seat check found the flight full.\n",
      "",
    );
    assertOne(result, "MNT_ERR_POLICY_REFERENCE", "P7, template", /rule P7 has no sentence in `manual`/);
  });

  test("schema errors name the field", () => {
    const result = problemsAfter(
      "    output: text\n    labels:\n      short:",
      "    output: txt\n    labels:\n      short:",
    );
    assertOne(result, "MNT_ERR_POLICY_SCHEMA", "txt", /Invalid option|expected one of/i);
    assert.equal(result.problems[0]?.location?.path, "tools.check_distance.output");
  });

  test("a YAML syntax error is one problem, with its line (not the follow-on errors after it)", () => {
    const result = problemsAfter("policy: travel", "policy: travel\n  bad: [unclosed");
    assert.equal(result.problems.length, 1);
    assert.equal(result.problems[0]?.code, "MNT_ERR_POLICY_YAML");
    assert.deepEqual(result.problems[0]?.location, { file: "travel.yaml", line: 2, column: 9 });
    const flow = problemsAfter("  check_distance:\n", "  check_distance: {description: oops\n");
    assert.equal(flow.problems.length, 1, flow.problems.map((problem) => problem.message).join("\n"));
  });

  test("a key given twice in a map is a YAML error at the second one (checked once per key)", () => {
    const result = problemsAfter("  book_train:\n", "  check_seats: {}\n  book_train:\n");
    assertOne(result, "MNT_ERR_POLICY_YAML", "check_seats: {}", /Map keys must be unique/);
    // The first of two errors in the file's order: the repeated key before a syntax error after it.
    const both = problemsAfter("  book_train:\n", "  check_seats: {}\n  book_train:\n").text.replace(
      "\nrules:\n",
      "\nrules: [unclosed\n",
    );
    assert.throws(
      () => parsePolicy(both, "travel.yaml"),
      (error: MentorError) => /Map keys must be unique/.test(error.problems[0]?.message ?? ""),
    );
  });

  test("every problem is reported, not only the first", () => {
    const text = travel
      .replace("O checked(route))", "O chekced(route))")
      .replace("o.label == 'short'", "o.label == 'near'")
      .replace("{id: P7, template: notSuccession", "{id: P6, template: notSuccession");
    try {
      parsePolicy(text, "travel.yaml");
      assert.fail("expected problems");
    } catch (error) {
      assert.ok(error instanceof MentorError);
      assert.equal(error.problems.length, 3);
      assert.match(error.message, /3 problems in policy travel\.yaml/);
    }
  });

  test("a formula in a block scalar is located on its own line", () => {
    const text = travel.replace(
      '  - {id: P1, ltl: "G((flight(route) | train(route)) -> O checked(route))"}',
      "  - id: P1\n    ltl: |\n      G((flight(route) | train(route))\n        -> O chekced(route))",
    );
    try {
      parsePolicy(text, "travel.yaml");
      assert.fail("expected a problem");
    } catch (error) {
      assert.ok(error instanceof MentorError);
      const problem = error.problems[0] as MentorError;
      assert.deepEqual(
        { line: problem.location?.line, column: problem.location?.column },
        positionOf(text, "chekced"),
      );
    }
  });

  test("a missing file is a clear error", () => {
    assert.throws(
      () => loadPolicy("/nonexistent/policy.yaml"),
      (error: unknown) => {
        assert.ok(error instanceof MentorError);
        assert.equal(error.code, "MNT_ERR_POLICY_FILE");
        assert.match(error.message, /\/nonexistent\/policy\.yaml/);
        return true;
      },
    );
  });
});
