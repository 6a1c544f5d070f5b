import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  binomial,
  meanWithError,
  passAtK,
  passHatK,
  type RunFigures,
  summarize,
} from "../../bench/metrics.js";

const close = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} ≠ ${expected}`);

describe("pass estimators", () => {
  test("binomial coefficients", () => {
    assert.equal(binomial(5, 2), 10);
    assert.equal(binomial(5, 0), 1);
    assert.equal(binomial(5, 5), 1);
    assert.equal(binomial(3, 4), 0);
    assert.equal(binomial(10, 3), 120);
  });

  test("Pass^k = C(c,k)/C(n,k) and Pass@k = 1 − C(n−c,k)/C(n,k), by hand", () => {
    close(passHatK(5, 3, 2), 3 / 10);
    close(passAtK(5, 3, 2), 1 - 1 / 10);
    close(passHatK(5, 4, 3), 4 / 10);
    close(passAtK(5, 1, 3), 1 - 4 / 10);
    close(passHatK(5, 5, 5), 1);
    close(passHatK(5, 4, 5), 0);
    close(passAtK(5, 0, 5), 0);
    close(passAtK(4, 1, 4), 1);
  });

  test("with k = 1 both are the pass rate", () => {
    for (let c = 0; c <= 5; c++) {
      close(passHatK(5, c, 1), c / 5);
      close(passAtK(5, c, 1), c / 5);
    }
  });

  test("impossible counts are rejected with the bench input code", () => {
    assert.throws(() => passHatK(3, 4, 1), { code: "MNT_ERR_BENCH_INPUT" });
    assert.throws(() => passAtK(3, 1, 4), { code: "MNT_ERR_BENCH_INPUT" });
    assert.throws(() => passAtK(3, 1, 0), { code: "MNT_ERR_BENCH_INPUT" });
  });

  test("mean with the standard error over tasks", () => {
    const { mean, standardError } = meanWithError([1, 0, 0.5]);
    close(mean, 0.5);
    close(standardError, Math.sqrt(0.25 / 3));
    assert.deepEqual(meanWithError([0.4]), { mean: 0.4, standardError: 0 });
    assert.ok(Number.isNaN(meanWithError([]).mean));
  });
});

describe("summarize", () => {
  const run = (
    task: string,
    condition: string,
    pass: boolean,
    extra: Partial<RunFigures> = {},
  ): RunFigures => ({
    domain: "travel",
    condition,
    task,
    solvable: true,
    pass,
    proposed: 4,
    blocked: 0,
    repaired: 0,
    seconds: 2,
    shieldSeconds: 0,
    ...extra,
  });
  const runs: RunFigures[] = [
    // Task a passes 3/3, task b 1/3 (under `token`); c is not solvable and left out of the scores.
    run("a", "token", true, { blocked: 1, seconds: 3, shieldSeconds: 0.4 }),
    run("a", "token", true, { blocked: 1, seconds: 3, shieldSeconds: 0.4 }),
    run("a", "token", true, { blocked: 1, seconds: 3, shieldSeconds: 0.4 }),
    run("b", "token", true, { proposed: 2, seconds: 3 }),
    run("b", "token", false, { proposed: 2, seconds: 3 }),
    run("b", "token", false, { proposed: 2, seconds: 3 }),
    run("c", "token", false, { solvable: false, proposed: 6, seconds: 3 }),
    run("a", "none", true),
    run("b", "none", false),
  ];

  test("hand-computed figures", () => {
    const [token, none] = summarize(runs, 2);
    assert.ok(token && none);
    assert.equal(token.condition, "token");
    assert.equal(token.tasks, 2);
    assert.equal(token.runs, 3);
    assert.equal(token.k, 2);
    close(token.passAt1.mean, (1 + 1 / 3) / 2);
    // Pass^2: a → C(3,2)/C(3,2) = 1, b → C(1,2)/C(3,2) = 0; SE = sd([1, 0]) / √2 = 0.5.
    close(token.passHatK.mean, 0.5);
    close(token.passHatK.standardError, 0.5);
    // Pass@2: a → 1, b → 1 − C(2,2)/C(3,2) = 2/3.
    close(token.passAtK.mean, (1 + 2 / 3) / 2);
    // Calls per task over all three tasks: 4, 2, 6; blocks 1, 0, 0.
    close(token.proposedPerTask.mean, 4);
    close(token.blockedPerTask.mean, 1 / 3);
    // 7 runs × 3 s over 3×4 + 3×2 + 6 = 24 calls; none: 2 runs × 2 s over 8 calls.
    close(token.secondsPerCall, 21 / 24);
    close(none.secondsPerCall, 4 / 8);
    close(token.overheadPerCall, 21 / 24 - 4 / 8);
    close(none.overheadPerCall, 0);
    // The server's shield time: 3 × 0.4 s over the 24 calls; the other runs report none.
    close(token.shieldSecondsPerCall, 1.2 / 24);
  });

  test("k is capped by the runs each task has", () => {
    const [, none] = summarize(runs, 5);
    assert.equal(none?.k, 1);
    close(none?.passHatK.mean ?? Number.NaN, 0.5);
  });

  test("without a none condition there is no overhead figure", () => {
    const [token] = summarize(
      runs.filter((one) => one.condition === "token"),
      2,
    );
    assert.ok(Number.isNaN(token?.overheadPerCall));
  });
});
