import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { recordTravelRuns } from "../support/recorded-runs.js";

const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

describe("mentor dashboard (command line)", () => {
  it("serves the runs of a recorder directory with the policies named, and stops on SIGTERM", async () => {
    const { directory, ids } = await recordTravelRuns();
    const child = spawn(
      process.execPath,
      [main, "dashboard", "--recorder", directory, "--policy", "travel", "--port", "0"],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const exited = once(child, "exit");
    let url: string | undefined;
    for await (const line of createInterface({ input: child.stdout })) {
      url = /^mentor dashboard: (http:\S+)\/dashboard\/$/.exec(line)?.[1];
      if (url) break;
    }
    assert.ok(url, "the address is printed");
    child.stdout.resume();
    const runs = (await (await fetch(`${url}/dashboard/api/runs`)).json()) as { runs: { id: string }[] };
    assert.deepEqual(
      runs.runs.map((run) => run.id),
      [...ids].reverse(),
    );
    const page = await fetch(`${url}/dashboard/run/${ids[0]}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<table class="matrix"/);
    assert.equal((await fetch(url)).url, `${url}/dashboard/`, "/ sends to the dashboard");
    child.kill("SIGTERM");
    const [code] = await exited;
    assert.equal(code, 0);
  });

  it("names the option when a policy cannot be found", async () => {
    const child = spawn(process.execPath, [main, "dashboard", "--policy", "nowhere"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const [code] = await once(child, "exit");
    assert.equal(code, 2);
    assert.match(stderr, /MNT_ERR_POLICY_UNKNOWN: no policy "nowhere"/);
  });
});
