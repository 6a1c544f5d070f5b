import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seededIntegers } from "../../src/base/random.js";
import { patternContext, patternWindow, TextPattern } from "../../src/policy/index.js";

/** What a test compares of a match: where it is, its text, its groups. */
function shape(match: RegExpExecArray | null | undefined): unknown {
  return match
    ? { index: match.index, text: match[0], captures: [...match.slice(1)], groups: match.groups }
    : null;
}

const patterns: [string, "u" | "iu"][] = [
  [String.raw`(\d[\d,]*(?:\.\d+)?)\s*(?:km|miles?)\b`, "iu"],
  [String.raw`\b[Ff]rom\s+(?<origin>\p{Lu}\p{L}*)\s+to\s+(?<destination>\p{Lu}\p{L}*)`, "u"],
  [String.raw`(?<![\p{L}\p{N}_])(?:sold\s+out|full)(?![\p{L}\p{N}_])`, "iu"],
  [String.raw`\b`, "u"],
  ["x*", "u"],
  [String.raw`(?<=\n)\w+`, "u"],
  ["😀|é", "u"],
];

/** A text of words, numbers, punctuation and line breaks (no run of one class longer than a few characters). */
function randomText(next: (n: number) => number, length: number): string {
  const pieces = [
    "From",
    "Paris",
    "to",
    "Lyon",
    "km",
    "12,5",
    "3.5",
    " ",
    " ",
    "\n",
    ". ",
    "sold out",
    "x",
    "xx",
    "😀",
    "é",
    "Full",
    "miles",
    "1,204",
    "-",
  ];
  let text = "";
  while (text.length < length) text += pieces[next(pieces.length)];
  return text.slice(0, length);
}

describe("TextPattern: a policy regex read in windows", () => {
  test("on a text of at most patternWindow characters it finds what the regex finds on the whole text", () => {
    const next = seededIntegers(36);
    for (let round = 0; round < 300; round++) {
      const [source, flags] = patterns[round % patterns.length] as [string, "u" | "iu"];
      const pattern = new TextPattern(source, flags);
      const text = randomText(next, next(patternWindow + 1));
      const global = new RegExp(source, `${flags}g`);
      assert.deepEqual(
        pattern.allMatches(text).map(shape),
        [...text.matchAll(global)].map(shape),
        `${source} on ${JSON.stringify(text)}`,
      );
      assert.deepEqual(shape(pattern.firstMatch(text)), shape(new RegExp(source, flags).exec(text)));
      assert.equal(pattern.test(text), new RegExp(source, flags).test(text));
    }
  });

  test("on a longer text it finds every short match where the regex on the whole text finds it", () => {
    const next = seededIntegers(7);
    for (let round = 0; round < 40; round++) {
      const [source, flags] = patterns[round % patterns.length] as [string, "u" | "iu"];
      const pattern = new TextPattern(source, flags);
      const text = randomText(next, patternWindow + next(6 * patternWindow));
      const whole = [...text.matchAll(new RegExp(source, `${flags}g`))];
      assert.ok(whole.every((match) => match[0].length <= patternContext));
      assert.deepEqual(pattern.allMatches(text).map(shape), whole.map(shape), source);
      assert.deepEqual(shape(pattern.firstMatch(text)), shape(new RegExp(source, flags).exec(text)));
    }
  });

  test("reads at most patternWindow characters at once, and every character of the text", () => {
    const text = "Sold out. ".repeat(1000) + "\n".repeat(10) + "a".repeat(5000);
    const matches = new TextPattern(String.raw`[\s\S]+`, "u").allMatches(text);
    assert.ok(matches.length > 1);
    assert.ok(matches.every((match) => match[0].length <= patternWindow));
    assert.equal(matches.map((match) => match[0]).join(""), text);
    assert.deepEqual(
      matches.map((match) => match.index),
      matches.map((_, index) => matches.slice(0, index).reduce((sum, match) => sum + match[0].length, 0)),
    );
  });

  test("^ and $ still mean the start and the end of the whole text", () => {
    const text = `Alpha ${"beta ".repeat(3000)}Omega`;
    assert.deepEqual(new TextPattern(String.raw`^\w+`, "u").allMatches(text).map(shape), [
      shape(/^\w+/u.exec(text)),
    ]);
    assert.deepEqual(new TextPattern(String.raw`\w+$`, "u").allMatches(text).map(shape), [
      shape(/\w+$/u.exec(text)),
    ]);
    // A lookaround sees the window only: ^ is in sight from the first window alone, and a match
    // is found by exactly one window.
    const seeStart = new TextPattern(String.raw`(?<=^[\s\S]*)beta`, "u").allMatches(text);
    const notStart = new TextPattern(String.raw`(?<!^[\s\S]*)beta`, "u").allMatches(text);
    assert.ok(seeStart.length > 0 && seeStart.every((match) => match.index < patternWindow));
    assert.equal(seeStart.length + notStart.length, 3000);
  });
});
