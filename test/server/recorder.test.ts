import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { FastifyInstance } from "fastify";
import { FlightRecorder, type RecorderFileSystem, type RecorderHealth } from "../../src/evaluator/index.js";
import { buildServer, type ServerOptions } from "../../src/server/index.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { travelMessages, travelTools } from "../support/tiny-travel.js";

const directory = mkdtempSync(join(tmpdir(), "mentor-recorder-"));
const apps: FastifyInstance[] = [];
after(async () => {
  for (const app of apps) await app.close();
  rmSync(directory, { recursive: true, force: true });
});

let folders = 0;
const folder = (): string => join(directory, String(folders++));

/**
 * node:fs on a disk of `capacity` bytes for the record file: a write gets what room is left (a
 * short write), then ENOSPC; truncating frees the room again. `truncateFailures` makes that many
 * truncations fail with EIO.
 */
class SmallDisk implements RecorderFileSystem {
  capacity = Number.POSITIVE_INFINITY;
  truncateFailures = 0;
  /** At most this many bytes per write (short writes on a healthy disk). */
  chunk = Number.POSITIVE_INFINITY;

  writeSync(descriptor: number, buffer: Uint8Array, offset: number, length: number): number {
    const room = this.capacity - fs.fstatSync(descriptor).size;
    if (room <= 0)
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    return fs.writeSync(descriptor, buffer, offset, Math.min(length, room, this.chunk));
  }

  ftruncateSync(descriptor: number, length: number): void {
    if (this.truncateFailures > 0) {
      this.truncateFailures--;
      throw Object.assign(new Error("EIO: i/o error, ftruncate"), { code: "EIO" });
    }
    fs.ftruncateSync(descriptor, length);
  }

  fsyncSync(descriptor: number): void {
    fs.fsyncSync(descriptor);
  }
}

/** The file's lines, each parsed; fails unless the file ends with a whole line. */
function records(file: string): Record<string, unknown>[] {
  const text = readFileSync(file, "utf8");
  if (text === "") return [];
  assert.ok(text.endsWith("\n"), `${file} ends with a whole line: …${text.slice(-80)}`);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("FlightRecorder: whole lines or nothing", () => {
  it("writes a whole line through short writes", () => {
    const disk = new SmallDisk();
    disk.chunk = 7;
    const recorder = new FlightRecorder(folder(), { fileSystem: disk });
    for (let index = 0; index < 5; index++)
      assert.equal(recorder.write({ index, text: "x".repeat(100) }), undefined);
    recorder.close();
    assert.deepEqual(
      records(recorder.file).map((record) => record.index),
      [0, 1, 2, 3, 4],
    );
  });

  it("cuts a record that fails part way back off the file, counts it, and recovers", () => {
    const disk = new SmallDisk();
    const recorder = new FlightRecorder(folder(), { fileSystem: disk });
    assert.equal(recorder.write({ index: 0 }), undefined);
    disk.capacity = readFileSync(recorder.file).length + 10;
    const failure = recorder.write({ index: 1, text: "a record longer than the room left" });
    assert.equal((failure as NodeJS.ErrnoException | undefined)?.code, "ENOSPC");
    assert.equal(recorder.write({ index: 2 })?.message, failure?.message);
    assert.deepEqual(
      records(recorder.file).map((record) => record.index),
      [0],
    );
    const failing = recorder.health();
    assert.equal(failing.failing, true);
    assert.equal(failing.failures, 2);
    assert.equal(failing.lastError?.code, "ENOSPC");

    disk.capacity = Number.POSITIVE_INFINITY;
    assert.equal(recorder.write({ index: 3 }), undefined);
    recorder.close();
    assert.deepEqual(
      records(recorder.file).map((record) => record.index),
      [0, 3],
    );
    const recovered = recorder.health();
    assert.equal(recovered.failing, false);
    assert.equal(recovered.failures, 2);
    assert.equal(recovered.lastError?.code, "ENOSPC");
  });

  it("when the cut-back fails too, cuts back before the next line and appends nothing after a torn one", () => {
    const disk = new SmallDisk();
    const recorder = new FlightRecorder(folder(), { fileSystem: disk });
    assert.equal(recorder.write({ index: 0 }), undefined);
    disk.capacity = readFileSync(recorder.file).length + 10;
    disk.truncateFailures = 2;
    assert.equal(
      (recorder.write({ index: 1, text: "too long for the room" }) as NodeJS.ErrnoException).code,
      "ENOSPC",
    );
    // The line is torn; the next write's cut-back fails as well, so it writes nothing.
    disk.capacity = Number.POSITIVE_INFINITY;
    assert.equal((recorder.write({ index: 2 }) as NodeJS.ErrnoException).code, "EIO");
    assert.equal(recorder.write({ index: 3 }), undefined);
    recorder.close();
    assert.deepEqual(
      records(recorder.file).map((record) => record.index),
      [0, 3],
    );
  });

  it("returns an error for a record that is not JSON, writing nothing", () => {
    const recorder = new FlightRecorder(folder());
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    assert.ok(recorder.write(circular) instanceof TypeError);
    assert.equal(recorder.write({ index: 1 }), undefined);
    recorder.close();
    assert.deepEqual(
      records(recorder.file).map((record) => record.index),
      [1],
    );
  });
});

const checkDistance = { name: "check_distance", arguments: { origin: "Toronto", destination: "Chicago" } };
const chat = { model: "scripted", messages: travelMessages, tools: travelTools };

async function build(
  options: ServerOptions,
): Promise<{ app: FastifyInstance; generator: ScriptedGenerator }> {
  const generator = new ScriptedGenerator([{ calls: [checkDistance] }]);
  const app = await buildServer({
    generator,
    modelId: "scripted",
    shield: "prompt",
    logger: false,
    trustClientGrounding: true,
    ...options,
  });
  apps.push(app);
  return { app, generator };
}

const ask = (app: FastifyInstance, body: Record<string, unknown> = {}) =>
  app.inject({ method: "POST", url: "/v1/chat/completions", payload: { ...chat, ...body } });

interface Health {
  status: string;
  recorder: RecorderHealth;
}

function recordFile(recorderDirectory: string): string {
  const [file] = readdirSync(recorderDirectory);
  return join(recorderDirectory, file as string);
}

describe("the server when its flight recorder fails", () => {
  it("answers anyway, logs and counts the failure, and /health says degraded (200) until a record is written", async () => {
    const disk = new SmallDisk();
    const recorderDirectory = folder();
    const logged: string[] = [];
    const { app } = await build({
      recorderDirectory,
      recorderFileSystem: disk,
      logger: { level: "error", stream: { write: (line: string) => logged.push(line) } },
    });
    assert.equal((await ask(app)).statusCode, 200);
    const healthy = await app.inject("/health");
    assert.equal(healthy.statusCode, 200);
    assert.equal((healthy.json() as Health).status, "ok");
    assert.deepEqual((healthy.json() as Health).recorder, {
      failing: false,
      failures: 0,
    });

    disk.capacity = readFileSync(recordFile(recorderDirectory)).length + 100;
    const answered = await ask(app);
    assert.equal(answered.statusCode, 200);
    assert.equal(
      (answered.json() as { choices: { message: { tool_calls: { function: { name: string } }[] } }[] })
        .choices[0]?.message.tool_calls[0]?.function.name,
      "check_distance",
    );
    const streamed = await ask(app, { stream: true });
    assert.equal(streamed.statusCode, 200);
    assert.ok(streamed.body.endsWith("data: [DONE]\n\n"), streamed.body.slice(-200));
    assert.doesNotMatch(streamed.body, /"error"/);

    const degraded = await app.inject("/health");
    assert.equal(degraded.statusCode, 200);
    const health = degraded.json() as Health;
    assert.equal(health.status, "degraded");
    assert.equal(health.recorder.failing, true);
    assert.equal(health.recorder.failures, 2);
    assert.equal(health.recorder.lastError?.code, "ENOSPC");
    assert.match((await app.inject("/metrics")).body, /^mentor_recorder_failures_total 2$/m);
    const errors = logged.map((line) => JSON.parse(line) as { msg: string; err?: { code?: string } });
    assert.equal(errors.filter((line) => line.msg === "flight record not written").length, 2);
    assert.equal(errors[0]?.err?.code, "ENOSPC");
    assert.equal(records(recordFile(recorderDirectory)).length, 1);

    disk.capacity = Number.POSITIVE_INFINITY;
    assert.equal((await ask(app)).statusCode, 200);
    assert.equal(((await app.inject("/health")).json() as Health).status, "ok");
    assert.deepEqual(
      records(recordFile(recorderDirectory)).map((record) => record.status),
      [200, 200],
    );
  });

  it("with recorderRequired: answers 503 MNT_ERR_RECORDER_FAILED instead of an unrecorded answer, refuses new work, and resumes once a record is written", async () => {
    const disk = new SmallDisk();
    const recorderDirectory = folder();
    const { app, generator } = await build({
      recorderDirectory,
      recorderFileSystem: disk,
      recorderRequired: true,
    });
    assert.equal((await ask(app)).statusCode, 200);
    disk.capacity = readFileSync(recordFile(recorderDirectory)).length + 100;

    const unrecorded = await ask(app);
    assert.equal(unrecorded.statusCode, 503);
    const error = (unrecorded.json() as { error: { code: string; message: string } }).error;
    assert.equal(error.code, "MNT_ERR_RECORDER_FAILED");
    assert.match(error.message, /ENOSPC/);
    const health = await app.inject("/health");
    assert.equal(health.statusCode, 503);
    assert.equal((health.json() as Health).status, "degraded");

    const generations = generator.requests.length;
    for (const stream of [false, true]) {
      const refused = await ask(app, { stream });
      assert.equal(refused.statusCode, 503);
      assert.equal((refused.json() as { error: { code: string } }).error.code, "MNT_ERR_RECORDER_FAILED");
    }
    assert.equal(generator.requests.length, generations, "no work while the recorder fails");
    assert.equal(records(recordFile(recorderDirectory)).length, 1);

    // Space is freed: the next refusal's record is written, and the server takes work again.
    disk.capacity = Number.POSITIVE_INFINITY;
    assert.equal((await ask(app)).statusCode, 503);
    assert.equal((await app.inject("/health")).statusCode, 200);
    assert.equal((await ask(app)).statusCode, 200);
    assert.deepEqual(
      records(recordFile(recorderDirectory)).map((record) => record.status),
      [200, 503, 200],
    );
  });

  it("with recorderRequired, a streamed answer whose record fails ends in the error event", async () => {
    const disk = new SmallDisk();
    const recorderDirectory = folder();
    const { app } = await build({ recorderDirectory, recorderFileSystem: disk, recorderRequired: true });
    disk.capacity = 0;
    const streamed = await ask(app, { stream: true });
    assert.match(streamed.body, /"code":"MNT_ERR_RECORDER_FAILED"/);
    assert.doesNotMatch(streamed.body, /"tool_calls"/);
  });

  it("recorderRequired needs a recorder directory", async () => {
    await assert.rejects(
      buildServer({ generator: new ScriptedGenerator([]), logger: false, recorderRequired: true }),
      { code: "MNT_ERR_BAD_INPUT" },
    );
  });

  it("a real file size limit (ulimit -f): answers 200, /health degraded with EFBIG, the file ends with a whole line", {
    skip: process.platform === "win32" ? "needs a POSIX shell" : false,
  }, async () => {
    const recorderDirectory = folder();
    const child = fileURLToPath(new URL("../support/recorder-child.js", import.meta.url));
    // 8 blocks of 512 bytes (1,024 in some shells): room for a few records of about 1.5 KB.
    const { stdout } = await promisify(execFile)("sh", [
      "-c",
      'ulimit -f 8 && exec "$0" "$1" "$2" 12',
      process.execPath,
      child,
      recorderDirectory,
    ]);
    const { statuses, health } = JSON.parse(stdout) as {
      statuses: number[];
      health: { status: number; body: Health };
    };
    assert.deepEqual(statuses, Array(12).fill(200));
    assert.equal(health.status, 200);
    assert.equal(health.body.status, "degraded");
    assert.equal(health.body.recorder.lastError?.code, "EFBIG");
    const written = records(recordFile(recorderDirectory));
    assert.ok(written.length >= 1, `${written.length} records`);
    assert.equal(written.length + health.body.recorder.failures, 12);
  });
});
