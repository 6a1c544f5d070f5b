import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { EngineGenerator, type Grounder, type Grounding } from "../../src/agent/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { Engine } from "../../src/llm/index.js";
import { buildServer } from "../../src/server/index.js";
import { makeTravelModel, travelTools } from "../support/tiny-travel.js";

// The context-length check runs before grounding: the labeler never reads a conversation the
// model could not take (issue 36: a 100 KB hostile message stalled the server in the patterns).
const directory = mkdtempSync(join(tmpdir(), "mentor-context-"));
let engine: Engine;
let app: FastifyInstance;
/** The conversations the grounder was asked to read (their characters). */
const grounded: number[] = [];

/** The policy's labeler, recording what it is given. */
class RecordingGrounder implements Grounder {
  constructor(private readonly labeler: Labeler) {}

  ground(messages: readonly unknown[], signal?: AbortSignal): Promise<Grounding> {
    grounded.push(JSON.stringify(messages).length);
    return this.labeler.ground(messages, signal);
  }
}

before(async () => {
  engine = await Engine.load({
    modelPath: await makeTravelModel(join(directory, "tiny.gguf")),
    contextSize: 1024,
    sequences: 1,
  });
  // The generator the server makes of a local engine (src/server/backend.ts), answering at once.
  app = await buildServer({
    generator: new EngineGenerator(engine),
    modelId: "tiny",
    logger: false,
    grounder: (policy) => new RecordingGrounder(new Labeler(policy)),
  });
});
after(async () => {
  await app?.close();
  await engine?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

function chat(content: string) {
  return app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    payload: { model: "tiny", messages: [{ role: "user", content }], tools: travelTools, max_tokens: 16 },
  });
}

describe("a conversation longer than the context", () => {
  it("answers 400 MNT_ERR_CONTEXT_LENGTH without the labeler reading it", async () => {
    const hostile = "Aaaa ".repeat(20_000);
    const response = await chat(hostile);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().error.code, "MNT_ERR_CONTEXT_LENGTH");
    assert.match(response.json().error.message, /the prompt \(\d+ tokens\)/);
    assert.deepEqual(grounded, []);
  });

  it("is refused from its characters alone when they are too many for any tokenization", async () => {
    // No token is longer than the vocabulary's longest text (128 characters here).
    const hostile = "Aaaa ".repeat(40_000);
    const response = await chat(hostile);
    assert.equal(response.statusCode, 400, response.body);
    assert.match(response.json().error.message, /the prompt \(at least \d+ tokens\)/);
    assert.deepEqual(grounded, []);
  });

  it("is grounded when it fits", async () => {
    const response = await chat("Book a train from Toronto to Chicago.");
    assert.notEqual(response.json().error?.code, "MNT_ERR_CONTEXT_LENGTH", response.body);
    assert.equal(grounded.length, 1);
  });
});
