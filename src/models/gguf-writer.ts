import { open } from "node:fs/promises";
import { endianness } from "node:os";

/**
 * A writer for GGUF version 3 files, the model format of llama.cpp.
 *
 * Layout (all integers little-endian):
 * ```
 * "GGUF" u32 version  u64 tensorCount  u64 metadataCount
 * metadataCount × (string key, u32 valueType, value)
 * tensorCount × (string name, u32 dimensionCount, u64 dimension…, u32 ggmlType, u64 offset)
 * padding to `general.alignment` (default 32)
 * tensor data, each tensor starting at a multiple of the alignment (offsets are relative to here)
 * ```
 * A string is a u64 byte length followed by UTF-8 bytes; an array is a u32 item type, a u64
 * count and the items. Dimensions are listed innermost first (`[columns, rows]` for a matrix).
 */

/** GGUF metadata value types, with their numeric tags in the file. */
export const ggufValueTypes = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

export type GgufScalarType = Exclude<keyof typeof ggufValueTypes, "array">;
export type GgufScalar = number | bigint | boolean | string;

export type GgufMetadataValue =
  | { type: GgufScalarType; value: GgufScalar }
  | { type: "array"; itemType: GgufScalarType; values: readonly GgufScalar[] | Float32Array | Int32Array };

/** ggml tensor element types this writer can encode. */
export const ggmlTypes = { f32: 0, f16: 1 } as const;
export type GgmlType = keyof typeof ggmlTypes;

export interface GgufTensor {
  name: string;
  /** Innermost first: a matrix of `rows` rows of `columns` elements is `[columns, rows]`. */
  dimensions: readonly number[];
  type: GgmlType;
  /** Row-major values; converted to `type` when written. */
  data: Float32Array;
}

export const defaultGgufAlignment = 32;

/** Collects metadata and tensors, then writes them as one GGUF file. */
export class GgufWriter {
  readonly #metadata = new Map<string, GgufMetadataValue>();
  readonly #tensors: GgufTensor[] = [];

  set(key: string, value: GgufMetadataValue): this {
    this.#metadata.set(key, value);
    return this;
  }

  setString(key: string, value: string): this {
    return this.set(key, { type: "string", value });
  }

  setUint32(key: string, value: number): this {
    return this.set(key, { type: "uint32", value });
  }

  setFloat32(key: string, value: number): this {
    return this.set(key, { type: "float32", value });
  }

  setBool(key: string, value: boolean): this {
    return this.set(key, { type: "bool", value });
  }

  setArray(
    key: string,
    itemType: GgufScalarType,
    values: readonly GgufScalar[] | Float32Array | Int32Array,
  ): this {
    return this.set(key, { type: "array", itemType, values });
  }

  addTensor(tensor: GgufTensor): this {
    const elements = tensor.dimensions.reduce((product, size) => product * size, 1);
    if (elements !== tensor.data.length)
      throw new RangeError(
        `tensor ${tensor.name}: dimensions ${tensor.dimensions.join("×")} need ${elements} values, got ${tensor.data.length}`,
      );
    if (this.#tensors.some((other) => other.name === tensor.name))
      throw new RangeError(`tensor ${tensor.name} added twice`);
    this.#tensors.push(tensor);
    return this;
  }

  get tensorCount(): number {
    return this.#tensors.length;
  }

  get metadataKeys(): string[] {
    return [...this.#metadata.keys()];
  }

  get alignment(): number {
    const entry = this.#metadata.get("general.alignment");
    return entry && entry.type !== "array" ? Number(entry.value) : defaultGgufAlignment;
  }

  /** Writes the file at `path` (replacing it), streaming the tensor data. */
  async write(path: string): Promise<void> {
    const alignment = this.alignment;
    const header = new ByteSink();
    header.raw(Buffer.from("GGUF", "latin1"));
    header.uint32(3);
    header.uint64(BigInt(this.#tensors.length));
    header.uint64(BigInt(this.#metadata.size));
    for (const [key, value] of this.#metadata) {
      header.string(key);
      header.uint32(ggufValueTypes[value.type]);
      if (value.type === "array") {
        header.uint32(ggufValueTypes[value.itemType]);
        header.uint64(BigInt(value.values.length));
        for (const item of value.values) header.scalar(value.itemType, item);
      } else {
        header.scalar(value.type, value.value);
      }
    }
    let offset = 0;
    for (const tensor of this.#tensors) {
      header.string(tensor.name);
      header.uint32(tensor.dimensions.length);
      for (const size of tensor.dimensions) header.uint64(BigInt(size));
      header.uint32(ggmlTypes[tensor.type]);
      header.uint64(BigInt(offset));
      offset = alignUp(offset + tensorByteLength(tensor), alignment);
    }
    header.pad(alignment);

    const file = await open(path, "w");
    try {
      for (const chunk of header.chunks()) await file.write(chunk);
      for (const tensor of this.#tensors) {
        const bytes = encodeTensor(tensor);
        await file.write(bytes);
        const padding = alignUp(bytes.length, alignment) - bytes.length;
        if (padding > 0) await file.write(Buffer.alloc(padding));
      }
    } finally {
      await file.close();
    }
  }
}

export function alignUp(value: number, alignment: number): number {
  return Math.ceil(value / alignment) * alignment;
}

function tensorByteLength(tensor: GgufTensor): number {
  return tensor.data.length * (tensor.type === "f32" ? 4 : 2);
}

function encodeTensor(tensor: GgufTensor): Buffer {
  if (littleEndian) {
    const values = tensor.type === "f32" ? tensor.data : float16Array(tensor.data);
    return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  }
  if (tensor.type === "f32") {
    const bytes = Buffer.alloc(tensor.data.length * 4);
    for (let index = 0; index < tensor.data.length; index++)
      bytes.writeFloatLE(tensor.data[index] as number, index * 4);
    return bytes;
  }
  const bytes = Buffer.alloc(tensor.data.length * 2);
  for (let index = 0; index < tensor.data.length; index++)
    bytes.writeUInt16LE(float32ToFloat16Bits(tensor.data[index] as number), index * 2);
  return bytes;
}

const littleEndian = endianness() === "LE";

function float16Array(values: Float32Array): Uint16Array {
  const result = new Uint16Array(values.length);
  for (let index = 0; index < values.length; index++)
    result[index] = float32ToFloat16Bits(values[index] as number);
  return result;
}

const float32View = new Float32Array(1);
const uint32View = new Uint32Array(float32View.buffer);

/** IEEE 754 half-precision bits of `value`, rounded to nearest even. */
export function float32ToFloat16Bits(value: number): number {
  float32View[0] = value;
  const bits = uint32View[0] as number;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - halfExponent;
    let half = mantissa >>> shift;
    const remainder = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (remainder > halfway || (remainder === halfway && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (halfExponent << 10) | (mantissa >>> 13);
  const remainder = mantissa & 0x1fff;
  if (remainder > 0x1000 || (remainder === 0x1000 && (half & 1) === 1)) half++;
  return sign | half;
}

/** Appends little-endian values to a list of buffers. */
class ByteSink {
  readonly #chunks: Buffer[] = [];
  #current = Buffer.alloc(1 << 16);
  #used = 0;
  #length = 0;

  #reserve(size: number): void {
    if (this.#used + size <= this.#current.length) return;
    this.#chunks.push(this.#current.subarray(0, this.#used));
    this.#current = Buffer.alloc(Math.max(1 << 16, size));
    this.#used = 0;
  }

  raw(bytes: Uint8Array): void {
    this.#reserve(bytes.length);
    this.#current.set(bytes, this.#used);
    this.#used += bytes.length;
    this.#length += bytes.length;
  }

  uint32(value: number): void {
    this.#reserve(4);
    this.#current.writeUInt32LE(value, this.#used);
    this.#used += 4;
    this.#length += 4;
  }

  uint64(value: bigint): void {
    this.#reserve(8);
    this.#current.writeBigUInt64LE(value, this.#used);
    this.#used += 8;
    this.#length += 8;
  }

  string(value: string): void {
    const bytes = Buffer.from(value, "utf8");
    this.uint64(BigInt(bytes.length));
    this.raw(bytes);
  }

  scalar(type: GgufScalarType, value: GgufScalar): void {
    if (type === "string") {
      if (typeof value !== "string") throw new TypeError(`expected a string, got ${typeof value}`);
      this.string(value);
      return;
    }
    const size = scalarSizes[type];
    this.#reserve(size);
    const at = this.#used;
    const target = this.#current;
    switch (type) {
      case "uint8":
        target.writeUInt8(Number(value), at);
        break;
      case "int8":
        target.writeInt8(Number(value), at);
        break;
      case "uint16":
        target.writeUInt16LE(Number(value), at);
        break;
      case "int16":
        target.writeInt16LE(Number(value), at);
        break;
      case "uint32":
        target.writeUInt32LE(Number(value), at);
        break;
      case "int32":
        target.writeInt32LE(Number(value), at);
        break;
      case "float32":
        target.writeFloatLE(Number(value), at);
        break;
      case "bool":
        target.writeUInt8(value ? 1 : 0, at);
        break;
      case "uint64":
        target.writeBigUInt64LE(BigInt(value), at);
        break;
      case "int64":
        target.writeBigInt64LE(BigInt(value), at);
        break;
      case "float64":
        target.writeDoubleLE(Number(value), at);
        break;
    }
    this.#used += size;
    this.#length += size;
  }

  pad(alignment: number): void {
    const padding = alignUp(this.#length, alignment) - this.#length;
    if (padding > 0) this.raw(new Uint8Array(padding));
  }

  chunks(): Buffer[] {
    return [...this.#chunks, this.#current.subarray(0, this.#used)];
  }
}

const scalarSizes: Record<Exclude<GgufScalarType, "string">, number> = {
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  uint32: 4,
  int32: 4,
  float32: 4,
  bool: 1,
  uint64: 8,
  int64: 8,
  float64: 8,
};
