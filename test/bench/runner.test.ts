import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { readTurnRecord } from "../../bench/agent.js";
import { mergeResults } from "../../bench/merge.js";
import { repoRoot, resolveDataDir } from "../../bench/paths.js";
import { type BenchResults, barChart, renderReport } from "../../bench/report.js";
import { type BenchOptions, runBenchmark, servedModel, summaryTable } from "../../bench/run.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import { startServer } from "../../src/server/index.js";
import { fixtureBenchData } from "../support/bench-data.js";
import { benchResults, runRecord } from "../support/bench-results.js";

const scratch = () => mkdtempSync(join(tmpdir(), "mentor-bench-"));
const options = (overrides: Partial<BenchOptions>): BenchOptions => ({
  domains: ["travel", "tau2-mock"],
  agent: "oracle",
  model: "none",
  conditions: ["none"],
  runs: 2,
  out: scratch(),
  seed: 1,
  temperature: 0,
  maxCalls: 40,
  maxTokens: 256,
  contextSize: 4096,
  grounding: "server",
  progress: false,
  dataDir: fixtureBenchData,
  ...overrides,
});

describe("benchmark runner", () => {
  test("the oracle agent passes every solvable task of travel and tau2-mock; results and report are written", async () => {
    const settings = options({});
    const results = await runBenchmark(settings);
    const travel = results.summary.find((row) => row.domain === "travel");
    const mock = results.summary.find((row) => row.domain === "tau2-mock");
    assert.equal(travel?.tasks, 23);
    assert.equal(mock?.tasks, 6);
    for (const row of results.summary) {
      assert.deepEqual([row.passAt1.mean, row.passHatK.mean, row.k], [1, 1, 2], row.domain);
    }
    assert.equal(results.runs.length, (23 + 9) * 2);
    const saved = JSON.parse(readFileSync(join(settings.out, "results.json"), "utf8")) as BenchResults;
    assert.equal(saved.runs.length, results.runs.length);
    assert.ok(saved.runs.every((run) => run.trace.length === run.proposed));
    const html = readFileSync(join(settings.out, "report.html"), "utf8");
    assert.match(html, /<table id="tasks">/);
    assert.match(html, /<td>travel<\/td><td>t01<\/td>/);
    assert.match(html, /not scored: it continues an earlier conversation/);
    // Per domain: Pass figures, seconds per call, the per-task chart.
    assert.equal(html.match(/<section class="domain"/g)?.length, 2);
    assert.equal(html.match(/<svg /g)?.length, 6);
  });

  test("--limit and --tasks FILE", async () => {
    const limited = await runBenchmark(options({ domains: ["travel"], limit: 3, runs: 1 }));
    assert.deepEqual(
      limited.runs.map((run) => run.task),
      ["t01", "t02", "t03"],
    );
    const file = join(scratch(), "tasks.json");
    writeFileSync(
      file,
      JSON.stringify([
        {
          id: "mine",
          opening: "Book a train from Toronto to Ottawa.",
          trips: [{ origin: "Toronto", destination: "Ottawa", urgent: false }],
          reference: [
            { name: "check_distance", arguments: { origin: "Toronto", destination: "Ottawa" } },
            {
              name: "book_flight",
              arguments: { origin: "Toronto", destination: "Ottawa", travel_class: "economy" },
            },
          ],
        },
      ]),
    );
    const custom = await runBenchmark(options({ domains: ["travel"], tasksFile: file, runs: 1 }));
    assert.deepEqual(
      custom.runs.map((run) => [run.task, run.pass]),
      [["mine", false]],
    );
    assert.match(custom.runs[0]?.reasons.join(";") ?? "", /P2: call 2 book_flight/);
    await assert.rejects(runBenchmark(options({ tasksFile: file })), { code: "MNT_ERR_BENCH_INPUT" });
  });

  test("--resume keeps the runs already in --out and runs only the rest; other settings are refused", async () => {
    const out = scratch();
    const first = await runBenchmark(options({ domains: ["travel"], limit: 2, runs: 1, out }));
    assert.equal(first.runs.length, 2);
    // A run that failed with an error (say a request timeout) runs again.
    const file = join(out, "results.json");
    const saved = JSON.parse(readFileSync(file, "utf8")) as BenchResults;
    writeFileSync(
      file,
      JSON.stringify({
        ...saved,
        runs: [saved.runs[0], { ...saved.runs[1], pass: false, error: "408 timeout" }],
      }),
    );
    assert.match(first.meta.build ?? "", /^[0-9a-f]{7,}(\+dirty)?$/);
    const resumed = await runBenchmark(
      options({ domains: ["travel"], limit: 3, runs: 1, out, resume: true }),
    );
    assert.deepEqual(
      resumed.runs.map((run) => run.task),
      ["t01", "t02", "t03"],
    );
    assert.deepEqual(resumed.runs[0], first.runs[0]);
    assert.deepEqual(
      resumed.runs.map((run) => [run.task, run.pass, run.error]),
      [
        ["t01", true, undefined],
        ["t02", true, undefined],
        ["t03", true, undefined],
      ],
    );
    assert.equal(resumed.meta.started, first.meta.started);
    await assert.rejects(
      runBenchmark(options({ domains: ["travel"], runs: 1, out, resume: true, seed: 9 })),
      {
        code: "MNT_ERR_BENCH_INPUT",
        message: /cannot resume: .*meta\.seed is 9/,
      },
    );
  });

  test("results of task shards merge into one summary; settings that differ are named", async () => {
    const tasks = JSON.parse(
      readFileSync(
        fileURLToPath(new URL("../../../bench/domains/travel/tasks.json", import.meta.url)),
        "utf8",
      ),
    ) as unknown[];
    const shard = (from: number, to: number) => {
      const file = join(scratch(), "tasks.json");
      writeFileSync(file, JSON.stringify(tasks.slice(from, to)));
      return runBenchmark(options({ domains: ["travel"], tasksFile: file }));
    };
    const [first, second] = [await shard(0, 2), await shard(1, 4)];
    const { merged, duplicates } = mergeResults([
      { path: "a.json", results: first },
      { path: "b.json", results: second },
    ]);
    assert.equal(duplicates, 2, "t02's two runs are in both shards");
    assert.deepEqual([...new Set(merged.runs.map((run) => run.task))], ["t01", "t02", "t03", "t04"]);
    assert.equal(merged.summary[0]?.tasks, 4);
    assert.equal(merged.summary[0]?.passHatK.mean, 1);
    const other = { ...second, meta: { ...second.meta, seed: 7 } };
    assert.throws(
      () =>
        mergeResults([
          { path: "a.json", results: first },
          { path: "b.json", results: other },
        ]),
      { code: "MNT_ERR_BENCH_INPUT", message: /b\.json: meta\.seed is 7, but a\.json has 1/ },
    );
  });

  test("bad options are clear errors", async () => {
    await assert.rejects(runBenchmark(options({ domains: ["nowhere"] })), /unknown domain "nowhere"/);
    // Without --server the runner serves --model itself: an unknown model is named.
    await assert.rejects(runBenchmark(options({ agent: "model", model: "no-such-model" })), {
      code: "MNT_ERR_MODEL_UNKNOWN",
      message: /no-such-model/,
    });
    // A tau2 domain without its data directory: the error says where to get the data.
    await assert.rejects(runBenchmark(options({ dataDir: "/nonexistent/bench-data" })), {
      code: "MNT_ERR_BENCH_INPUT",
      message:
        /\/nonexistent\/bench-data does not exist: give --data DIR or set MENTOR_BENCH_DATA .*github\.com\/sierra-research\/tau2-bench.*github\.com\/sierra-research\/tau-bench\b/,
    });
  });

  test("an empty MENTOR_BENCH_DATA counts as unset (not the working directory)", () => {
    const saved = process.env.MENTOR_BENCH_DATA;
    process.env.MENTOR_BENCH_DATA = "";
    try {
      const dir = resolveDataDir();
      assert.equal(dir, join(repoRoot, "..", "shared", "bench-data"));
    } catch (error) {
      assert.match((error as Error).message, /shared\/bench-data does not exist/);
    } finally {
      if (saved === undefined) delete process.env.MENTOR_BENCH_DATA;
      else process.env.MENTOR_BENCH_DATA = saved;
    }
  });

  test("travel needs no data directory (its data is in the repository)", async () => {
    const results = await runBenchmark(
      options({ domains: ["travel"], limit: 1, runs: 1, dataDir: "/nonexistent/bench-data" }),
    );
    assert.deepEqual(
      results.runs.map((run) => [run.task, run.pass]),
      [["t01", true]],
    );
  });

  test("the model agent takes a .gguf path in process, and --server with or without /v1", async () => {
    const model = join(scratch(), "tiny-qwen3.gguf");
    await makeTinyModel({ family: "qwen3", outputPath: model, seed: 7 });
    const settings = {
      agent: "model" as const,
      domains: ["travel"],
      limit: 1,
      runs: 1,
      conditions: ["none"],
      maxCalls: 1,
      maxTokens: 64,
      grounding: "oracle" as const,
    };
    // A path: the in-process server serves it under its file name, and the runner sends that id.
    const inProcess = await runBenchmark(options({ ...settings, model, contextSize: 4096 }));
    assert.equal(inProcess.meta.model, "tiny-qwen3");
    assert.equal(inProcess.runs[0]?.error, undefined, inProcess.runs[0]?.error);
    // A conversation longer than the context ends the run (failed, not an error to run again).
    const small = await runBenchmark(options({ ...settings, model, contextSize: 512 }));
    assert.equal(small.runs[0]?.error, undefined, small.runs[0]?.error);
    assert.equal(small.runs[0]?.stopped, "context");
    assert.equal(small.runs[0]?.pass, false);

    const server = await startServer({ model, policies: ["travel"], port: 0, sequences: 1, logger: false });
    try {
      for (const url of [server.url, `${server.url}/v1`, `${server.url}/v1/`]) {
        const remote = await runBenchmark(options({ ...settings, server: url, model: undefined }));
        assert.equal(remote.meta.model, "tiny-qwen3", url);
        assert.equal(remote.runs[0]?.error, undefined, remote.runs[0]?.error);
      }
      assert.equal(await servedModel(server.url, model), "tiny-qwen3", "the file the server serves");
      assert.equal(await servedModel(`${server.url}/v1`, "tiny-qwen3:none"), "tiny-qwen3:none");
      await assert.rejects(servedModel(server.url, "gemma-3-270m"), {
        code: "MNT_ERR_BENCH_INPUT",
        message: /serves tiny-qwen3, not "gemma-3-270m"/,
      });
    } finally {
      await server.close();
    }
  });

  test("the report renders the summary, the charts and the per-task table", () => {
    const runs = [true, false, true].map((pass, run) =>
      runRecord(
        { condition: run === 1 ? "none" : "token", run },
        { pass, reasons: pass ? [] : ["P1: <booked> first"], blocked: run },
      ),
    );
    const results = benchResults(runs, 1, {
      command: "npm run bench -- --domain travel",
      model: "gemma-3-270m",
      conditions: ["none", "token"],
    });
    const html = renderReport(results);
    assert.match(html, /<table id="summary">/);
    assert.match(html, /<td class="fail" title="P1: &lt;booked&gt; first">0\/1/);
    assert.match(html, /travel: Pass\^1 \(±1 SE over tasks\)/);
    assert.equal(html.match(/<svg /g)?.length, 3);
    // A bar per condition: Pass^1 (none's is 0: a sliver), 2 × seconds per call, 3 × the task's panels.
    // Pass (1 group), seconds (2), per task (4 panels: calls, blocked, broke a block rule, done refusals).
    assert.equal(html.match(/<rect [^>]*><title>/g)?.length, 2 * (1 + 2 + 4));
    assert.match(summaryTable(results.summary), /\| travel \| token \| 1 \| 2 \| 1\.00 ± 0 /);
  });
});

describe("the report's charts", () => {
  const record = (
    domain: string,
    task: string,
    condition: string,
    run: number,
    figures: { pass: boolean; proposed: number; blocked?: number; doneRefusals?: number; solvable?: boolean },
  ) =>
    runRecord(
      { domain, task, condition, run },
      { ...figures, seconds: figures.proposed * 2, shieldSeconds: figures.proposed * 0.1, secondsPerCall: 2 },
    );
  // travel: three tasks (one id with markup), none passes one of them, token all: none's Pass^2 has
  // an SE, token's not. tau2-mock: one task, so no SE anywhere in its Pass chart.
  const runs = [
    ...[0, 1].flatMap((run) => [
      record("travel", "t01", "none", run, { pass: true, proposed: 2 + run * 2 }),
      record("travel", "t02", "none", run, { pass: false, proposed: 5 }),
      record("travel", "a<b>&c", "none", run, { pass: false, proposed: 1 }),
      record("travel", "t01", "token", run, { pass: true, proposed: 3, blocked: 1 }),
      record("travel", "t02", "token", run, { pass: true, proposed: 4, doneRefusals: 1 + run }),
      record("travel", "a<b>&c", "token", run, { pass: true, proposed: 2, blocked: 2 }),
      record("tau2-mock", "m1", "none", run, { pass: false, proposed: 1 }),
      record("tau2-mock", "m1", "token", run, { pass: true, proposed: 2 }),
      record("tau2-mock", "m2", "token", run, { pass: false, proposed: 9, solvable: false }),
    ]),
  ];
  const results = benchResults(runs, 2);
  const html = renderReport(results);
  const sections = html.split('<section class="domain"').slice(1);
  const chart = (section: string, label: RegExp) =>
    section.split("<svg ").find((svg) => label.test(svg.slice(0, 400))) ?? "";

  test("a section per domain in the summary's order, then the summary table, then the per-task table", () => {
    assert.equal(sections.length, 2);
    assert.match(sections[0] ?? "", /^ id="domain-0">\n<h2>travel<\/h2>/);
    assert.match(sections[1] ?? "", /^ id="domain-1">\n<h2>tau2-mock<\/h2>/);
    const lastSection = html.lastIndexOf('<section class="domain"');
    const summaryTable = html.indexOf('<table id="summary">');
    assert.ok(lastSection < summaryTable && summaryTable < html.indexOf('<table id="tasks">'));
    for (const section of sections) assert.equal(section.match(/<svg /g)?.length, 3);
    assert.match(
      sections[1] ?? "",
      /Not scored \(left out of the Pass figures, still in the per-task chart\): m2\./,
    );
  });

  test("Pass@1, Pass@k and Pass^k per condition, whiskers only where the SE > 0", () => {
    const travel = chart(sections[0] ?? "", /aria-label="travel: Pass@1, Pass@2, Pass\^2/);
    const mock = chart(sections[1] ?? "", /aria-label="tau2-mock: Pass@1, Pass@2, Pass\^2/);
    assert.ok(travel && mock);
    // Three figures × two conditions; none's Pass^2 over (1, 0, 0) is 0.33 ± 0.33.
    assert.equal(travel.match(/<rect [^>]*><title>/g)?.length, 6);
    assert.match(travel, /<title>Pass\^2 · none: 0\.33 ± 0\.33<\/title>/);
    assert.equal(travel.match(/class="se"/g)?.length, 3, "none's three figures");
    assert.equal(mock.match(/class="se"/g), null, "one scored task: SE 0");
  });

  test("the per-task chart: each task id along x, calls, blocks, calls that broke a block rule and done refusals per condition", () => {
    const perTask = chart(sections[0] ?? "", /aria-label="travel: per task/);
    for (const id of ["t01", "t02", "a&lt;b&gt;&amp;c"]) {
      assert.equal(perTask.match(new RegExp(`<title>${id}</title>${id}</text>`, "g"))?.length, 4, id);
    }
    for (const panel of [
      "Tool calls proposed",
      "Calls blocked",
      "Calls that broke a block rule",
      "done refusals",
    ])
      assert.match(perTask, new RegExp(panel));
    // Means over the two runs, ± SE over runs.
    assert.match(perTask, /<title>t01 · none: 3\.00 ± 1\.00 calls<\/title>/);
    assert.match(perTask, /<title>a&lt;b&gt;&amp;c · token: 2\.00 calls<\/title>/);
    assert.match(perTask, /<title>t02 · token: 1\.50 ± 0\.50 refusals<\/title>/);
    assert.equal(perTask.match(/<rect [^>]*><title>/g)?.length, 3 * 4 * 2);
    const mockTasks = chart(sections[1] ?? "", /aria-label="tau2-mock: per task/);
    assert.match(mockTasks, /<title>m2<\/title>m2<\/text>/);
    assert.doesNotMatch(mockTasks, /<title>t01</);
  });

  test("every text escaped; a condition keeps its colour in every chart", () => {
    assert.ok(!html.includes("a<b"), "no raw < from a task id");
    assert.ok(html.includes("a&lt;b&gt;&amp;c"));
    const fills = (condition: string) =>
      new Set(
        [...html.matchAll(new RegExp(`fill="(#[0-9a-f]+)"><title>[^<]* · ${condition}:`, "g"))].map(
          (m) => m[1],
        ),
      );
    assert.equal(fills("none").size, 1);
    assert.equal(fills("token").size, 1);
    assert.notDeepEqual(fills("none"), fills("token"));
  });

  test("barChart: no bar for a missing value, a sliver for 0, a whisker per estimate with SE > 0", () => {
    const svg = barChart({
      title: "T <x>",
      unit: "s",
      groups: ["a", "b"],
      series: [
        { name: "one", values: [{ mean: 0.5, standardError: 0.1 }, Number.NaN] },
        { name: "two", values: [0, { mean: 0.2, standardError: 0 }], color: "#123456" },
      ],
      max: 1,
    });
    assert.equal(svg.match(/<rect [^>]*><title>/g)?.length, 3);
    assert.equal(svg.match(/class="se"/g)?.length, 1);
    assert.match(svg, /height="1\.5" fill="#123456"><title>a · two: 0 s<\/title>/);
    assert.match(svg, /aria-label="T &lt;x&gt;"/);
    assert.ok(!svg.includes("<x>"));
  });
});

describe("npm run bench (the command line)", () => {
  const script = fileURLToPath(new URL("../../bench/run.js", import.meta.url));
  const bench = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: "utf8" });

  test("runs the oracle with every option the model agent takes, and prints the table and the paths", () => {
    const out = scratch();
    const result = bench(
      ...[
        "--domain",
        "travel",
        "--agent",
        "oracle",
        "--limit",
        "2",
        "--runs",
        "1",
        "--out",
        out,
        "--no-progress",
      ],
      ...[
        "--seed",
        "3",
        "--temperature",
        "0",
        "--max-calls",
        "10",
        "--max-tokens",
        "64",
        "--grounding",
        "oracle",
      ],
    );
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /\| travel \| oracle \| 2 \| 1 \| 1\.00 ± 0 /);
    assert.match(result.stdout, new RegExp(`report: +${out}/report.html`));
    const saved = JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as BenchResults;
    assert.equal(saved.meta.grounding, "oracle");
    assert.equal(saved.meta.seed, 3);
    assert.match(saved.meta.command, /--domain travel --agent oracle/);
  });

  test("bad options exit with status 2 and say which", () => {
    const gpu = bench("--domain", "travel", "--gpu", "tpu");
    assert.equal(gpu.status, 2);
    assert.match(gpu.stderr, /--gpu must be one of auto, cpu, cuda, vulkan, metal, not "tpu"/);
    const grounding = bench("--domain", "travel", "--grounding", "labeler");
    assert.equal(grounding.status, 2);
    assert.match(grounding.stderr, /MNT_ERR_BENCH_INPUT: --grounding must be server or oracle/);
    const condition = bench("--domain", "travel", "--conditions", "none,strict");
    assert.match(condition.stderr, /unknown condition "strict"/);
    assert.notEqual(bench("--domain", "travel", "--runs", "0").status, 0);
  });
});

describe("the server's mentor field", () => {
  const record = (mode: string) => ({
    mode,
    attempts: [
      {
        calls: [
          {
            call: { name: "book_train", arguments: { origin: "A" } },
            verdict: "block",
            rules: ["P1"],
            feedback: "[SHIELD] Blocked",
          },
        ],
        decideMs: 30,
      },
      {
        calls: [{ call: { name: "check_distance", arguments: {} }, verdict: "allow", rules: [] }],
        decideMs: 20,
      },
    ],
    blocked: 1,
    repairs: [{ kind: "repair" }],
    doneRefusals: 1,
    timings: { groundMs: 50, prepareMs: 7, totalMs: 900 },
  });

  test("shielded turns: blocked calls, repairs, refusals and shield time", () => {
    const figures = readTurnRecord(record("prompt"));
    assert.deepEqual(figures.blocked, [
      { name: "book_train", arguments: { origin: "A" }, rules: ["P1"], feedback: "[SHIELD] Blocked" },
    ]);
    assert.equal(figures.violations, 1);
    assert.equal(figures.repaired, 1);
    assert.equal(figures.doneRefusals, 1);
    // Grounding 50 + next and reminder 7 + decisions 30 + 20 ms.
    assert.ok(Math.abs(figures.shieldSeconds - 0.107) < 1e-12);
  });

  test("mode none: what the evaluator would have blocked is a violation, not a block", () => {
    const figures = readTurnRecord(record("none"));
    assert.deepEqual(figures.blocked, []);
    assert.equal(figures.violations, 1);
  });

  test("no field, nothing counted", () => {
    assert.deepEqual(readTurnRecord(undefined), {
      blocked: [],
      repaired: 0,
      violations: 0,
      doneRefusals: 0,
      shieldSeconds: 0,
      stuck: false,
    });
  });
});
