import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { GgufWriter } from "../../src/models/gguf-writer.js";

const run = promisify(execFile);
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-cli-models-"));
after(() => rmSync(directory, { recursive: true, force: true }));
const environment = { ...process.env, MENTOR_MODELS_DIR: join(directory, "cache") };

async function mentor(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args], { env: environment });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("mentor pull / models (command line)", () => {
  it("pulls a local .gguf path and prints it as JSON", async () => {
    const path = join(directory, "local.gguf");
    await new GgufWriter().setString("general.architecture", "llama").write(path);
    const result = await mentor("pull", path, "--json");
    assert.equal(result.code, 0, result.stderr);
    const printed = JSON.parse(result.stdout) as { path: string; fetched: boolean };
    assert.equal(printed.path, path);
    assert.equal(printed.fetched, false);
  });

  it("exits with code 2 and the error code for an unknown model", async () => {
    const result = await mentor("pull", "no-such-model");
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^mentor: MNT_ERR_MODEL_UNKNOWN: /);
  });

  it("lists the registry with the cache status", async () => {
    const result = await mentor("models", "list", "--json");
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { name: string; status: string });
    assert.ok(lines.some((line) => line.name === "gemma-3-270m" && line.status === "absent"));
  });

  it("refuses an unknown tiny-model family", async () => {
    const result = await mentor("models", "make-tiny", "mistral", join(directory, "x.gguf"));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /MNT_ERR_BAD_INPUT/);
  });
});
