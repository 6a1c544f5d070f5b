import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { writeCacheRecord } from "../../src/models/cache.js";
import { listModels } from "../../src/models/list.js";
import { parseRegistry } from "../../src/models/registry.js";

const directory = mkdtempSync(join(tmpdir(), "mentor-list-"));
after(() => rmSync(directory, { recursive: true, force: true }));

describe("mentor models list", () => {
  it("shows registry models as absent, verified or unverified, then other .gguf files", async () => {
    const entry = (name: string) => ({
      name,
      description: name,
      file: `${name}.gguf`,
      size: null,
      sha256: null,
      chatFormat: "jinja",
      verified: null,
      sources: [{ type: "file", path: "/nowhere.gguf" }],
    });
    const registry = parseRegistry({ default: "a", models: [entry("a"), entry("b"), entry("c")] });
    writeFileSync(join(directory, "b.gguf"), "GGUF b");
    await writeCacheRecord(join(directory, "b.gguf"), "0".repeat(64));
    writeFileSync(join(directory, "c.gguf"), "GGUF c");
    writeFileSync(join(directory, "extra.gguf"), "GGUF extra");
    writeFileSync(join(directory, "notes.txt"), "not a model");
    const listed = await listModels({ directory, registry });
    assert.deepEqual(
      listed.map((model) => [model.name, model.file, model.status]),
      [
        ["a", "a.gguf", "absent"],
        ["b", "b.gguf", "verified"],
        ["c", "c.gguf", "unverified"],
        [null, "extra.gguf", "unverified"],
      ],
    );
    assert.equal(listed[1]?.size, 6);
    assert.equal(listed[0]?.path, null);
  });
});
