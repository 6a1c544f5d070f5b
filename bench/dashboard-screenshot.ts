import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { chromium } from "playwright-core";
import { buildDashboard } from "../src/dashboard/index.js";
import { MentorError } from "../src/errors/index.js";
import { loadPolicy } from "../src/policy/index.js";
import { recordTravelRuns } from "../test/support/recorded-runs.js";
import { defaultChromium } from "./report-screenshot.js";

const travelPolicy = fileURLToPath(new URL("../../policies/travel/policy.yaml", import.meta.url));

/**
 * docs/dashboard.md's picture of the dashboard: a real server records the travel runs of the dashboard's
 * tests (scripted generator, prompt shield), the dashboard serves them, and headless Chromium
 * takes the run page's matrix with the blocked flight selected, its details beside it.
 */
export async function screenshotDashboard(
  png: string,
  options: { executable?: string; width?: number } = {},
) {
  const executable = options.executable ?? process.env.MENTOR_CHROMIUM ?? defaultChromium;
  if (!existsSync(executable))
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `no Chromium executable at ${executable}: install one (apt-get install chromium) or set MENTOR_CHROMIUM to its path`,
    );
  const { directory, ids } = await recordTravelRuns();
  const app = await buildDashboard({ recorderDirectory: directory, policies: [loadPolicy(travelPolicy)] });
  const browser = await chromium.launch({ executablePath: executable, headless: true });
  try {
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    const page = await browser.newPage({ viewport: { width: options.width ?? 1280, height: 860 } });
    await page.goto(`${base}/dashboard/run/${ids[1]}`);
    // The whole run's third call: the second request's economy flight, blocked by P5.
    await page.locator('#matrix th.column[data-column="2"]').click();
    await page.locator("#details #verdict").waitFor();
    // The matrix and the selected call's details, at the top of the picture.
    await page
      .locator("h2", { hasText: "Rules × calls" })
      .evaluate((node) => (node as unknown as { scrollIntoView(): void }).scrollIntoView());
    await page.screenshot({ path: resolve(png) });
  } finally {
    await browser.close();
    await app.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("npm run dashboard:screenshot --")
    .description(
      `The dashboard's run page as a PNG, in headless Chromium (MENTOR_CHROMIUM, else ${defaultChromium})`,
    )
    .argument("[png]", "the PNG to write", "docs/dashboard.png")
    .option("--width <px>", "viewport width", "1280");
  program.parse(argv);
  const [png] = program.processedArgs as [string];
  const width = Number(program.opts().width);
  if (!Number.isInteger(width) || width < 320)
    throw new MentorError("MNT_ERR_BAD_INPUT", `--width must be an integer of at least 320, not ${width}`);
  await screenshotDashboard(png, { width });
  process.stdout.write(`screenshot: ${resolve(png)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await main(process.argv);
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    process.stderr.write(`dashboard:screenshot: ${error.code}: ${error.message}\n`);
    process.exitCode = 2;
  }
}
