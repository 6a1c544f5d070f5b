import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Engine } from "../../src/llm/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { makeTravelModel, travelTools } from "../support/tiny-travel.js";

// A hostile request must not freeze the server: while it runs, /health keeps answering (before,
// 24 copies of one request in 24 user messages held the event loop for 14.5 s).
const directory = mkdtempSync(join(tmpdir(), "mentor-responsive-"));
let engine: Engine;
let server: RunningServer;

before(async () => {
  const path = await makeTravelModel(join(directory, "tiny.gguf"));
  engine = await Engine.load({ modelPath: path, contextSize: 2048, sequences: 2 });
  server = await startServer({ engine, modelId: "tiny", port: 0, logger: false });
});
after(async () => {
  await server?.close();
  await engine?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

/** The slowest /health answer while `request` is in flight, and the request's response. */
async function healthWhile(request: Promise<Response>): Promise<{ slowestMs: number; response: Response }> {
  let done = false;
  const settled = request.finally(() => {
    done = true;
  });
  let slowestMs = 0;
  while (!done) {
    const started = performance.now();
    const health = await fetch(`${server.url}/health`);
    await health.body?.cancel();
    slowestMs = Math.max(slowestMs, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { slowestMs, response: await settled };
}

function chat(messages: unknown[]): Promise<Response> {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "tiny:token",
      messages,
      tools: travelTools,
      tool_choice: "required",
      max_tokens: 24,
      seed: 1,
    }),
  });
}

describe("a hostile request on a server with the token shield", () => {
  it("24 copies of one request: one duty, and /health answers within 1 s throughout", async () => {
    const messages = Array.from({ length: 24 }, () => ({
      role: "user",
      content: "Book a train from Toronto to Chicago.",
    }));
    const { slowestMs, response } = await healthWhile(chat(messages));
    assert.equal(response.status, 200);
    const body = (await response.json()) as { mentor: { openDuties: { rule: string }[] } };
    const single = (await (await chat(messages.slice(0, 1))).json()) as typeof body;
    assert.deepEqual(body.mentor.openDuties, single.mentor.openDuties);
    assert.ok(slowestMs < 1000, `/health took ${slowestMs.toFixed(0)} ms`);
  });

  it("a 100 KB hostile user message: refused as too long, and /health answers within 1 s throughout", async () => {
    const { slowestMs, response } = await healthWhile(
      chat([{ role: "user", content: "Aaaa ".repeat(20_000) }]),
    );
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { code: string } };
    assert.equal(body.error.code, "MNT_ERR_CONTEXT_LENGTH");
    assert.ok(slowestMs < 1000, `/health took ${slowestMs.toFixed(0)} ms`);
  });
});
