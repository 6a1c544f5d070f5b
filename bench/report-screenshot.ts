import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Command } from "commander";
import { chromium } from "playwright-core";
import { MentorError } from "../src/errors/index.js";

/** Where Debian's `chromium` package puts the browser; MENTOR_CHROMIUM overrides it. */
export const defaultChromium = "/usr/bin/chromium";

/**
 * Opens a report.html in headless Chromium and writes a full-page PNG of it. Fails when the
 * browser is missing, and when the page asks for anything but its own file (the report is meant
 * to be self-contained).
 */
export async function screenshotReport(
  html: string,
  png: string,
  options: { executable?: string; width?: number } = {},
): Promise<void> {
  const executable = options.executable ?? process.env.MENTOR_CHROMIUM ?? defaultChromium;
  if (!existsSync(executable)) {
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `no Chromium executable at ${executable}: install one (apt-get install chromium) or set MENTOR_CHROMIUM to its path`,
    );
  }
  const page = resolve(html);
  if (!existsSync(page)) throw new MentorError("MNT_ERR_BENCH_INPUT", `no report at ${page}`);
  const browser = await chromium.launch({ executablePath: executable, headless: true });
  try {
    const tab = await browser.newPage({ viewport: { width: options.width ?? 1320, height: 900 } });
    const outside: string[] = [];
    tab.on("request", (request) => {
      if (!/^(file|data|about):/.test(request.url())) outside.push(request.url());
    });
    await tab.goto(pathToFileURL(page).href, { waitUntil: "load" });
    await tab.screenshot({ path: resolve(png), fullPage: true });
    if (outside.length > 0) {
      throw new MentorError(
        "MNT_ERR_BENCH_INPUT",
        `the report is not self-contained: it asked for ${outside.join(", ")}`,
      );
    }
  } finally {
    await browser.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("npm run bench:report-screenshot --")
    .description(
      `Full-page PNG of a benchmark report.html in headless Chromium (MENTOR_CHROMIUM, else ${defaultChromium})`,
    )
    .argument("<report>", "report.html")
    .argument("<png>", "the PNG to write")
    .option("--width <px>", "viewport width", "1320");
  program.parse(argv);
  const [report, png] = program.args as [string, string];
  const width = Number(program.opts().width);
  if (!Number.isInteger(width) || width < 320) {
    throw new MentorError("MNT_ERR_BENCH_INPUT", `--width must be an integer of at least 320, not ${width}`);
  }
  await screenshotReport(report, png, { width });
  process.stdout.write(`screenshot: ${resolve(png)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await main(process.argv);
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    process.stderr.write(`bench:report-screenshot: ${error.code}: ${error.message}\n`);
    process.exitCode = 2;
  }
}
