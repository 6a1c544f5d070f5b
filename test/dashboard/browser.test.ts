import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { inflateSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { colourFill, colourGlyph } from "../../src/dashboard/html.js";
import { buildDashboard } from "../../src/dashboard/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { benchRunResults } from "../support/bench-run.js";
import {
  longCity,
  recordOperatorRuns,
  recordRuns,
  recordTravelRuns,
  thirdRequestMessages,
} from "../support/recorded-runs.js";
import { missingTool } from "../support/system-tools.js";
import { travelPolicyFile } from "../support/tiny-travel.js";

// The dashboard's pages in a real browser: headless Chromium (Debian's `chromium`, or
// MENTOR_CHROMIUM) driven by playwright-core, against a dashboard reading flight records that a
// real server wrote (test/support/recorded-runs.ts). `npm run setup` installs Chromium.
const executable = process.env.MENTOR_CHROMIUM ?? "/usr/bin/chromium";
const missing = missingTool(
  "chromium",
  existsSync(executable),
  `no Chromium at ${executable}; MENTOR_CHROMIUM=PATH names another`,
);

/** A node's text (its DOM text content). */
async function text(locator: Locator): Promise<string> {
  return (await locator.textContent()) ?? "";
}

/** A matrix cell's verdict glyph (its `::after` content). */
function glyph(locator: Locator): Promise<string> {
  return locator.evaluate(
    (node) =>
      (
        globalThis as unknown as { getComputedStyle(node: unknown, pseudo: string): { content: string } }
      ).getComputedStyle(node, "::after").content,
  );
}

/** Whether a PNG has more than a few colours: its pixel rows (after inflating) hold many distinct bytes. */
export function pngLooksDrawn(png: Buffer): boolean {
  const chunks: Buffer[] = [];
  for (let offset = 8; offset < png.length; ) {
    const length = png.readUInt32BE(offset);
    const type = png.toString("ascii", offset + 4, offset + 8);
    if (type === "IDAT") chunks.push(png.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const pixels = inflateSync(Buffer.concat(chunks));
  return new Set(pixels).size > 32;
}

describe("the dashboard in headless Chromium", { skip: missing }, () => {
  let directory: string;
  let ids: string[];
  let dashboard: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  const outside: string[] = [];

  before(async () => {
    ({ directory, ids } = await recordTravelRuns());
    dashboard = await buildDashboard({
      recorderDirectory: directory,
      policies: [loadPolicy(travelPolicyFile)],
      pollMs: 200,
    });
    base = await dashboard.listen({ host: "127.0.0.1", port: 0 });
    browser = await chromium.launch({ executablePath: executable, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("request", (request) => {
      if (!request.url().startsWith(base)) outside.push(request.url());
    });
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it("Runs lists the recorded requests and follows new ones as they are written", async () => {
    await page.goto(`${base}/dashboard/`);
    assert.equal(await page.locator("tr.run").count(), 3);
    assert.equal(await page.locator("tr.run").first().getAttribute("data-id"), ids[2]);
    // Another server writes a record into the same directory: the open page shows it.
    const more = await recordTravelRuns(directory);
    await page.locator("tr.run").nth(5).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator("tr.run").count(), 6);
    assert.equal(await page.locator("tr.run").first().getAttribute("data-id"), more.ids[2]);
  });

  it("a run's matrix shows the blocked call in its rule's cell, red and crossed; clicking a call changes the view", async () => {
    await page.click(`a[href="/dashboard/run/${ids[1]}"]`);
    await page.waitForSelector("#matrix");
    // The whole run: the first request's blocked flight (1), the distance check (2), the second's blocked flight (3).
    const header = page.locator('#matrix th.column[data-column="2"]');
    assert.match((await header.getAttribute("class")) ?? "", /\bblocked\b/);
    assert.match(await text(header), /book_flight/);
    const rows = await page.locator("#matrix tbody tr td.row").allTextContents();
    const p5 = rows.findIndex((text) => text.startsWith("P5 for route"));
    const p1 = rows.findIndex((text) => text.startsWith("P1 for route"));
    assert.ok(p5 >= 0 && p1 >= 0);
    const cell = (row: number, column: number) =>
      page.locator(`#matrix td.cell[data-row="${row}"][data-column="${column}"]`);
    const background = (row: number, column: number) =>
      cell(row, column).evaluate(
        (node) =>
          (
            globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string } }
          ).getComputedStyle(node).backgroundColor,
      );
    assert.equal(
      await background(p5, 2),
      "rgb(155, 44, 44)",
      "P5 permanently violated by the blocked flight",
    );
    assert.equal(await text(cell(p5, 2)), "✕");
    assert.equal(
      await background(p1, 2),
      "rgb(104, 211, 145)",
      "P1 holds for good: the distance was checked",
    );
    assert.equal(await text(cell(p1, 2)), "");
    assert.equal(await glyph(cell(p1, 2)), '"✓"', "PERM_SAT's glyph, the second cue");

    await header.click();
    assert.equal(await text(page.locator("#verdict")), "block");
    const blocked = await text(page.locator("#details"));
    assert.match(blocked, /book_flight\(origin="Toronto", destination="Chicago", travel_class="economy"\)/);
    assert.match(blocked, /P5: Check seat availability for a flight before booking it\./);
    assert.match(blocked, /Advice \(prerequisite\): check_seats/);
    const afterRow = (rule: string) =>
      text(page.locator("#after tr", { hasText: rule }).locator("td").nth(1));
    assert.equal(await afterRow("P5 for route"), "PERM_VIOL ✕");

    await page.locator('#matrix th.column[data-column="1"]').click();
    assert.equal(await text(page.locator("#verdict")), "allow");
    assert.match(await text(page.locator("#details")), /check_distance[\s\S]*outcome: label: long/);
    assert.equal(await afterRow("P5 for route"), "CURR_SAT");
    assert.equal(await page.locator('#matrix th.column.selected[data-column="1"]').count(), 1);
    assert.equal(await page.locator('#matrix .selected[data-column="2"]').count(), 0);

    const png = await page.screenshot({ path: join(mkdtempSync(join(tmpdir(), "mentor-shot-")), "run.png") });
    assert.ok(pngLooksDrawn(png), "the screenshot is not blank");
  });

  it("a refused answer is a column of its own, P4's open duty crossed", async () => {
    await page.goto(`${base}/dashboard/run/${ids[2]}`);
    const header = page.locator('#matrix th.column[data-column="4"]');
    assert.match(await text(header), /answer \(refused\)/);
    await header.click();
    assert.equal(await text(page.locator("#verdict")), "refused");
    const details = await text(page.locator("#details"));
    assert.match(details, /All set: your trip is arranged\./);
    assert.match(details, /Duties open:P4: The requested trip must be booked before you finish\./);
  });

  it("a rule's automaton renders as SVG with the run's path", async () => {
    // The run page opened at a call (its address ends with the call's column) shows its details.
    await page.goto(`${base}/dashboard/run/${ids[1]}#1`);
    await page.locator("#after tr", { hasText: "P1 for route" }).locator("a").click();
    await page.waitForSelector("#automaton svg");
    const states = (await page.locator("#states tr").count()) - 1;
    assert.ok(states >= 3);
    assert.equal(
      await page.locator("#automaton svg g.node").count(),
      states + 1,
      "every state and the start point",
    );
    assert.ok((await page.locator("#automaton svg g.node.visited").count()) >= 2);
    assert.equal(await page.locator("#automaton svg g.edge.taken").count(), 1);
    const box = await page.locator("#automaton svg").boundingBox();
    assert.ok(box && box.width > 200 && box.height > 50, "drawn at a readable size");
    assert.deepEqual(outside, [], "the pages fetch nothing from elsewhere");
  });
});

/** WCAG 2 relative luminance of a `#rrggbb` colour, optionally through a linear-RGB matrix first. */
function luminance(hex: string, matrix?: readonly (readonly number[])[]): number {
  const linear = [1, 3, 5].map((at) => {
    const value = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  });
  const [r, g, b] = matrix
    ? matrix.map((row) =>
        Math.min(
          1,
          Math.max(
            0,
            row.reduce((sum, weight, index) => sum + weight * (linear[index] as number), 0),
          ),
        ),
      )
    : linear;
  return 0.2126 * (r as number) + 0.7152 * (g as number) + 0.0722 * (b as number);
}

function contrast(left: string, right: string, matrix?: readonly (readonly number[])[]): number {
  const [light, dark] = [luminance(left, matrix), luminance(right, matrix)].sort((a, b) => b - a) as [
    number,
    number,
  ];
  return (light + 0.05) / (dark + 0.05);
}

/** Machado, Oliveira and Fernandes (2009): deuteranopia (severity 1), on linear RGB. */
const deuteranopia = [
  [0.367322, 0.860646, -0.227968],
  [0.280085, 0.672501, 0.047413],
  [-0.01182, 0.04294, 1.04294],
];

describe("the verdicts' colours", () => {
  it("PERM_SAT and PERM_VIOL differ in lightness (≥ 3:1), also under simulated deuteranopia; each verdict has its own glyph", () => {
    const ratio = contrast(colourFill.PERM_SAT, colourFill.PERM_VIOL);
    assert.ok(ratio >= 3, `PERM_SAT vs PERM_VIOL ${ratio.toFixed(2)}:1`);
    const simulated = contrast(colourFill.PERM_SAT, colourFill.PERM_VIOL, deuteranopia);
    assert.ok(simulated >= 3, `under deuteranopia ${simulated.toFixed(2)}:1`);
    // The two open verdicts are told apart by their glyphs (their lightness is close by design: both light).
    assert.equal(new Set(Object.values(colourGlyph)).size, 4);
  });
});

describe("a whole agent run in headless Chromium at 1280×800 (issue 33)", { skip: missing }, () => {
  let recorded: Awaited<ReturnType<typeof recordOperatorRuns>>;
  let dashboard: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  // MENTOR_SCREENSHOTS=DIR keeps the pictures (the closing note of issue 33 describes them).
  const shots = process.env.MENTOR_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), "mentor-shots-"));

  let bench: Awaited<ReturnType<typeof benchRunResults>>;

  before(async () => {
    recorded = await recordOperatorRuns();
    bench = await benchRunResults();
    dashboard = await buildDashboard({
      recorderDirectory: recorded.directory,
      policies: [loadPolicy(travelPolicyFile), loadPolicy(recorded.policyFile)],
      results: [bench.file],
      pollMs: 200,
    });
    base = await dashboard.listen({ host: "127.0.0.1", port: 0 });
    browser = await chromium.launch({ executablePath: executable, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
    if (recorded) rmSync(recorded.directory, { recursive: true, force: true });
    if (bench) rmSync(bench.directory, { recursive: true, force: true });
  });

  /** The page fits 1280 px: no horizontal scroll of the page itself (the matrix scrolls in its frame). */
  async function fits(name: string): Promise<void> {
    const widths = await page.evaluate(() => {
      const window = globalThis as unknown as {
        innerWidth: number;
        document: { scrollingElement: { scrollWidth: number } };
      };
      return { scroll: window.document.scrollingElement.scrollWidth, inner: window.innerWidth };
    });
    assert.ok(
      widths.scroll <= widths.inner,
      `${name}: the page is ${widths.scroll} px wide at ${widths.inner}`,
    );
    const png = await page.screenshot({ path: join(shots, `${name}.png`) });
    assert.ok(pngLooksDrawn(png), `${name}: the screenshot is not blank`);
  }
  const runRow = (id: string) => page.locator(`tr.run[data-id="${id}"]`);

  it("Runs: one line per run with its blocks, the calls that broke a rule and its stops; the outcome filter looks at the whole run", async () => {
    await page.goto(`${base}/dashboard/?latest=1`);
    assert.equal(await page.locator("tr.run").count(), 4);
    const counts = (id: string) => text(runRow(id).locator("td.run-counts"));
    const { travel, unshielded, stopped, nothing } = recorded.runs;
    assert.equal(await counts(travel[2] as string), "2 blocked · 0 broke · 0 stopped");
    assert.equal(await counts(unshielded[1] as string), "0 blocked · 1 broke · 0 stopped");
    assert.equal(await counts(stopped[1] as string), "1 blocked · 0 broke · 1 stopped");
    assert.equal(await counts(nothing[0] as string), "0 blocked · 0 broke · 0 stopped");
    await fits("runs");
    // The latest request of the travel run blocked nothing itself: the run did, twice.
    await page.goto(`${base}/dashboard/?latest=1&outcome=blocked`);
    assert.deepEqual(
      (
        await page
          .locator("tr.run")
          .evaluateAll((rows) =>
            rows.map((row) => (row as unknown as { dataset: { id: string } }).dataset.id),
          )
      ).sort(),
      [travel[2], stopped[1]].sort(),
    );
    await page.goto(`${base}/dashboard/?latest=1&outcome=broke`);
    assert.equal(await page.locator("tr.run").count(), 1);
    assert.equal(await page.locator("tr.run").getAttribute("data-id"), unshielded[1]);
  });

  it("from the Runs list to which rule blocked the run's third call and what was advised: two clicks", async () => {
    const { travel } = recorded.runs;
    await page.goto(`${base}/dashboard/?latest=1`);
    const started = performance.now();
    let clicks = 0;
    await runRow(travel[2] as string)
      .locator("a")
      .first()
      .click();
    clicks++;
    await page.locator('#matrix th.column[data-column="2"]').click();
    clicks++;
    const breaks = await text(page.locator("#breaks"));
    const advice = await text(page.locator("#advice"));
    const seconds = (performance.now() - started) / 1000;
    assert.equal(clicks, 2);
    assert.equal(await text(page.locator("#verdict")), "block");
    assert.equal(breaks, "P5: Check seat availability for a flight before booking it.");
    assert.equal(advice, 'Advice (prerequisite): check_seats(origin="Toronto", destination="Chicago")');
    assert.match(
      await text(page.locator("#details")),
      /Request 2 of 3 · proposed in generation 1 · outcome: not made/,
    );
    process.stdout.write(`# walkthrough: ${clicks} clicks, ${seconds.toFixed(2)} s in headless Chromium\n`);
    // The details are beside the matrix, in view without scrolling.
    const box = await page.locator("#details").boundingBox();
    assert.ok(box && box.y < 800 && box.x > 640, `details at ${JSON.stringify(box)}`);
    await fits("run-travel-call-3");
  });

  it("a run's every request, whichever request's page is open: earlier denials, request boundaries, links", async () => {
    const { travel } = recorded.runs;
    await page.goto(`${base}/dashboard/run/${travel[0]}`);
    assert.equal(await page.locator("#requests tr[data-request]").count(), 3);
    assert.equal(await page.locator("#matrix th.column[data-column]:not([data-column=start])").count(), 6);
    assert.deepEqual(await page.locator("#matrix th.request").allTextContents(), [
      "request 1",
      "request 2",
      "request 3",
    ]);
    // The two flights blocked in the first and second requests, and the answer refused in the third.
    assert.deepEqual(
      (await page.locator("#matrix th.column.blocked").allTextContents()).map((one) =>
        one.replace(/\(.*/, ""),
      ),
      ["1. [block] book_flight", "3. [block] book_flight", "5. [refused] answer "],
    );
    assert.equal(await page.locator("#previous").count(), 0);
    assert.equal(await page.locator("#next").getAttribute("href"), `/dashboard/run/${travel[1]}`);
    assert.equal(
      await text(page.locator("#run-counts")),
      "The whole run: blockedrefused 2 blocked · 0 broke · 0 stopped",
    );
  });

  it("an unshielded violation: made, broke P1, P3, P5 — its own mark; the broken rules stay dark red after re-arming", async () => {
    const { unshielded } = recorded.runs;
    await page.goto(`${base}/dashboard/run/${unshielded[1]}`);
    const header = page.locator('#matrix th.column[data-column="0"]');
    assert.match((await header.getAttribute("class")) ?? "", /\bbroke\b/);
    assert.match(await text(header), /^1\. \[made, broke P1, P5, P3\] book_flight/);
    await header.click();
    assert.equal(await text(page.locator("#verdict")), "made, broke P1, P5, P3");
    assert.match(await text(page.locator("#details")), /the request had no shield \(mode none\)/);
    const rows = await page.locator("#matrix tbody tr td.row").allTextContents();
    const p1 = rows.findIndex((row) => row.startsWith("P1 for route"));
    const later = page.locator(`#matrix td.cell[data-row="${p1}"][data-column="1"]`);
    assert.match((await later.getAttribute("class")) ?? "", /\bPERM_VIOL\b.*\brearmed\b/);
    assert.equal(await text(later), "↺");
    assert.match(
      (await later.getAttribute("title")) ?? "",
      /broken by call 1, then re-armed by the monitor to judge later calls: now CURR_SAT/,
    );
    // The long city name is cut in the row label, whole on hover.
    const label = page.locator(`#matrix tbody tr td.row`).nth(p1);
    assert.match((await label.getAttribute("title")) ?? "", new RegExp(longCity));
    const frame = await page.locator("#frame").evaluate((node) => {
      const element = node as unknown as { scrollWidth: number; clientWidth: number };
      return { scroll: element.scrollWidth, client: element.clientWidth };
    });
    assert.ok(frame.client <= 1280, `the matrix frame is ${frame.client} px`);
    await fits("run-unshielded");
  });

  it("a stop: shown as stop, who resumes the run and how; advice only for once it is resumed", async () => {
    const { stopped } = recorded.runs;
    await page.goto(`${base}/dashboard/run/${stopped[1]}`);
    assert.match(
      await text(page.locator("#stopped")),
      /^The run is stopped by P5 at book_flight\(origin="Paris", destination="Lyon", travel_class="economy"\): a person resumes it with a user message carrying "mentor": \{"resume": true\}/,
    );
    const header = page.locator('#matrix th.column[data-column="0"]');
    assert.match((await header.getAttribute("class")) ?? "", /\bstopped\b/);
    await header.click();
    assert.equal(await text(page.locator("#verdict")), "stop");
    assert.match(await text(page.locator("#advice")), /^Advice once resumed \(prerequisite\)/);
    assert.match(await text(page.locator("#requests tr[data-request='1']")), /409.*MNT_ERR_RUN_STOPPED/);
    assert.match(await text(page.locator("#duties")), /next once resumed: /);
    await fits("run-stopped");
  });

  it("the rulebook: every rule's automaton with the run's path and state; drawings at their natural size, zoomed by buttons", async () => {
    const { travel } = recorded.runs;
    await page.goto(`${base}/dashboard/run/${travel[2]}`);
    await page.locator("#rulebook").click();
    await page.waitForSelector(".automaton svg");
    const sections = page.locator("section.rulebook");
    // One drawing per rule instance of the run (the rows of its matrix), each with where it is now.
    const instances = await sections.count();
    assert.ok(instances >= 6, `${instances} drawings`);
    const p5 = sections.filter({ hasText: "P5 for route" }).first();
    assert.match(
      await text(p5.locator("h3")),
      /^P5 for route\(x="Toronto", y="Chicago"\) · now in state \d+ \(path \d+ → \d+/,
    );
    assert.ok((await p5.locator("svg g.edge.taken").count()) >= 1, "the path is drawn");
    // A state's whole residual is its tooltip (Graphviz's <title> of the node's link).
    assert.match(
      (await p5.locator("svg g.node a").first().getAttribute("xlink:title")) ?? "",
      /^state \d+ \((PERM|CURR)_/,
    );
    const svg = p5.locator("svg");
    const natural = Number.parseFloat((await svg.getAttribute("width")) ?? "0") * (4 / 3);
    const width = async () => (await svg.boundingBox())?.width ?? 0;
    assert.ok(Math.abs((await width()) - natural) < 2, "drawn at its natural size, not shrunk to the page");
    await p5.locator('button[data-zoom="1.25"]').click();
    assert.ok((await width()) > natural * 1.2, "zoomed in");
    assert.match(await text(page.locator("#drawing-legend")), /\{\}: a call where none holds/);
    await fits("rulebook");
  });

  it("a 422 (nothing allowed): the task grounded, and which rules made each tool unsafe", async () => {
    const { nothing } = recorded.runs;
    await page.goto(`${base}/dashboard/run/${nothing[0]}`);
    assert.match(
      await text(page.locator("main")),
      /Task: request_travel\(origin="Toronto", destination="Boston"/,
    );
    const unsafe = await text(page.locator("#requests .unsafe"));
    assert.match(unsafe, /MNT_ERR_NOTHING_ALLOWED|Nothing the request allowed was safe/);
    assert.match(
      unsafe,
      /book_flight is unsafe:book_flight\(origin="Toronto", destination="Boston"\) breaks P1: Check the distance of a route before any booking for it\.; P5: Check seat availability/,
    );
    assert.match(
      await text(page.locator("#requests")),
      /MNT_ERR_NOTHING_ALLOWED: a tool call is required, but the policy allows none of the offered tools now \(book_flight\)/,
    );
    await fits("run-nothing-allowed");
  });

  it("live: the run page shows the conversation's next request once it is written", async () => {
    const { travel } = recorded.runs;
    await page.goto(`${base}/dashboard/run/${travel[0]}`);
    assert.equal(await page.locator("#requests tr[data-request]").count(), 3);
    // The agent goes on: the booking made (confirmed), then the model's answer, recorded by another server.
    const booked = [
      ...thirdRequestMessages,
      {
        role: "assistant" as const,
        content: null,
        tool_calls: [
          {
            id: "call_3",
            type: "function" as const,
            function: {
              name: "book_flight",
              arguments: JSON.stringify({
                origin: "Toronto",
                destination: "Chicago",
                travel_class: "economy",
              }),
            },
          },
        ],
      },
      { role: "tool" as const, tool_call_id: "call_3", content: JSON.stringify({ status: "confirmed" }) },
    ];
    await recordRuns({
      steps: ["Your flight is booked."],
      requests: [{ messages: booked, toolChoice: "auto" }],
      directory: recorded.directory,
    });
    await page.locator('#requests tr[data-request="3"]').waitFor({ timeout: 10_000 });
    // The booking the third request returned is now made, with its outcome (6); the answer is allowed: P4 holds (7).
    const headers = await page
      .locator("#matrix th.column[data-column]:not([data-column=start])")
      .allTextContents();
    assert.deepEqual(
      headers.slice(5).map((one) => one.replace(/\(.*/, "")),
      ["6. book_flight", "7. answer"],
    );
    assert.match(
      (await page.locator('#matrix th.column[data-column="5"]').getAttribute("class")) ?? "",
      /\bmade\b/,
    );
    assert.match(await text(page.locator("#duties")), /^None: the run may end here\.$/);
  });

  it("a benchmark run: from Compare to the call it blocked, its rules and the advice", async () => {
    await page.goto(`${base}/dashboard/compare`);
    await page.click('#tasks a.run-link[href$="/travel/t01/prompt/0"]');
    await page.waitForSelector("#matrix");
    assert.equal(await page.locator("#requests tr[data-request]").count(), 4);
    await page.click('#matrix th.column[data-column="0"]');
    assert.equal(await text(page.locator("#verdict")), "block");
    const details = await text(page.locator("#details"));
    assert.match(details, /Request 1 of 4 · proposed in generation 1 · outcome: not made/);
    assert.match(details, /P1: Check the distance of a route before any booking for it\./);
    assert.match(
      details,
      /Advice \(prerequisite\): check_distance\(origin="Toronto", destination="Chicago"\)/,
    );
    await fits("bench-run");
  });
});
