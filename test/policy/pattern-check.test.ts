import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { seededIntegers } from "../../src/base/random.js";
import { MentorError } from "../../src/errors/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { patternProblems } from "../../src/policy/pattern-check.js";

const policies = (name: string): string =>
  fileURLToPath(new URL(`../../../policies/${name}/policy.yaml`, import.meta.url));
const travel = readFileSync(policies("travel"), "utf8");

/** The problems loading the travel policy with one substitution reports (it must not load). */
function problemsAfter(from: string, to: string): { text: string; problems: readonly MentorError[] } {
  assert.ok(travel.includes(from), `the travel policy contains ${from}`);
  const text = travel.replace(from, to);
  try {
    parsePolicy(text, "travel.yaml");
  } catch (error) {
    assert.ok(error instanceof MentorError);
    return { text, problems: error.problems };
  }
  assert.fail("expected the policy to be rejected");
}

function lineOf(text: string, needle: string): number {
  const offset = text.indexOf(needle);
  assert.ok(offset >= 0, `${needle} occurs in the text`);
  return text.slice(0, offset).split("\n").length;
}

describe("the pattern check: no regex that backtracking takes more than linear time on", () => {
  test("rejects repetitions that can match a text in more than one way", () => {
    for (const source of [
      "(a+)+",
      String.raw`(\w+\s?)*`,
      "(?:x*y?)*",
      "(?:a|a)*",
      String.raw`(?:\w|\d)+`,
      "(?:a?a)*",
      "(?:a?b?)*",
      String.raw`(?:\s*,\s*)*`,
      String.raw`(?:,\s*|\s+and\s+)*`,
      "(?:a{1,3})+",
      String.raw`x(?:[a-z]+|\d+|\w+)+y`,
    ]) {
      const problems = patternProblems(source, false);
      assert.equal(problems.length, 1, source);
      assert.match(problems[0]?.message ?? "", /more than one way/, source);
    }
    // Case folding makes these two alternatives overlap.
    assert.equal(patternProblems("(?:a|A)*", true).length, 1);
    assert.equal(patternProblems("(?:k|\u212a)*", true).length, 1);
    assert.equal(patternProblems("(?:a|A)*", false).length, 0);
  });

  test("accepts delimited and bounded repetitions, and names only the innermost ambiguous one", () => {
    for (const source of [
      String.raw`(?:[ ]\p{Lu}[\p{L}]{0,30}){0,4}`,
      String.raw`\p{Lu}[\p{L}'’]*(?:[ ]\p{Lu}[\p{L}'’]*)*`,
      String.raw`[a-z]+(?:_[a-z]+)+_\d{4}`,
      String.raw`(?:\w+\s+){0,4}`,
      "(?:a|ab)*c",
      "(?:[a-z]|[^a-z])*",
      String.raw`(\d[\d,]*(?:\.\d+)?)\s*(?:km|miles?)\b`,
      String.raw`(?:(?!\w{0,9}x).)*`,
    ])
      assert.deepEqual(patternProblems(source, false), [], source);
    assert.deepEqual(
      patternProblems(String.raw`(?:_(\w+\s?)*)+`, false).map((problem) => [problem.start, problem.end]),
      [[4, 13]],
    );
  });

  test("rejects a repetition too large to check (fails closed)", () => {
    const [problem] = patternProblems(`(?:${"a|".repeat(800)}a)*`, false);
    assert.match(problem?.message ?? "", /too large to check/);
  });

  test("rejects a lookaround that reads an unbounded repetition at every round of a repetition, and backreferences", () => {
    const [inLoop] = patternProblems(String.raw`(?:(?!\w*x).)*`, false);
    assert.match(inLoop?.message ?? "", /reads the unbounded repetition \\w\* at every round/);
    assert.match(patternProblems(String.raw`(a)\1`, false)[0]?.message ?? "", /backreference \\1/);
    assert.match(patternProblems(String.raw`(?<n>a)\k<n>`, false)[0]?.message ?? "", /backreference/);
  });

  test("a policy pattern with nested quantifiers does not load: file, line and place in the pattern", () => {
    const rule = String.raw`number: '(\d[\d,]*(?:\.\d+)?)\s*(?:km|kms|kilomet(?:er|re)s?)\b', gte: 500`;
    const { text, problems } = problemsAfter(rule, String.raw`number: '((?:\d+,?)+)\s*km\b', gte: 500`);
    const problem = problems.find((candidate) => candidate.code === "MNT_ERR_POLICY_PATTERN");
    assert.ok(problem, problems.map((candidate) => candidate.message).join("\n"));
    assert.equal(problem.location?.file, "travel.yaml");
    assert.equal(problem.location?.line, lineOf(text, String.raw`((?:\d+,?)+)`));
    assert.match(problem.location?.path ?? "", /tools\.check_distance\.labeler\.rules\[0\]\.number/);
    assert.match(problem.message, /at character 2 of the pattern: \(\?:\\d\+,\?\)\+ can match/);
  });

  test("through a {{define}}d fragment, the problem names the fragment", () => {
    const { problems } = problemsAfter(
      String.raw`\p{Lu}[\p{L}''’]*(?:[ ]\p{Lu}[\p{L}''’]*)*'`,
      String.raw`\p{Lu}(?:[\p{L}''’]+[ ]?)*'`,
    );
    const located = problems.filter((problem) => problem.code === "MNT_ERR_POLICY_PATTERN");
    assert.equal(located.length, 4, "once per pattern that inserts {{city}} (twice)");
    for (const problem of located) assert.match(problem.message, /in \{\{city\}\}: /);
  });

  test("the shipped policies pass it", () => {
    for (const name of ["travel", "tau2-mock", "tau2-retail", "tau2-airline"]) loadPolicy(policies(name));
  });

  test("the tau2 fragments rewritten to pass it match where the originals did", () => {
    // policies/tau2-*: a reservation id's letter run bounded by its six characters; "other" verbs
    // without the word's rest (a lookaround reads it at every round); the retail item verb with its
    // lookahead read once the verb is found. Old and new, in the contexts the policies use them in.
    const rid = {
      old: String.raw`\b(?!HAT\d{3}\b)(?:(?=[A-Z]*\d)[A-Z0-9]{6}|(?<=(?:[Rr]eservation|[Cc]onfirmation|[Bb]ooking)[^.\n]{0,25})[A-Z]{6})\b`,
      new: String.raw`\b(?!HAT\d{3}\b)(?=[A-Z]{0,5}\d|(?<=(?:[Rr]eservation|[Cc]onfirmation|[Bb]ooking)[^.\n]{0,25})[A-Z]{6}\b)[A-Z0-9]{6}\b`,
    };
    const other = { old: String.raw`\b(?:cancel|return)\w*\b`, new: String.raw`\b(?:cancel|return)` };
    const words = ["exchange", "change", "modify", "swap"].join("|");
    const verb = {
      old: String.raw`\b(?:${words})\w*\b(?![^.;\n]*\b(?:address|payment)\b)`,
      new: String.raw`\b(?=(?:${words})\w*\b(?![^.;\n]*\b(?:address|payment)\b))(?:${words})\w*\b`,
    };
    const uses: [string, string, string][] = [
      [rid.old, rid.new, "u"],
      [`(?:(?!${rid.old})[\\s\\S])*`, `(?:(?!${rid.new})[\\s\\S])*`, "u"],
      [`(?!${other.old})`, `(?!${other.new})`, "iu"],
      [`(?<!${other.old}[^.;\\n]*)#W\\d`, `(?<!${other.new}[^.;\\n]*)#W\\d`, "iu"],
      [verb.old, verb.new, "iu"],
      [`(?<=${verb.old}[^.;\\n]{0,20})#W\\d`, `(?<=${verb.new}[^.;\\n]{0,20})#W\\d`, "iu"],
    ];
    const pieces = [
      "cancel",
      "cancelled",
      "Return",
      "changes",
      "exchange",
      "swapped",
      "address",
      "payment",
      "reservation ",
      "Booking",
      "HAT123",
      "ABC123",
      "XEHMAB",
      "A1B2C3D",
      "#W1234567",
      " ",
      " ",
      ".",
      ",",
      ";",
      "\n",
      "to",
      "x",
    ];
    const next = seededIntegers(36);
    for (let round = 0; round < 400; round++) {
      let text = "";
      while (text.length < 80) text += pieces[next(pieces.length)];
      for (const [before, after, flags] of uses) {
        const spans = (source: string) =>
          [...text.matchAll(new RegExp(source, `${flags}g`))].map((match) => [match.index, match[0]]);
        assert.deepEqual(spans(after), spans(before), `${after} on ${JSON.stringify(text)}`);
      }
    }
  });
});
