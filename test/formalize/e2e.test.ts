import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import * as transcript from "./transcripts.js";

// Needs a model: `mentor formalize` against mentor's own server on a tiny random-weight model.
// Mechanics only (the model writes random text): it runs, writes its report, and exits as documented.
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-formalize-e2e-"));
let server: RunningServer | undefined;
after(async () => {
  await server?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe("mentor formalize against mentor serve with a tiny model", { timeout: 10 * 60 * 1000 }, () => {
  it("runs the loop, writes the report and transcript, and exits with the code of its outcome", async () => {
    const model = join(directory, "tiny-qwen3.gguf");
    await makeTinyModel({ family: "qwen3", outputPath: model, seed: 5 });
    server = await startServer({
      model,
      policies: [],
      port: 0,
      sequences: 1,
      contextSize: 4096,
      gpu: "cpu",
      logger: false,
    });
    const manualFile = join(directory, "manual.md");
    const toolsFile = join(directory, "tools.json");
    writeFileSync(manualFile, transcript.manual);
    writeFileSync(toolsFile, JSON.stringify(transcript.tools));
    const out = join(directory, "travel.yaml");
    const child = spawn(
      process.execPath,
      [
        main,
        "formalize",
        ...["--manual", manualFile, "--tools", toolsFile],
        ...["--endpoint", `${server.url}/v1`, "--model", "tiny-qwen3"],
        ...["--iterations", "1", "--repairs", "1", "--conversations", "2", "--max-tokens", "48"],
        ...["--labeler", "rules", "--out", out],
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(child, "exit");
    const report = JSON.parse(readFileSync(join(directory, "travel.report.json"), "utf8")) as {
      outcome: string;
      rounds: { candidates: unknown[] }[];
    };
    const expected = { agreed: 0, disagreements: 1, "no-suite": 1, "no-policy": 2 }[report.outcome];
    assert.equal(code, expected, `${stdout}\n${stderr}`);
    assert.match(stdout, new RegExp(`outcome: ${report.outcome}`));
    assert.equal(existsSync(out), report.outcome !== "no-policy");
    assert.ok(existsSync(join(directory, "travel.report.md")));
    // Every request and answer is in the transcript: at least the translator's first answer and its repair.
    const exchanges = readFileSync(join(directory, "travel.transcript.jsonl"), "utf8").trim().split("\n");
    assert.ok(exchanges.length >= 2, `${exchanges.length} exchanges`);
    assert.equal((JSON.parse(exchanges[0] as string) as { agent: string }).agent, "translator");
    assert.ok((report.rounds[0]?.candidates.length ?? 0) >= 1);
  });
});
