import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import { agentltlTemplates, atom, declareTemplates, holds, parseFormula } from "../../src/logic/index.js";

const [a, b, c] = [atom("a"), atom("b"), atom("c")];
const word = (...names: string[]) => names.map((name) => new Set(name === "" ? [] : [name]));

/** AgentLTL's definitions (agentltl 0.2.1, `_evaluator.py`), on first indexes, as the reference. */
const first = (trace: string[], tool: string) => trace.indexOf(tool);
const nth = (trace: string[], tool: string, n: number) =>
  trace.flatMap((name, index) => (name === tool ? [index] : []))[n - 1] ?? -1;
const reference: [string, (trace: string[]) => boolean, ReturnType<typeof parseFormula>][] = [
  [
    "Before(a, b)",
    (t) => first(t, "a") >= 0 && first(t, "b") >= 0 && first(t, "a") < first(t, "b"),
    agentltlTemplates.Before(a, b),
  ],
  [
    "After(a, b)",
    (t) => first(t, "a") >= 0 && first(t, "b") >= 0 && first(t, "a") > first(t, "b"),
    agentltlTemplates.After(a, b),
  ],
  [
    "AllBefore([a, b], c)",
    (t) => first(t, "c") >= 0 && ["a", "b"].every((x) => first(t, x) >= 0 && first(t, x) < first(t, "c")),
    agentltlTemplates.AllBefore([a, b], c),
  ],
  ["BranchCalled(a, b)", (t) => t.includes("a") && !t.includes("b"), agentltlTemplates.BranchCalled(a, b)],
  [
    "CalledNTimes(a, 2, <)",
    (t) => t.filter((x) => x === "a").length < 2,
    agentltlTemplates.CalledNTimes(a, 2, "<"),
  ],
  [
    "CalledNTimes(a, 1, >)",
    (t) => t.filter((x) => x === "a").length > 1,
    agentltlTemplates.CalledNTimes(a, 1, ">"),
  ],
  [
    "CalledInOrder([a, b, a])",
    (t) => {
      let at = 0;
      for (const x of t) if (x === ["a", "b", "a"][at]) at++;
      return at === 3;
    },
    agentltlTemplates.CalledInOrder([a, b, a]),
  ],
  [
    "InstanceBefore(a, 2, b, 1)",
    (t) => nth(t, "a", 2) >= 0 && nth(t, "b", 1) >= 0 && nth(t, "a", 2) < nth(t, "b", 1),
    agentltlTemplates.InstanceBefore(a, 2, b, 1),
  ],
  [
    "WithinSteps(a, b, 2)",
    (t) => {
      const i = first(t, "a");
      const j = t.findIndex((x, k) => x === "b" && k >= i);
      return i >= 0 && j >= 0 && j - i <= 2;
    },
    agentltlTemplates.WithinSteps(a, b, 2),
  ],
];

describe("AgentLTL's catalogue", () => {
  test("each template holds exactly where AgentLTL's definition does (every trace over a, b, c, '' up to 5 calls)", () => {
    const traces: string[][] = [[]];
    for (let length = 1; length <= 5; length++)
      for (const shorter of traces.filter((trace) => trace.length === length - 1))
        for (const name of ["a", "b", "c", ""]) traces.push([...shorter, name]);
    for (const [name, meaning, formula] of reference)
      for (const trace of traces.filter((entry) => entry.length > 0))
        assert.equal(holds(formula, word(...trace)), meaning(trace), `${name} on [${trace.join(", ")}]`);
  });

  test("Before fails when b never occurs; DECLARE's precedence holds", () => {
    assert.equal(holds(agentltlTemplates.Before(a, b), word("a")), false);
    assert.equal(holds(declareTemplates.precedence(a, b), word("a")), true);
  });
});

describe("AgentLTL's formula syntax", () => {
  test("its functions parse with their meaning, never as atoms", () => {
    const formula = parseFormula('before("fetch", "save") & F(called("done"))');
    const fetch = ["fetch", "save", "done"];
    assert.equal(holds(formula, word(...fetch)), true);
    assert.equal(holds(formula, word("save", "fetch", "done")), false);
    assert.equal(holds(formula, word("fetch", "save")), false);
    assert.ok(!formula.toString().includes("before"));
    assert.equal(
      holds(parseFormula('G(now("deploy") -> X(G(!now("deploy"))))'), word("deploy", "x", "deploy")),
      false,
    );
    assert.equal(
      holds(parseFormula('called_n("poll", >= 2) & in_order(["a", "b"])'), word("a", "poll", "b", "poll")),
      true,
    );
    assert.equal(holds(parseFormula('instance_before("a"[2], "b"[1])'), word("a", "b", "a")), false);
  });

  for (const [text, name] of [
    ['called_with("search", q="cats")', "called_with"],
    ['count_before(now("a"), >= 1)', "count_before"],
    ['G(before("a", "b"))', "before"],
    ['within_steps("a", "b", 2) U c', "within_steps"],
  ] as const) {
    test(`${text} is an error naming ${name}`, () => {
      assert.throws(
        () => parseFormula(text),
        (error: unknown) =>
          error instanceof MentorError &&
          error.code === "MNT_ERR_FORMULA_UNSUPPORTED" &&
          error.message.includes(`${name}(...)`),
      );
    });
  }
});
