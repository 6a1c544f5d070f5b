import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startReplica } from "../../bench/replicas/cluster.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import { travelMessages, travelTools } from "../support/tiny-travel.js";

// Needs a model: writes a tiny one. A real `mentor serve` child killed with SIGKILL.
const directory = mkdtempSync(join(tmpdir(), "mentor-recorder-fsync-"));
after(() => rmSync(directory, { recursive: true, force: true }));

describe("mentor serve --recorder-fsync", () => {
  it("every answered request is in the flight records after kill -9", async () => {
    const model = join(directory, "llama.gguf");
    await makeTinyModel({ family: "llama3.1", outputPath: model, seed: 3 });
    const recorder = join(directory, "flights");
    const { url, child } = await startReplica([
      "--model",
      model,
      "--gpu",
      "cpu",
      "--threads",
      "1",
      "--shield",
      "prompt",
      "--recorder",
      recorder,
      "--recorder-fsync",
      "--trust-client-grounding",
      "--labeler",
      "rules",
    ]);
    const exited = once(child, "exit");

    const answered: string[] = [];
    /** One request; the answer's id once its body is complete (undefined if the server died first). */
    const ask = async (stream: boolean, seed: number): Promise<void> => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "llama",
          messages: travelMessages,
          tools: travelTools,
          tool_choice: seed % 2 === 0 ? "required" : "auto",
          max_tokens: 24,
          seed,
          stream,
        }),
      });
      const text = await response.text();
      const id = /"id":"(chatcmpl-[^"]+)"/.exec(text)?.[1];
      assert.ok(id, text.slice(0, 300));
      if (stream) assert.ok(text.endsWith("data: [DONE]\n\n"), text.slice(-200));
      answered.push(id);
    };
    // One after another, streamed and not; then several at once, killed as the first answer arrives.
    for (let seed = 0; seed < 4; seed++) await ask(seed % 2 === 1, seed);
    const racing = [4, 5, 6, 7].map((seed) => ask(seed % 2 === 1, seed));
    await Promise.race(racing);
    child.kill("SIGKILL");
    await Promise.allSettled(racing);
    const [, signal] = await exited;
    assert.equal(signal, "SIGKILL");

    const records = readdirSync(recorder).flatMap((file) =>
      readFileSync(join(recorder, file), "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as { id: string; status: number }),
    );
    assert.ok(answered.length >= 5, `answered ${answered.length}`);
    const ids = new Set(records.map((record) => record.id));
    for (const id of answered) assert.ok(ids.has(id), `answered request ${id} is recorded`);
    for (const record of records.filter((entry) => answered.includes(entry.id)))
      assert.equal(record.status, 200);
  });
});
