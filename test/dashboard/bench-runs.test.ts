import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { repoRoot } from "../../bench/paths.js";
import type { BenchResults } from "../../bench/report.js";
import { buildDashboard, type RunView } from "../../src/dashboard/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { benchRunResults } from "../support/bench-run.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// A benchmark run opened in the run view: the results.json is written by `runBenchmark` against a
// real server (scripted model), so the page reads what the benchmark saves.
const shard = join(repoRoot, "bench", "shards", "travel-server-k5", "results.json");
let directory: string;
let results: BenchResults;
let dashboard: FastifyInstance;

before(async () => {
  let file: string;
  ({ directory, file, results } = await benchRunResults());
  dashboard = await buildDashboard({ policies: [loadPolicy(travelPolicyFile)], results: [file, shard] });
});
after(async () => {
  await dashboard?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

/** The run view a page embeds for its script. */
function embeddedView(page: string): RunView & { run: string; live: boolean } {
  const json = /<script type="application\/json" id="view">([\s\S]*?)<\/script>/.exec(page)?.[1];
  assert.ok(json, "the page embeds its run view");
  return JSON.parse(json);
}

describe("a benchmark run in the run view", () => {
  it("the benchmark keeps each run's messages and the server's verdicts per request", () => {
    const [run] = results.runs;
    assert.ok(run?.conversation);
    assert.equal(run.pass, true, run.reasons.join("; "));
    assert.deepEqual(
      run.conversation.requests.map((request) => request.messages),
      [2, 4, 6, 8],
      "each request sent the messages before it: system, task, then a call and its output per request (the last answered)",
    );
    assert.match(
      String((run.conversation.messages[0] as { content: string }).content),
      /manual of travel, left out/,
    );
  });

  it("Compare links each run to its page, which shows the blocked call, its rules and the advice", async () => {
    const compare = (await dashboard.inject({ url: "/dashboard/compare?file=0" })).body;
    const href = "/dashboard/results/0/run/travel/t01/prompt/0";
    assert.match(compare, new RegExp(`<a class="run-link pass" href="${href}"`));
    const response = await dashboard.inject({ url: href });
    assert.equal(response.statusCode, 200);
    const view = embeddedView(response.body);
    assert.equal(view.live, false, "a saved run does not follow new records");
    assert.match(
      response.body,
      /results\.json<\/a>: task <b>t01<\/b> \(travel\), condition <b>prompt<\/b>, run 1: passed/,
    );
    assert.deepEqual(
      view.columns.map((column) => [column.kind, column.call?.name, column.verdict, column.request]),
      [
        ["proposed", "book_flight", "block", 0],
        ["made", "check_distance", "allow", 0],
        ["made", "check_seats", "allow", 1],
        ["made", "book_flight", "allow", 2],
        ["answer", undefined, "allow", 3],
      ],
    );
    const blocked = view.columns[0];
    assert.deepEqual(blocked?.rules, ["P1", "P5"]);
    assert.equal(blocked?.advice?.call.name, "check_distance");
    assert.deepEqual(view.openDuties, []);
    // The page: the blocked column marked in the matrix, its rules' cells crossed; links to the rules with this run.
    assert.match(
      response.body,
      /<th class="column proposed blocked first" data-column="0"[^>]*>1\. \[block\] book_flight/,
    );
    const p1 = view.rows.findIndex((row) => row.rule === "P1");
    assert.match(
      response.body,
      new RegExp(`class="cell PERM_VIOL broken[^"]*"[^>]*data-row="${p1}" data-column="0"`),
    );
    const rule = /href="(\/dashboard\/policy\/travel\/rule\/P1\?run=[^"]+)"/.exec(response.body)?.[1];
    assert.ok(rule);
    const rulePage = await dashboard.inject({ url: rule.replaceAll("&amp;", "&") });
    assert.equal(rulePage.statusCode, 200, rulePage.body);
    assert.match(rulePage.body, /in run results\/0\/run\/travel\/t01\/prompt\/0/);
    const rulebook = /href="(\/dashboard\/policy\/travel\/automata\?run=[^"]+)"/.exec(response.body)?.[1];
    assert.equal((await dashboard.inject({ url: rulebook as string })).statusCode, 200);
  });

  it("a results file written before the runs kept their conversation says so, and how to get one", async () => {
    const page = (await dashboard.inject({ url: "/dashboard/results/1/run/travel/t01/token/0" })).body;
    assert.match(
      page,
      /travel-server-k5\/results\.json<\/a>: task <b>t01<\/b> \(travel\), condition <b>token<\/b>, run 1: (passed|failed)/,
    );
    assert.match(page, /travel-server-k5\/results\.json: this run has no conversation/);
    assert.match(
      page,
      /written before the benchmarks \(`npm run bench`, `npm run bench:sopbench`\) kept each run's messages/,
    );
    assert.match(page, /rerun it with this build to open its runs here: npm run bench -- --domain travel/);
    const missing = await dashboard.inject({ url: "/dashboard/results/1/run/travel/t01/token/9" });
    assert.equal(missing.statusCode, 404);
    assert.match(missing.body, /has no run 9 of task t01 \(travel\) under token/);
  });
});
