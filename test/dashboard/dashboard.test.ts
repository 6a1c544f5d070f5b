import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { renderReport } from "../../bench/report.js";
import {
  buildDashboard,
  conversations,
  countsOf,
  type FlightRecord,
  RecordStore,
  type RunView,
  runView,
} from "../../src/dashboard/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import { describeInstance, Run, traceFromMessages } from "../../src/run/index.js";
import { buildServer } from "../../src/server/index.js";
import { benchResults, runRecord } from "../support/bench-results.js";
import {
  recordOperatorRuns,
  recordRuns,
  recordTravelRuns,
  secondRequestMessages,
  writeTravelPolicyWith,
} from "../support/recorded-runs.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// The dashboard on flight records a real server wrote (scripted generator, prompt shield, the
// travel policy's rules grounding the text): the records, the run matrix, the pages and routes.
// test/dashboard/browser.test.ts looks at the same pages in headless Chromium.
const policy = loadPolicy(travelPolicyFile);
let directory: string;
let ids: string[];
let dashboard: FastifyInstance;

before(async () => {
  ({ directory, ids } = await recordTravelRuns());
  dashboard = await buildDashboard({ recorderDirectory: directory, policies: [policy] });
});
after(async () => {
  await dashboard?.close();
  rmSync(directory, { recursive: true, force: true });
});

function recordOf(id: string): FlightRecord {
  const store = new RecordStore(directory);
  store.refresh();
  const stored = store.get(id);
  assert.ok(stored, `record ${id}`);
  return stored.record;
}

const row = (view: RunView, key: string) => view.rows.findIndex((one) => one.key === key);
const route = 'route(x="Toronto", y="Chicago")';

describe("flight records", () => {
  it("keep the messages the turn judged, and are listed newest first", () => {
    const store = new RecordStore(directory);
    assert.equal(store.refresh(), 3);
    assert.deepEqual(
      store.newestFirst().map((stored) => stored.record.id),
      [...ids].reverse(),
    );
    assert.deepEqual(store.get(ids[1] as string)?.record.messages, secondRequestMessages);
    assert.equal(store.refresh(), 0, "nothing new");
  });

  it("form conversations: each request continues the one whose messages and answer begin its own", async () => {
    const store = new RecordStore(directory);
    store.refresh();
    const records = store.newestFirst().map((stored) => stored.record);
    const places = conversations(records);
    assert.deepEqual(
      ids.map((id) => places.get(id)),
      [1, 2, 3].map((position) => ({ position, count: 3, latest: ids[2], requests: ids })),
    );
    // The same task run again (a benchmark's next run) is a conversation of its own.
    const again = await recordTravelRuns();
    try {
      const more = new RecordStore(again.directory);
      more.refresh();
      const both = conversations([...records, ...more.newestFirst().map((stored) => stored.record)]);
      assert.deepEqual(
        again.ids.map((id) => both.get(id)),
        [1, 2, 3].map((position) => ({ position, count: 3, latest: again.ids[2], requests: again.ids })),
      );
      assert.equal(both.get(ids[0] as string)?.latest, ids[2]);
    } finally {
      rmSync(again.directory, { recursive: true, force: true });
    }
    // A request whose history differs from what the earlier one returned starts a conversation.
    const [first, second] = records.slice().reverse() as [FlightRecord, FlightRecord];
    const edited = {
      ...second,
      id: "edited",
      messages: [...(second.messages ?? []).slice(0, 1), { role: "assistant", content: "Hi." }],
    };
    assert.equal(conversations([first, edited]).get("edited")?.position, 1);
  });

  it("name the file and line of a line that is not a record, and read a line only once it is complete", () => {
    const own = mkdtempSync(join(tmpdir(), "mentor-records-"));
    const file = join(own, "flight-x.jsonl");
    const good = readFileSync(join(directory, readdirSync(directory)[0] as string), "utf8").split("\n")[0];
    writeFileSync(file, `${good}\nnot json\n{"id": "x", "time": "t"}\n`);
    const store = new RecordStore(own);
    assert.equal(store.refresh(), 1);
    assert.equal(store.problems.length, 2);
    assert.match(store.problems[0] as string, /flight-x\.jsonl:2: not JSON/);
    assert.match(store.problems[1] as string, /flight-x\.jsonl:3: field status: missing or not a number/);
    appendFileSync(file, '{"id": "y", "time": "2030-01-01T00:00:00Z", "status": 200');
    assert.equal(store.refresh(), 0, "a line without its newline waits");
    appendFileSync(file, "}\n");
    assert.equal(store.refresh(), 1);
    assert.equal(store.newestFirst()[0]?.record.id, "y");
  });
});

describe("a run's rules × calls matrix", () => {
  it("the first request: the business flight blocked by P1, P5 and P3 in their cells, then the distance check returned", () => {
    const view = runView(policy, recordOf(ids[0] as string));
    assert.deepEqual(
      view.columns.map((column) => [column.kind, column.call?.name, column.verdict, column.returned]),
      [
        ["proposed", "book_flight", "block", false],
        ["proposed", "check_distance", "allow", true],
      ],
    );
    assert.deepEqual(view.columns[0]?.rules.sort(), ["P1", "P3", "P5"]);
    assert.match(view.columns[0]?.feedback ?? "", /^\[SHIELD\] Blocked book_flight/);
    for (const key of [`P1 for ${route}`, `P5 for ${route}`, "P3"]) {
      const cell = view.cells[row(view, key)]?.[0];
      assert.deepEqual([cell?.colour, cell?.broken], ["PERM_VIOL", true], key);
    }
    const p2 = view.cells[row(view, `P2 for ${route}`)]?.[0];
    assert.equal(p2?.broken, undefined, "P2 is not why the flight was blocked");
    // The grounding: the task from the user's text by the policy's patterns.
    assert.deepEqual(view.task, [
      {
        name: "request_travel",
        arguments: {
          origin: "Toronto",
          destination: "Chicago",
          urgent: false,
          mode: "flight",
          travel_class: "economy",
        },
      },
    ]);
    assert.deepEqual(
      view.grounding.map((note) => [note.message, note.kind, note.source]),
      [[0, "task", "rule"]],
    );
    assert.equal(view.openDuties.length, 1);
    assert.equal(view.openDuties[0]?.rule, "P4");
  });

  it("the second request: the distance check made (label long), the economy flight blocked by P5 alone", () => {
    const view = runView(policy, recordOf(ids[1] as string));
    assert.deepEqual(
      view.columns.map((column) => [column.kind, column.call?.name, column.verdict, column.outcome]),
      [
        ["made", "check_distance", "allow", "label: long"],
        ["proposed", "book_flight", "block", "not made"],
        ["proposed", "check_seats", "allow", "pending"],
      ],
    );
    assert.deepEqual(view.columns[1]?.rules, ["P5"]);
    const p5 = row(view, `P5 for ${route}`);
    assert.deepEqual([view.cells[p5]?.[1]?.colour, view.cells[p5]?.[1]?.broken], ["PERM_VIOL", true]);
    assert.notEqual(view.cells[p5]?.[2]?.colour, "PERM_VIOL", "the seat check does not break P5");
    const p1 = row(view, `P1 for ${route}`);
    assert.equal(view.start[p1]?.colour, "CURR_SAT");
    assert.equal(view.cells[p1]?.[0]?.colour, "PERM_SAT", "the distance is checked: P1 holds for good");
    assert.equal(view.cells[p1]?.[1]?.broken, undefined);
  });

  it("after the made calls, the colours are those of the run on the conversation grounded anew by the labeler", async () => {
    // The dashboard puts back the recorded grounding; here the labeler grounds the same messages
    // again and the monitor runs on them: every instance must end in the same state.
    const record = recordOf(ids[1] as string);
    const view = runView(policy, record);
    const { messages } = await new Labeler(policy).ground(record.messages as unknown[]);
    const run = Run.fromTrace(policy, traceFromMessages(messages, policy));
    const made = view.columns.filter((column) => column.kind === "made").length;
    assert.ok(run.instances.length > 0);
    run.instances.forEach((instance, index) => {
      const cell = view.cells[row(view, describeInstance(instance))]?.[made - 1];
      assert.deepEqual(cell?.states, [run.beliefs[0]?.[index]], describeInstance(instance));
      assert.equal(cell?.colour, instance.rule.automaton.colour(run.beliefs[0]?.[index] as number));
    });
  });

  it("the third request: an answer refused while P4 is open, marked in P4's cell; then the booking returned", () => {
    const view = runView(policy, recordOf(ids[2] as string));
    assert.deepEqual(
      view.columns.map((column) => [column.kind, column.call?.name, column.verdict, column.refused]),
      [
        ["made", "check_distance", "allow", undefined],
        ["made", "check_seats", "allow", undefined],
        ["answer", undefined, "block", true],
        ["proposed", "book_flight", "allow", undefined],
      ],
    );
    assert.deepEqual(view.columns[2]?.rules, ["P4"]);
    assert.equal(view.columns[2]?.content, "All set: your trip is arranged.");
    assert.match(view.columns[2]?.feedback ?? "", /You cannot finish yet\. Open duties: P4/);
    const p4 = row(view, `P4 for ${route}`);
    assert.deepEqual([view.cells[p4]?.[2]?.colour, view.cells[p4]?.[2]?.broken], ["CURR_VIOL", true]);
    assert.equal(view.cells[row(view, `P1 for ${route}`)]?.[2]?.broken, undefined);
    // The seat check made P5 hold for good before the flight.
    assert.equal(view.cells[row(view, `P5 for ${route}`)]?.[1]?.colour, "PERM_SAT");
  });

  it("one row per rule and binding: a train blocked for the route not checked, the checked route's P1 untouched", async () => {
    const two = 'route(x="Paris", y="Lyon")';
    const one = 'route(x="Toronto", y="Montreal")';
    const trip = { origin: "Toronto", destination: "Montreal" };
    const {
      directory: own,
      ids: [id],
    } = await recordRuns({
      steps: [
        { calls: [{ name: "book_train", arguments: { origin: "Paris", destination: "Lyon" } }] },
        { calls: [{ name: "check_distance", arguments: { origin: "Paris", destination: "Lyon" } }] },
      ],
      requests: [
        {
          messages: [
            {
              role: "user",
              content: "Book a trip from Toronto to Montreal, then another one from Paris to Lyon.",
            },
            {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: "c1",
                  type: "function",
                  function: { name: "check_distance", arguments: JSON.stringify(trip) },
                },
              ],
            },
            { role: "tool", tool_call_id: "c1", content: "540 km" },
          ],
          toolChoice: "required",
        },
      ],
    });
    try {
      const store = new RecordStore(own);
      store.refresh();
      const view = runView(policy, store.get(id as string)?.record as FlightRecord);
      assert.deepEqual(
        view.rows.filter((entry) => entry.rule === "P1").map((entry) => entry.key),
        [`P1 for ${one}`, `P1 for ${two}`],
      );
      assert.deepEqual(view.columns[1]?.rules, ["P1"]);
      const cell = (key: string, column: number) => view.cells[row(view, key)]?.[column];
      assert.deepEqual(
        [cell(`P1 for ${two}`, 1)?.colour, cell(`P1 for ${two}`, 1)?.broken],
        ["PERM_VIOL", true],
      );
      assert.deepEqual(
        [cell(`P1 for ${one}`, 1)?.colour, cell(`P1 for ${one}`, 1)?.broken],
        ["PERM_SAT", undefined],
      );
      assert.equal(cell(`P1 for ${one}`, 0)?.colour, "PERM_SAT", "the Toronto–Montreal distance is checked");
      assert.equal(cell(`P1 for ${two}`, 0)?.colour, "CURR_SAT", "Paris–Lyon's check is still to come");
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("a record without messages shows the turn's calls and says why the conversation is missing", () => {
    const { messages: _messages, ...record } = recordOf(ids[1] as string);
    const view = runView(policy, record);
    assert.equal(view.columns[0]?.kind, "proposed");
    assert.match(view.notes[0] as string, /no messages/);
  });
});

describe("the dashboard's routes", () => {
  it("Runs: newest first, filtered by policy, mode and outcome", async () => {
    const listed = async (query: string) =>
      ((await dashboard.inject(`/dashboard/api/runs${query}`)).json() as { runs: { id: string }[] }).runs.map(
        (run) => run.id,
      );
    assert.deepEqual(await listed(""), [...ids].reverse());
    assert.deepEqual(await listed("?outcome=blocked"), [ids[1], ids[0]]);
    assert.deepEqual(await listed("?outcome=refused"), [ids[2]]);
    assert.deepEqual(await listed("?outcome=exhausted"), []);
    assert.deepEqual(await listed("?mode=token"), []);
    assert.deepEqual(await listed("?policy=travel&mode=prompt"), [...ids].reverse());
    assert.deepEqual(await listed("?latest=1"), [ids[2]]);
    const bad = await dashboard.inject("/dashboard/api/runs?outcome=lost");
    assert.equal(bad.statusCode, 400);
    assert.equal((bad.json() as { error: { code: string } }).error.code, "MNT_ERR_BAD_INPUT");
    const page = await dashboard.inject("/dashboard/?outcome=blocked");
    assert.equal(page.statusCode, 200);
    assert.equal(page.body.match(/<tr class="run"/g)?.length, 2);
    assert.equal(
      (await dashboard.inject("/dashboard/?rows=1&outcome=refused")).body.match(/<tr class="run"/g)?.length,
      1,
    );
  });

  it("A run: the matrix with the blocked call's cell marked, the grounding and the open duties", async () => {
    // Every request's page shows the whole run: the first request's blocked business flight (1),
    // the distance check (2), the second request's blocked economy flight (3), …
    const page = await dashboard.inject(`/dashboard/run/${ids[1]}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<table class="matrix" id="matrix">/);
    assert.match(
      page.body,
      /<th class="column proposed blocked[^"]*" data-column="2"[^>]*>3\. \[block\] book_flight/,
    );
    assert.match(
      page.body,
      /<td class="cell PERM_VIOL broken[^"]*" style="background:#9b2c2c" data-row="3" data-column="2"/,
    );
    assert.match(page.body, /<table id="grounding">/);
    assert.match(page.body, /<ul id="duties"><li><b>P4<\/b>/);
    const missing = await dashboard.inject("/dashboard/run/chatcmpl-none");
    assert.equal(missing.statusCode, 404);
    assert.match(
      missing.body,
      /<p class="problems" id="error">MNT_ERR_NOT_FOUND: no flight record chatcmpl-none<\/p>/,
    );
    const missingJson = await dashboard.inject("/dashboard/api/run/chatcmpl-none");
    assert.equal(missingJson.statusCode, 404);
    assert.equal((missingJson.json() as { error: { code: string } }).error.code, "MNT_ERR_NOT_FOUND");
  });

  it("A rule: its automaton drawn by Graphviz, the run's path highlighted", async () => {
    // The run page's view: the whole conversation (the distance check is its column 1).
    const view = runView(
      policy,
      ids.map((id) => recordOf(id)),
    );
    const p1 = row(view, `P1 for ${route}`);
    const page = await dashboard.inject(`/dashboard/policy/travel/rule/P1?run=${ids[1]}&row=${p1}&column=1`);
    assert.equal(page.statusCode, 200);
    const states = policy.rules.find((rule) => rule.id === "P1")?.automaton.compile().stateCount as number;
    assert.equal(page.body.match(/<g id="state_\d+" class="node (?:visited|unvisited)">/g)?.length, states);
    // The path: the start state, then the state after the distance check.
    const path = [view.start[p1]?.states[0], view.cells[p1]?.[1]?.states[0]];
    assert.match(page.body, new RegExp(`<p id="path">Path: .*: states ${path.join(" → ")}</p>`));
    assert.match(page.body, new RegExp(`<g id="edge_${path[0]}_${path[1]}" class="edge taken">`));
    // Up to the blocked flight: P5's last step (to false) is drawn dashed in red, not taken.
    const p5 = row(view, `P5 for ${route}`);
    const blocked = await dashboard.inject(
      `/dashboard/policy/travel/rule/P5?run=${ids[1]}&row=${p5}&column=2`,
    );
    const lost = view.cells[p5]?.[2]?.states[0] as number;
    assert.equal(policy.rules.find((rule) => rule.id === "P5")?.automaton.colour(lost), "PERM_VIOL");
    assert.match(
      blocked.body,
      new RegExp(`<g id="edge_${view.start[p5]?.states[0]}_${lost}" class="edge blocked">`),
    );
    assert.match(blocked.body, /\(blocked: the last step, dashed, was not taken\)/);
    const unknown = await dashboard.inject("/dashboard/policy/travel/rule/P99");
    assert.equal(unknown.statusCode, 404);
  });

  it("A policy's lint findings with their counterexample", async () => {
    const trap = parsePolicy(`
policy: trapped
manual: {A: Refund the customer., B: Never refund after an escalation.}
tools: {refund: {}, escalate: {}}
propositions: {refund: {tool: refund}, escalate: {tool: escalate}}
rules:
  - {id: A, template: existence, a: refund}
  - {id: B, template: notSuccession, a: escalate, b: refund}
`);
    const app = await buildDashboard({ policies: [trap] });
    try {
      const page = (await app.inject("/dashboard/policy/trapped")).body;
      assert.match(
        page,
        /<tr><td><span class="badge error">error<\/span><\/td><td>trap<\/td><td>A, B<\/td><td>[^<]+<\/td><td><code>escalate\(\)<\/code><\/td><\/tr>/,
      );
    } finally {
      await app.close();
    }
  });

  it("A policy: rules with state counts and sentences, constraints, lint findings", async () => {
    const page = await dashboard.inject("/dashboard/policy/travel");
    assert.equal(page.statusCode, 200);
    assert.equal(
      page.body.match(/<tr><td><a href="\/dashboard\/policy\/travel\/rule\//g)?.length,
      policy.rules.length,
    );
    assert.match(page.body, /Check the distance of a route before any booking for it\./);
    assert.match(page.body, /<h2>Lint<\/h2>(<table id="lint">|<p>No findings\.<\/p>)/);
  });

  it("Compare: the same charts and tables as the benchmark's report.html for the same results.json", async () => {
    const runs = [0, 1].flatMap((run) =>
      ["none", "token"].map((condition) =>
        runRecord(
          { condition, run },
          // Under none the violating calls are made (2 in run 0); under token they are blocked.
          {
            pass: condition === "token" || run === 0,
            blocked: condition === "token" ? 1 : 0,
            violations: condition === "token" ? 1 : 2 * (1 - run),
          },
        ),
      ),
    );
    const results = benchResults(runs, 2);
    const file = join(mkdtempSync(join(tmpdir(), "mentor-results-")), "results.json");
    writeFileSync(file, JSON.stringify(results));
    // A second shard: the same runs under another model's name.
    const other = join(mkdtempSync(join(tmpdir(), "mentor-results-")), "results.json");
    writeFileSync(other, JSON.stringify(benchResults(runs.slice(0, 2), 2, { model: "other-model" })));
    const app = await buildDashboard({ policies: [], results: [file, `${file}.missing`, other] });
    try {
      const page = (await app.inject("/dashboard/compare")).body;
      const section = (html: string) =>
        html.slice(html.indexOf('<section class="domain"'), html.indexOf("</section>"));
      assert.ok(section(page).length > 100);
      const report = renderReport(results);
      assert.equal(section(page), section(report));
      const table = (html: string, id: string) =>
        html.slice(
          html.indexOf(`<table id="${id}">`),
          html.indexOf("</table>", html.indexOf(`<table id="${id}">`)),
        );
      // The same tables, Compare's with each run linked to its page.
      const linksLeftOut = (html: string) => html.replace(/ · runs (<a [^>]*>\d+<\/a> ?)+/g, "");
      for (const id of ["summary", "tasks"]) {
        assert.ok(table(page, id).length > 100, id);
        assert.equal(linksLeftOut(table(page, id)), table(report, id), id);
      }
      assert.match(
        table(page, "tasks"),
        /1\/2 · 3\.00 calls · 0 blocked · 1\.00 broke · runs <a class="run-link pass" href="\/dashboard\/results\/0\/run\/travel\/t01\/none\/0" title="run 1: passed">1<\/a> <a class="run-link fail" href="\/dashboard\/results\/0\/run\/travel\/t01\/none\/1"/,
      );
      // The calls that broke a block rule, per condition: the violations not blocked.
      const summary = table(page, "summary");
      assert.match(summary, /<th[^>]*>calls that broke a block rule<\/th>/);
      assert.match(summary, /<td>none<\/td>(<td>[^<]*<\/td>){7}<td class="broke">2 in 1\/2 runs<\/td>/);
      assert.match(summary, /<td>token<\/td>(<td>[^<]*<\/td>){7}<td class="broke">0 in 0\/2 runs<\/td>/);
      assert.match(section(page), /Calls that broke a block rule/);
      assert.match(table(page, "tasks"), /1\/2 · 3\.00 calls · 0 blocked · 1\.00 broke/);
      // Two shards side by side: each one's summary and per-task tables.
      const beside = (await app.inject("/dashboard/compare?file=0&with=2")).body;
      const halves = beside.slice(beside.indexOf('id="side-by-side"')).split('<div class="half">').slice(1);
      assert.equal(halves.length, 2);
      assert.match(
        halves[0] as string,
        /model <b>m<\/b>[\s\S]*<table id="summary">[\s\S]*<td class="broke">2 in 1\/2 runs/,
      );
      assert.match(
        halves[1] as string,
        /model <b>other-model<\/b>[\s\S]*<table id="summary">[\s\S]*<td class="broke">2 in 1\/1 runs/,
      );
      const missing = (await app.inject("/dashboard/compare?file=1")).body;
      assert.match(missing, /results\.json\.missing: ENOENT/);
    } finally {
      await app.close();
    }
  });

  it("events: a server-sent event when a record is written; an open stream does not hold up the server's close", async () => {
    const own = mkdtempSync(join(tmpdir(), "mentor-events-"));
    const app = await buildServer({
      generator: new ScriptedGenerator(["Hello."]),
      shield: "prompt",
      policies: [],
      logger: false,
      recorderDirectory: own,
      dashboard: true,
    });
    let closing: Promise<void> | undefined;
    let closed = false;
    try {
      const base = await app.listen({ host: "127.0.0.1", port: 0 });
      const response = await fetch(`${base}/dashboard/events`);
      assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let received = "";
      // A request through the server writes a record into the directory the dashboard reads.
      const chat = await fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "Hello" }] }),
      });
      assert.equal(chat.status, 200, await chat.text());
      while (!received.includes("event: records")) {
        const { value, done } = await reader.read();
        assert.equal(done, false, `the stream ended early: ${received}`);
        received += decoder.decode(value);
      }
      assert.match(received, /event: records\ndata: \{"added":1\}/);
      closing = app.close();
      const waited = new Promise((resolve) => setTimeout(() => resolve("still open"), 5000).unref());
      const outcome = await Promise.race([closing.then(() => "closed"), waited]);
      closed = outcome === "closed";
      assert.equal(outcome, "closed");
    } finally {
      // After a failure above: force the stream's connection shut so the test run can end.
      if (!closed) {
        app.server.closeAllConnections();
        await (closing ?? app.close());
      }
    }
  });

  it("under mentor serve: off unless enabled, and behind the API key (header, ?key= then its cookie)", async () => {
    const base = { generator: new ScriptedGenerator([]), logger: false as const };
    const off = await buildServer({ ...base, recorderDirectory: directory });
    try {
      assert.equal((await off.inject("/dashboard/")).statusCode, 404);
    } finally {
      await off.close();
    }
    const on = await buildServer({ ...base, recorderDirectory: directory, dashboard: true, apiKeys: ["k1"] });
    try {
      assert.equal((await on.inject("/dashboard/")).statusCode, 401);
      assert.equal(
        (await on.inject({ url: "/dashboard/", headers: { authorization: "Bearer k1" } })).statusCode,
        200,
      );
      const first = await on.inject("/dashboard/?key=k1");
      assert.equal(first.statusCode, 200);
      assert.match(first.body, new RegExp(ids[0] as string));
      const cookie = String(first.headers["set-cookie"]).split(";")[0] as string;
      assert.equal(cookie, "mentor_dashboard_key=k1");
      assert.equal(
        (await on.inject({ url: `/dashboard/run/${ids[0]}`, headers: { cookie } })).statusCode,
        200,
      );
      assert.equal((await on.inject({ url: "/dashboard/?key=wrong" })).statusCode, 401);
      // The cookie opens the dashboard only, not the API.
      assert.equal((await on.inject({ url: "/v1/models", headers: { cookie } })).statusCode, 401);
    } finally {
      await on.close();
    }
  });
});

describe("a whole agent run's records (issue 33)", () => {
  it("a refused turn keeps what it judged; the views explain the 422, the stop and the unshielded violation", async () => {
    const recorded = await recordOperatorRuns();
    try {
      const store = new RecordStore(recorded.directory);
      store.refresh();
      const records = (ids: string[]) => ids.map((id) => store.get(id)?.record as FlightRecord);
      const stopPolicy = loadPolicy(recorded.policyFile);
      // 422: the record has the turn's grounding, so the task and the unsafe tools can be shown.
      const [nothing] = records(recorded.runs.nothing);
      assert.equal(nothing?.status, 422);
      assert.equal(nothing?.mentor?.grounding[0]?.kind, "task");
      const refused = runView(policy, records(recorded.runs.nothing));
      assert.equal(refused.task[0]?.arguments.destination, "Boston");
      assert.deepEqual(
        refused.requests[0]?.unsafe?.map((tool) => [tool.tool, tool.calls.map((call) => call.rules)]),
        [
          ["book_train", [["P1"]]],
          ["book_flight", [["P1", "P5", "P3"]]],
        ],
      );
      // The stop: the turn that stopped the run, then the client's request refused (409).
      const stopped = runView(stopPolicy, records(recorded.runs.stopped));
      assert.deepEqual(stopped.stopped?.rules, ["P5"]);
      assert.deepEqual(
        stopped.columns.map((column) => [column.kind, column.action]),
        [["proposed", "stop"]],
      );
      assert.equal(stopped.requests[1]?.error?.code, "MNT_ERR_RUN_STOPPED");
      // Unshielded: the booking made breaks P1, P5, P3; the next column keeps P1 broken, re-armed.
      const unshielded = runView(policy, records(recorded.runs.unshielded));
      assert.deepEqual(
        unshielded.columns.map((column) => [column.kind, column.broke ?? false, column.request]),
        [
          ["made", true, 0],
          ["answer", false, 1],
        ],
      );
      const p1 = unshielded.rows.findIndex((one) => one.key.startsWith("P1 for"));
      assert.deepEqual(unshielded.cells[p1]?.[1]?.rearmed, { by: 0, now: "CURR_SAT" });
      assert.equal(unshielded.cells[p1]?.[1]?.colour, "PERM_VIOL");
      assert.deepEqual(countsOf(records(recorded.runs.unshielded)), {
        blocked: 0,
        broke: 1,
        stopped: 0,
        doneRefusals: 0,
        exhausted: 0,
        errors: 0,
      });
    } finally {
      rmSync(recorded.directory, { recursive: true, force: true });
    }
  });

  it("a call made under a warn rule or an override counts as broke in the Runs list, as on the run page", async () => {
    // The economy flight booked before the seats were checked breaks P5; a warn P5 allows it with a
    // warning, an override P5 refuses it once and allows it proposed again.
    const policies = mkdtempSync(join(tmpdir(), "mentor-policy-"));
    const files = ["warn", "override"].map((severity) => writeTravelPolicyWith(policies, severity));
    const economy = { origin: "Toronto", destination: "Chicago", travel_class: "economy" };
    const recorded = await recordRuns({
      steps: [
        { calls: [{ name: "book_flight", arguments: economy }] },
        { calls: [{ name: "book_flight", arguments: economy }] },
        { calls: [{ name: "book_flight", arguments: economy }] },
      ],
      requests: ["travel_warn", "travel_override"].map((name) => ({
        messages: secondRequestMessages,
        toolChoice: "required" as const,
        mentor: { policy: name },
      })),
      policies: files,
    });
    const app = await buildDashboard({
      recorderDirectory: recorded.directory,
      policies: files.map((file) => loadPolicy(file)),
    });
    try {
      for (const [index, id] of recorded.ids.entries()) {
        const runs = (await app.inject({ url: "/dashboard/api/runs" })).json().runs as {
          id: string;
          mode: string;
          run: { blocked: number; broke: number };
        }[];
        const listed = runs.find((one) => one.id === id);
        assert.equal(listed?.mode, "prompt");
        assert.deepEqual(listed?.run, { ...listed?.run, blocked: index, broke: 1 }, `request ${index + 1}`);
        const { view } = (await app.inject({ url: `/dashboard/api/run/${id}` })).json() as { view: RunView };
        const returned = view.columns.filter((column) => column.returned);
        assert.deepEqual(
          returned.map((column) => [column.call?.name, column.broke, column.warnings]),
          [["book_flight", true, ["P5"]]],
        );
        const page = (await app.inject({ url: `/dashboard/run/${id}` })).body;
        assert.match(page, /\[returned, broke P5\]/);
        assert.match(page, new RegExp(`${index} blocked · 1 broke · 0 stopped`));
      }
    } finally {
      await app.close();
      rmSync(recorded.directory, { recursive: true, force: true });
      rmSync(policies, { recursive: true, force: true });
    }
  });
});
