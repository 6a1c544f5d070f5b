import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { readGgufFileInfo } from "node-llama-cpp";
import { float32ToFloat16Bits, GgufWriter, ggufValueTypes } from "../../src/models/gguf-writer.js";
import { float16ToNumber, readGguf } from "../support/gguf-reader.js";

const directory = mkdtempSync(join(tmpdir(), "mentor-gguf-"));
after(() => rmSync(directory, { recursive: true, force: true }));

describe("GGUF writer", () => {
  it("writes header, every metadata value type, tensor infos and aligned data", async () => {
    const path = join(directory, "layout.gguf");
    const matrix = Float32Array.from({ length: 6 * 3 }, (_, index) => index / 4 - 2);
    const vector = Float32Array.from([1.5, -0.25, 3, 1e-3, 100]);
    const writer = new GgufWriter()
      .setString("general.architecture", "llama")
      .set("test.u8", { type: "uint8", value: 200 })
      .set("test.i8", { type: "int8", value: -100 })
      .set("test.u16", { type: "uint16", value: 60000 })
      .set("test.i16", { type: "int16", value: -30000 })
      .setUint32("test.u32", 4000000000)
      .set("test.i32", { type: "int32", value: -2000000000 })
      .setFloat32("test.f32", 0.5)
      .setBool("test.bool", true)
      .setString("test.string", "héllo ▁ <|eot_id|>")
      .set("test.u64", { type: "uint64", value: 2n ** 40n })
      .set("test.i64", { type: "int64", value: -(2n ** 40n) })
      .set("test.f64", { type: "float64", value: Math.PI })
      .setArray("test.strings", "string", ["a", "", "ü b"])
      .setArray("test.ints", "int32", Int32Array.from([1, -2, 3]))
      .setArray("test.floats", "float32", Float32Array.from([0.25, -1]))
      .addTensor({ name: "vector", dimensions: [5], type: "f32", data: vector })
      .addTensor({ name: "matrix", dimensions: [6, 3], type: "f16", data: matrix });
    await writer.write(path);

    const file = readGguf(path);
    assert.equal(file.version, 3);
    assert.equal(file.alignment, 32);
    const byKey = new Map(file.metadata.map((entry) => [entry.key, entry]));
    const expect = (key: string, type: keyof typeof ggufValueTypes, value: unknown) => {
      const entry = byKey.get(key);
      assert.ok(entry, key);
      assert.equal(entry.type, ggufValueTypes[type], `${key} type`);
      assert.deepEqual(entry.value, value, key);
    };
    expect("general.architecture", "string", "llama");
    expect("test.u8", "uint8", 200);
    expect("test.i8", "int8", -100);
    expect("test.u16", "uint16", 60000);
    expect("test.i16", "int16", -30000);
    expect("test.u32", "uint32", 4000000000);
    expect("test.i32", "int32", -2000000000);
    expect("test.f32", "float32", 0.5);
    expect("test.bool", "bool", true);
    expect("test.string", "string", "héllo ▁ <|eot_id|>");
    expect("test.u64", "uint64", 2n ** 40n);
    expect("test.i64", "int64", -(2n ** 40n));
    expect("test.f64", "float64", Math.PI);
    expect("test.strings", "array", ["a", "", "ü b"]);
    assert.equal(byKey.get("test.strings")?.itemType, ggufValueTypes.string);
    expect("test.ints", "array", [1, -2, 3]);
    assert.equal(byKey.get("test.ints")?.itemType, ggufValueTypes.int32);
    expect("test.floats", "array", [0.25, -1]);

    assert.deepEqual(
      file.tensors.map(({ name, dimensions, type }) => ({ name, dimensions, type })),
      [
        { name: "vector", dimensions: [5], type: 0 },
        { name: "matrix", dimensions: [6, 3], type: 1 },
      ],
    );
    assert.equal(file.dataStart % 32, 0);
    for (const tensor of file.tensors) assert.equal(tensor.offset % 32, 0, `${tensor.name} offset aligned`);
    assert.equal(file.tensors[1]?.offset, 32, "20 bytes of f32 data padded to 32");
    const vectorAt = file.dataStart + (file.tensors[0]?.offset ?? 0);
    for (let index = 0; index < vector.length; index++)
      assert.equal(file.bytes.readFloatLE(vectorAt + index * 4), vector[index]);
    const matrixAt = file.dataStart + (file.tensors[1]?.offset ?? 0);
    for (let index = 0; index < matrix.length; index++)
      assert.equal(float16ToNumber(file.bytes.readUInt16LE(matrixAt + index * 2)), matrix[index]);
    assert.equal(file.bytes.length, matrixAt + 64, "the last tensor is padded to the alignment");
  });

  it("is read back by node-llama-cpp's GGUF parser", async () => {
    const path = join(directory, "parsed.gguf");
    await new GgufWriter()
      .setString("general.architecture", "llama")
      .setString("general.name", "parsed")
      .setUint32("llama.block_count", 7)
      .setArray("tokenizer.ggml.tokens", "string", ["<s>", "a", "b"])
      .addTensor({ name: "token_embd.weight", dimensions: [4, 3], type: "f32", data: new Float32Array(12) })
      .write(path);
    const info = await readGgufFileInfo(path, { readTensorInfo: true });
    assert.equal(info.version, 3);
    assert.equal(info.metadata.general.architecture, "llama");
    assert.equal(info.metadata.general.name, "parsed");
    assert.equal((info.metadata as unknown as { llama: { block_count: number } }).llama.block_count, 7);
    assert.deepEqual(Array.from(info.metadata.tokenizer.ggml.tokens), ["<s>", "a", "b"]);
    assert.deepEqual(
      info.fullTensorInfo?.map((tensor) => [tensor.name, tensor.dimensions.map(Number)]),
      [["token_embd.weight", [4, 3]]],
    );
  });

  it("honours general.alignment and rejects inconsistent tensors", async () => {
    const path = join(directory, "aligned.gguf");
    await new GgufWriter()
      .setUint32("general.alignment", 64)
      .addTensor({ name: "a", dimensions: [3], type: "f32", data: new Float32Array(3) })
      .addTensor({ name: "b", dimensions: [3], type: "f32", data: new Float32Array(3) })
      .write(path);
    const file = readGguf(path);
    assert.equal(file.dataStart % 64, 0);
    assert.deepEqual(
      file.tensors.map((tensor) => tensor.offset),
      [0, 64],
    );
    assert.throws(
      () =>
        new GgufWriter().addTensor({ name: "x", dimensions: [2, 2], type: "f32", data: new Float32Array(3) }),
      RangeError,
    );
  });

  it("converts to half precision with round-to-nearest-even", () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.5, 0x3800],
      [65504, 0x7bff],
      [65520, 0x7c00],
      [Number.POSITIVE_INFINITY, 0x7c00],
      [2 ** -24, 0x0001],
      [2 ** -25, 0x0000],
      [1 + 2 ** -11, 0x3c00],
      [1 + 3 * 2 ** -11, 0x3c02],
      [2 ** -14, 0x0400],
    ];
    for (const [value, bits] of cases) assert.equal(float32ToFloat16Bits(value), bits, `${value}`);
    assert.ok(
      (float32ToFloat16Bits(Number.NaN) & 0x7c00) === 0x7c00 &&
        (float32ToFloat16Bits(Number.NaN) & 0x3ff) !== 0,
    );
    for (let index = 0; index < 2000; index++) {
      const value = (Math.random() - 0.5) * 2 ** Math.floor(Math.random() * 30 - 15);
      const back = float16ToNumber(float32ToFloat16Bits(value));
      assert.ok(
        Math.abs(back - value) <= Math.max(Math.abs(value) * 2 ** -11, 2 ** -25),
        `${value} -> ${back}`,
      );
    }
  });
});
