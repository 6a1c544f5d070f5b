import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { pythonOpenAIVersion } from "../support/python-openai.js";

const script = fileURLToPath(new URL("../../../scripts/setup.sh", import.meta.url));
const systemTools = new URL("../support/system-tools.js", import.meta.url).href;
const scratch = mkdtempSync(join(tmpdir(), "mentor-setup-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A directory of executables that do nothing, to stand for the named commands on PATH. */
function stubs(names: string[]): string {
  const directory = mkdtempSync(join(scratch, "bin-"));
  for (const name of names) {
    writeFileSync(join(directory, name), "#!/bin/sh\nexit 0\n");
    chmodSync(join(directory, name), 0o755);
  }
  return directory;
}

/** `scripts/setup.sh --dry-run` with only `commands` on PATH (Chromium among them when named). */
function setup(commands: string[]) {
  const bin = stubs(commands);
  const env = { PATH: bin, MENTOR_CHROMIUM: join(bin, "chromium") };
  return spawnSync("/bin/bash", [script, "--dry-run"], { encoding: "utf8", env });
}

describe("npm run setup (scripts/setup.sh)", () => {
  test("with every tool present it installs nothing", () => {
    const result = setup(["mona", "z3", "chromium", "nginx", "python3"]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /every tool the tests use is installed/);
  });

  test("makes the venv of the Python openai client the tool_choice test runs, under the user's cache", () => {
    const cache = mkdtempSync(join(scratch, "cache-"));
    const bin = stubs(["mona", "z3", "chromium", "nginx", "python3"]);
    const env = { PATH: bin, MENTOR_CHROMIUM: join(bin, "chromium"), XDG_CACHE_HOME: cache };
    const result = spawnSync("/bin/bash", [script, "--dry-run"], { encoding: "utf8", env });
    assert.equal(result.status, 0, result.stderr);
    const venv = join(cache, "mentor", "venvs", `openai-${pythonOpenAIVersion}`);
    assert.ok(
      result.stdout.includes(`setup: python3 -m venv ${venv} && pip install openai==${pythonOpenAIVersion}`),
      result.stdout,
    );
  });

  test("installs the missing tools with apt-get (as root, or through sudo)", () => {
    const result = setup(["z3", "chromium", "nginx", "python3", "apt-get", "sudo"]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^setup: missing: mona$/m);
    assert.match(
      result.stdout,
      /^setup: (sudo )?env DEBIAN_FRONTEND=noninteractive apt-get install -y mona$/m,
    );
  });

  test("without apt-get it names the packages and the opt-out, and fails", () => {
    const result = setup(["z3", "nginx", "python3"]);
    assert.equal(result.status, 1);
    assert.match(result.stdout, /cannot install here \(no apt-get/);
    assert.match(result.stdout, /^ {2}mona chromium$/m);
    assert.match(result.stdout, /MENTOR_SKIP_MISSING_TOOLS=1 npm test/);
  });
});

describe("a test whose system tool is missing", () => {
  const file = join(scratch, "needs-mona.test.mjs");
  writeFileSync(
    file,
    `import { test } from "node:test";
import { missingTool } from ${JSON.stringify(systemTools)};
test("uses mona", { skip: missingTool("mona", false) }, () => {});
`,
  );
  // NODE_TEST_CONTEXT would make the inner runner report to this one instead of printing.
  const { NODE_TEST_CONTEXT: _, ...outer } = process.env;
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, ["--test", "--test-reporter=tap", file], {
      encoding: "utf8",
      env: { ...outer, MENTOR_SKIP_MISSING_TOOLS: "", ...env },
    });

  test("fails, naming the setup command", () => {
    const result = run({});
    assert.equal(result.status, 1, result.stdout);
    assert.match(result.stdout, /not ok \d+ - the system tool mona is installed/);
    assert.match(result.stdout, /mona is not installed: run `npm run setup`/);
  });

  test("is skipped with the reason under MENTOR_SKIP_MISSING_TOOLS=1", () => {
    const result = run({ MENTOR_SKIP_MISSING_TOOLS: "1" });
    assert.equal(result.status, 0, result.stdout);
    assert.match(result.stdout, /ok \d+ - uses mona # SKIP mona is not installed: run `npm run setup`/);
    assert.doesNotMatch(result.stdout, /not ok/);
  });
});
