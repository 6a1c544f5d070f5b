import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

// Through the real `mentor` binary, as a black-box checker would call it.
const mentor = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

function run(args: string[], input = ""): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(process.execPath, [mentor, ...args], { input, encoding: "utf8" });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

describe("mentor ltl eval --batch", () => {
  test("answers one JSON line per input line", () => {
    const input = [
      '{"formula": "G(a -> F b)", "trace": [["a"], [], ["b","c"]]}',
      '{"formula": "G(a -> F b)", "trace": [["a"]]}',
      '{"formula": "F a", "trace": []}',
      '{"formula": "G a", "trace": []}',
      "",
      '{"formula": "X(G a)", "trace": [["a"]]}',
      '{"formula": "(!refund U verify) | G !refund", "trace": [["refund"]]}',
      '{"formula": "F decide", "trace": [["x"], ["decide"], ["y"]]}',
      '{"formula": "G(booked(x, y) -> O checked(x))", "trace": [["checked(x)"], ["booked(x, y)"]]}',
      '{"formula": "a U", "trace": []}',
      "not json",
      '{"formula": "a", "trace": [["a"], "b"]}',
      '{"trace": []}',
      '{"formula": "O F a", "trace": []}',
    ].join("\n");
    const { stdout, status } = run(["ltl", "eval", "--batch"], input);
    assert.equal(status, 0);
    const lines = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(lines.slice(0, 8), [
      { accepted: true, colour: "CURR_SAT" },
      { accepted: false, colour: "CURR_VIOL" },
      { accepted: false, colour: "CURR_VIOL" },
      { accepted: true, colour: "CURR_SAT" },
      { accepted: false, colour: "CURR_VIOL" },
      { accepted: false, colour: "PERM_VIOL" },
      { accepted: true, colour: "PERM_SAT" },
      { accepted: true, colour: "PERM_SAT" },
    ]);
    assert.equal(lines.length, 13);
    assert.match(lines[8].error, /column 4: expected an atom/);
    assert.match(lines[9].error, /invalid JSON/);
    assert.match(lines[10].error, /"trace"\[1\] must be an array/);
    assert.match(lines[11].error, /"formula" must be a string/);
    assert.match(lines[12].error, /future operators inside a past operator/);
  });

  test("evaluates a single formula from the command line", () => {
    const ok = run(["ltl", "eval", "G(a -> F b)", "--trace", '[["a"],[],["b"]]']);
    assert.equal(ok.status, 0);
    assert.deepEqual(JSON.parse(ok.stdout), { accepted: true, colour: "CURR_SAT" });
    const bad = run(["ltl", "eval", "G(a ->"]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /MNT_ERR_FORMULA_SYNTAX: line 1, column 7: expected/);
  });

  test("prints the automaton", () => {
    const { stdout, status } = run(["ltl", "dfa", "G(a -> X b)", "--json"]);
    assert.equal(status, 0);
    const automaton = JSON.parse(stdout);
    assert.deepEqual(automaton.atoms, ["a", "b"]);
    assert.deepEqual(
      automaton.states.map((state: { colour: string }) => state.colour),
      ["CURR_SAT", "CURR_VIOL", "PERM_VIOL"],
    );
  });

  test("has help for every command", () => {
    for (const args of [["--help"], ["ltl", "--help"], ["ltl", "eval", "--help"], ["ltl", "dfa", "--help"]]) {
      const { stdout, status } = run(args);
      assert.equal(status, 0, args.join(" "));
      assert.match(stdout, /Usage: mentor/);
    }
  });
});
