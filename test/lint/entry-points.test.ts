import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

// The package's entry points, imported by name (package.json "exports") in a child process whose
// module loader records every module it loads: the library entry must not load the engine or
// the server, which their own entries do load.
const root = fileURLToPath(new URL("../../../", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-entry-"));
after(() => rmSync(directory, { recursive: true, force: true }));

function modulesLoadedBy(specifier: string): string[] {
  const log = join(directory, `${specifier.replace(/\W/g, "-")}.log`);
  const hooks = pathToFileURL(join(root, "dist/test/support/import-hooks.js")).href;
  const register = `import { register } from "node:module"; register(${JSON.stringify(hooks)}, { data: { log: ${JSON.stringify(log)} } });`;
  execFileSync(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(register)}`,
      "--input-type=module",
      "--eval",
      `await import(${JSON.stringify(specifier)});`,
    ],
    { cwd: root, stdio: ["ignore", "ignore", "pipe"] },
  );
  return readFileSync(log, "utf8").split("\n").filter(Boolean);
}

const engine = /\/node_modules\/node-llama-cpp\/|\/dist\/src\/llm\//;
const server = /\/node_modules\/fastify\/|\/dist\/src\/server\//;

describe("the package's entry points", () => {
  it("mentor (the monitor, policies, middleware) loads neither node-llama-cpp nor fastify, nor src/llm or src/server", () => {
    const loaded = modulesLoadedBy("mentor");
    assert.ok(
      loaded.some((url) => url.endsWith("/dist/src/index.js")),
      "the entry itself is recorded",
    );
    assert.ok(loaded.some((url) => url.includes("/dist/src/evaluator/")));
    assert.deepEqual(
      loaded.filter((url) => engine.test(url) || server.test(url)),
      [],
    );
  });

  it("mentor/server loads fastify and src/server; mentor/engine loads node-llama-cpp and src/llm", () => {
    const serverModules = modulesLoadedBy("mentor/server");
    assert.ok(serverModules.some((url) => url.includes("/node_modules/fastify/")));
    assert.ok(serverModules.some((url) => url.includes("/dist/src/server/")));
    const engineModules = modulesLoadedBy("mentor/engine");
    assert.ok(engineModules.some((url) => url.includes("/node_modules/node-llama-cpp/")));
    assert.ok(engineModules.some((url) => url.includes("/dist/src/llm/")));
  });
});
