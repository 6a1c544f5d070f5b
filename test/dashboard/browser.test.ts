import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { inflateSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { buildDashboard } from "../../src/dashboard/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { recordTravelRuns } from "../support/recorded-runs.js";
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
    const header = page.locator('#matrix th.column[data-column="1"]');
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
      await background(p5, 1),
      "rgb(229, 62, 62)",
      "P5 permanently violated by the blocked flight",
    );
    assert.equal(await text(cell(p5, 1)), "✕");
    assert.equal(await background(p1, 1), "rgb(56, 161, 105)", "P1 holds for good: the distance was checked");
    assert.equal(await text(cell(p1, 1)), "");

    await header.click();
    assert.equal(await text(page.locator("#verdict")), "block");
    const blocked = await text(page.locator("#details"));
    assert.match(blocked, /book_flight\(origin="Toronto", destination="Chicago", travel_class="economy"\)/);
    assert.match(blocked, /P5: Check seat availability for a flight before booking it\./);
    assert.match(blocked, /Advice \(prerequisite\): check_seats/);
    const afterRow = (rule: string) =>
      text(page.locator("#after tr", { hasText: rule }).locator("td").nth(1));
    assert.equal(await afterRow("P5 for route"), "PERM_VIOL ✕");

    await page.locator('#matrix th.column[data-column="0"]').click();
    assert.equal(await text(page.locator("#verdict")), "allow");
    assert.match(await text(page.locator("#details")), /check_distance[\s\S]*outcome: label: long/);
    assert.equal(await afterRow("P5 for route"), "CURR_SAT");
    assert.equal(await page.locator('#matrix th.column.selected[data-column="0"]').count(), 1);
    assert.equal(await page.locator('#matrix .selected[data-column="1"]').count(), 0);

    const png = await page.screenshot({ path: join(mkdtempSync(join(tmpdir(), "mentor-shot-")), "run.png") });
    assert.ok(pngLooksDrawn(png), "the screenshot is not blank");
  });

  it("a refused answer is a column of its own, P4's open duty crossed", async () => {
    await page.goto(`${base}/dashboard/run/${ids[2]}`);
    const header = page.locator('#matrix th.column[data-column="2"]');
    assert.match(await text(header), /answer \(refused\)/);
    await header.click();
    assert.equal(await text(page.locator("#verdict")), "refused");
    const details = await text(page.locator("#details"));
    assert.match(details, /All set: your trip is arranged\./);
    assert.match(details, /Duties open:P4: The requested trip must be booked before you finish\./);
  });

  it("a rule's automaton renders as SVG with the run's path", async () => {
    // The run page opened at a call (its address ends with the call's column) shows its details.
    await page.goto(`${base}/dashboard/run/${ids[1]}#0`);
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
