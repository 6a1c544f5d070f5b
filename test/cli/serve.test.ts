import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { startReplica } from "../../bench/replicas/cluster.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";

// Needs a model: writes a tiny one.
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-cli-serve-"));
after(() => rmSync(directory, { recursive: true, force: true }));

describe("mentor serve (command line)", () => {
  it("takes its settings from the environment and finishes the request in flight on SIGTERM", async () => {
    const model = join(directory, "llama.gguf");
    await makeTinyModel({ family: "llama3.1", outputPath: model, seed: 3 });
    const recorder = join(directory, "flights");
    // Structured logs: one JSON object per line; the ready line carries the URL and the settings.
    const { url, child, ready } = await startReplica([], {
      ...process.env,
      MENTOR_MODEL: model,
      MENTOR_SHIELD: "prompt",
      MENTOR_RECORDER: recorder,
      MENTOR_GPU: "cpu",
    });
    assert.deepEqual([ready.shield, ready.model, ready.gpu], ["prompt", "llama", "cpu"]);
    const exited = once(child, "exit");
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "llama",
        messages: [{ role: "user", content: "Tell me a story." }],
        max_tokens: 200,
        stream: true,
      }),
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the role chunk: the request is being answered
    child.kill("SIGTERM");
    let text = "";
    const decoder = new TextDecoder();
    for (let part = await reader.read(); !part.done; part = await reader.read())
      text += decoder.decode(part.value);
    assert.ok(text.endsWith("data: [DONE]\n\n"), text.slice(-200));
    assert.match(text, /"finish_reason":"length"/);
    const [code] = await exited;
    assert.equal(code, 0);
    const [file] = readdirSync(recorder);
    const record = JSON.parse(readFileSync(join(recorder, file as string), "utf8").trim()) as {
      status: number;
    };
    assert.equal(record.status, 200);
  });

  /** `mentor serve` with settings it must refuse before it opens a port: its exit code and stderr. */
  async function refusedServe(args: readonly string[], env: Record<string, string> = {}) {
    const child = spawn(process.execPath, [main, "serve", "--port", "0", ...args], {
      env: { ...process.env, MENTOR_MODEL: join(directory, "llama.gguf"), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(child, "exit");
    return { code, stderr };
  }

  it("refuses an unknown --gpu (flag or MENTOR_GPU), a malformed --eta or --sequences, naming the flag", async () => {
    const gpu =
      /MNT_ERR_BAD_INPUT: --gpu \(MENTOR_GPU\) must be one of auto, cpu, cuda, vulkan, metal, not "tpu"/;
    for (const [args, env, message] of [
      [["--gpu", "tpu"], {}, gpu],
      [[], { MENTOR_GPU: "tpu" }, gpu],
      [["--eta", "abc"], {}, /MNT_ERR_BAD_INPUT: --eta must be a number of at least 0, not abc/],
      [["--sequences", "0"], {}, /MNT_ERR_BAD_INPUT: --sequences must be an integer of at least 1, not 0/],
    ] as const) {
      const { code, stderr } = await refusedServe(args, env);
      assert.equal(code, 2);
      assert.match(stderr, message);
    }
  });

  it("refuses --recorder-required (or MENTOR_RECORDER_REQUIRED) without --recorder", async () => {
    for (const [args, env] of [
      [["--recorder-required"], {}],
      [[], { MENTOR_RECORDER_REQUIRED: "1" }],
    ] as const) {
      const { code, stderr } = await refusedServe(args, env);
      assert.equal(code, 2);
      assert.match(stderr, /MNT_ERR_BAD_INPUT: .*--recorder-required needs --recorder/);
    }
  });
});
