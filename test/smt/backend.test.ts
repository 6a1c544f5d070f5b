/**
 * The two Z3 builds: which one a client picks (native where the `z3` binary is found, WASM
 * otherwise, overridable), and that they agree — the same sat/unsat and repair status, the same
 * changed arguments, and models that satisfy every constraint under the evaluator — on random
 * constraint sets sent straight to the solver (no direct search).
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { seededRandom } from "../../src/base/random.js";
import { MentorError } from "../../src/errors/index.js";
import { type Expression, holdsIn, parseExpression, type Value } from "../../src/expression/index.js";
import { type RepairRequest, SolverClient, type SolverTool } from "../../src/smt/index.js";
import { findZ3Binary } from "../../src/smt/native.js";
import { missingTool } from "../support/system-tools.js";

const binary = findZ3Binary();
const absent = missingTool("z3", binary !== undefined);

describe("backend selection", () => {
  test("wasm on request, native on request where the binary exists, auto takes native only where it is found", async () => {
    assert.equal(new SolverClient({ backend: "wasm" }).backend, "wasm");
    assert.equal(new SolverClient({ backend: "auto", z3Path: "/nonexistent/z3" }).backend, "wasm");
    assert.throws(
      () => new SolverClient({ backend: "native", z3Path: "/nonexistent/z3" }),
      (error) => error instanceof MentorError && error.code === "MNT_ERR_BAD_INPUT",
    );
    assert.throws(
      () => new SolverClient({ backend: "cvc5" as "wasm" }),
      (error) => error instanceof MentorError && error.code === "MNT_ERR_BAD_INPUT",
    );
    assert.equal(new SolverClient({ backend: "auto" }).backend, binary === undefined ? "wasm" : "native");
  });

  test("MENTOR_SMT_BACKEND chooses when the option does not", () => {
    const saved = process.env.MENTOR_SMT_BACKEND;
    try {
      process.env.MENTOR_SMT_BACKEND = "wasm";
      assert.equal(new SolverClient().backend, "wasm");
      process.env.MENTOR_SMT_BACKEND = "bogus";
      assert.throws(
        () => new SolverClient(),
        (error) => error instanceof MentorError && error.code === "MNT_ERR_BAD_INPUT",
      );
      assert.equal(new SolverClient({ backend: "wasm" }).backend, "wasm");
    } finally {
      if (saved === undefined) delete process.env.MENTOR_SMT_BACKEND;
      else process.env.MENTOR_SMT_BACKEND = saved;
    }
  });

  test("the native backend is the default where z3 is on PATH", { skip: absent }, () => {
    const saved = process.env.MENTOR_SMT_BACKEND;
    try {
      delete process.env.MENTOR_SMT_BACKEND;
      assert.equal(new SolverClient().backend, "native");
    } finally {
      if (saved !== undefined) process.env.MENTOR_SMT_BACKEND = saved;
    }
  });
});

const tool: SolverTool = {
  name: "t",
  parameters: [
    { name: "s", type: "string" },
    { name: "u", type: "string" },
    { name: "n", type: "integer" },
    { name: "r", type: "number" },
    { name: "b", type: "boolean" },
    { name: "e", type: { enum: ["economy", "business", "first"] } },
  ],
};
const names = tool.parameters.map((parameter) => parameter.name);

const atoms = [
  "a.s.contains('ab')",
  "!a.s.contains('b')",
  "a.s.startsWith('a\\\\')",
  "a.s.endsWith('é\"')",
  "a.s == x",
  "a.s < 'b'",
  "a.s + a.u == 'abab'",
  "a.u.endsWith(a.s)",
  "'c' in a.u",
  "len(a.u) >= 3",
  "len(a.s) + a.n == 4",
  "a.n > 2",
  "a.n * 2 - 1 <= 9",
  "-a.n < 3",
  "a.r >= 1.5",
  "a.r / 4 < a.n",
  "a.r + 0.25 == 3",
  "a.b",
  "!a.b || a.n != 3",
  "a.e == 'economy' || task.c.urgent == true",
  "a.e in ['business', last('v').class]",
  "a.r <= last('v').amount",
  "a.u == null",
].map((text) => parseExpression(text));

const valuesOf: Record<string, Value[]> = {
  s: ["", "ab", "a\\", 'bé"', "zz"],
  u: ["", "abc", "cab", "xyz"],
  n: [-2, 0, 3, 7],
  r: [-1.5, 0.5, 2.75, 12],
  b: [true, false],
  e: ["economy", "business", "first"],
};

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;

function randomRequest(next: () => number): RepairRequest {
  const constraint = (depth: number): Expression => {
    const roll = next();
    if (depth === 0 || roll < 0.5) return pick(next, atoms);
    const left = constraint(depth - 1);
    if (roll < 0.6) return { kind: "unary", operator: "!", operand: left, offset: 0, length: 0 };
    const right = constraint(depth - 1);
    return { kind: "binary", operator: roll < 0.85 ? "&&" : "||", left, right, offset: 0, length: 0 };
  };
  const args: Record<string, Value> = {};
  for (const name of names) if (next() < 0.85) args[name] = pick(next, valuesOf[name] as Value[]);
  const last = { class: pick(next, ["first", "economy"]), amount: pick(next, [2.5, 10]) };
  return {
    tool: { ...tool, required: names.filter(() => next() < 0.4) },
    arguments: args,
    constraints: Array.from({ length: 1 + Math.floor(next() * 3) }, () => constraint(2)),
    scope: {
      variables: { x: "ab" },
      task: { c: { urgent: next() < 0.3 } },
      history: { last: () => last, outcomes: () => [], held: () => false, count: () => 0, values: () => [] },
    },
    repairable: names.filter(() => next() < 0.6),
    candidates: next() < 0.4 ? { s: ["ab"], n: [3], e: ["first"] } : {},
  };
}

const holds = (request: RepairRequest, args: Record<string, Value>) =>
  request.constraints.every((constraint) => holdsIn(constraint, { ...request.scope, arguments: args }));

/** The answer, or the error code when the solver gives up (a timeout is allowed to differ). */
async function answer<T>(promise: Promise<T>): Promise<T | string> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof MentorError && error.code === "MNT_ERR_SMT_TIMEOUT") return error.code;
    throw error;
  }
}

describe("native and WASM agree", { skip: absent }, () => {
  const native = new SolverClient({ backend: "native", timeoutMs: 3000 });
  const wasm = new SolverClient({ backend: "wasm", timeoutMs: 3000 });
  after(() => Promise.all([native.close(), wasm.close()]));

  test("on 150 random repairs and 150 satisfiability questions through the solver", async () => {
    const next = seededRandom(31);
    const tally = { compared: 0, repaired: 0, unsat: 0, sat: 0, unsupported: 0, timeouts: 0 };
    for (let index = 0; index < 150; index++) {
      const request = { ...randomRequest(next), candidatesFirst: false };
      const [left, right] = [await answer(native.repair(request)), await answer(wasm.repair(request))];
      const context = `repair ${index}: ${JSON.stringify({ ...request, scope: undefined })}\nnative ${JSON.stringify(left)}\nwasm ${JSON.stringify(right)}`;
      if (typeof left === "string" || typeof right === "string") {
        tally.timeouts++;
        continue;
      }
      tally.compared++;
      assert.equal(left.status, right.status, context);
      if (left.status === "unsupported") tally.unsupported++;
      if (left.status === "unsat") tally.unsat++;
      if (left.status === "repaired" && right.status === "repaired") {
        tally.repaired++;
        assert.deepEqual(left.changed, right.changed, context);
        assert.ok(holds(request, left.arguments), context);
      }
    }
    for (let index = 0; index < 150; index++) {
      const request = randomRequest(next);
      const fixed = Object.fromEntries(Object.entries(request.arguments).filter(() => next() < 0.3));
      const query = {
        tool: request.tool,
        constraints: request.constraints,
        scope: request.scope,
        fixed,
        directFirst: false,
      };
      const [left, right] = [await answer(native.satisfiable(query)), await answer(wasm.satisfiable(query))];
      const context = `question ${index}: ${JSON.stringify({ ...query, scope: undefined })}\nnative ${JSON.stringify(left)}\nwasm ${JSON.stringify(right)}`;
      if (typeof left === "string" || typeof right === "string") {
        tally.timeouts++;
        continue;
      }
      tally.compared++;
      assert.equal(left.status, right.status, context);
      if (left.status === "sat") {
        tally.sat++;
        assert.ok(holds(request, left.example), context);
        for (const [name, value] of Object.entries(fixed))
          assert.deepEqual(left.example[name], value, context);
      }
    }
    console.log(`native vs wasm: ${JSON.stringify(tally)}`);
    assert.ok(
      tally.compared >= 250 && tally.repaired >= 30 && tally.unsat >= 20 && tally.sat >= 30,
      JSON.stringify(tally),
    );
  });
});
