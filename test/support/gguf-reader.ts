import { closeSync, openSync, readFileSync, readSync } from "node:fs";

/** A minimal GGUF reader for tests, independent of the writer: it decodes what the file says. */
export interface ReadGguf {
  version: number;
  alignment: number;
  /** Metadata in file order, with each value's type tag. */
  metadata: { key: string; type: number; itemType?: number; value: unknown }[];
  tensors: { name: string; dimensions: number[]; type: number; offset: number }[];
  /** Byte position where tensor data starts. */
  dataStart: number;
  bytes: Buffer;
}

/** `headerBytes`: read only the file's start (metadata and tensor infos of a large model). */
export function readGguf(path: string, headerBytes?: number): ReadGguf {
  const bytes = headerBytes === undefined ? readFileSync(path) : readStart(path, headerBytes);
  let at = 0;
  const u32 = () => {
    const value = bytes.readUInt32LE(at);
    at += 4;
    return value;
  };
  const u64 = () => {
    const value = Number(bytes.readBigUInt64LE(at));
    at += 8;
    return value;
  };
  const string = () => {
    const length = u64();
    const value = bytes.toString("utf8", at, at + length);
    at += length;
    return value;
  };
  const scalar = (type: number): unknown => {
    let value: unknown;
    switch (type) {
      case 0:
        value = bytes.readUInt8(at);
        at += 1;
        return value;
      case 1:
        value = bytes.readInt8(at);
        at += 1;
        return value;
      case 2:
        value = bytes.readUInt16LE(at);
        at += 2;
        return value;
      case 3:
        value = bytes.readInt16LE(at);
        at += 2;
        return value;
      case 4:
        return u32();
      case 5:
        value = bytes.readInt32LE(at);
        at += 4;
        return value;
      case 6:
        value = bytes.readFloatLE(at);
        at += 4;
        return value;
      case 7: {
        const byte = bytes.readUInt8(at);
        at += 1;
        if (byte > 1) throw new Error(`bool byte ${byte}`);
        return byte === 1;
      }
      case 8:
        return string();
      case 10:
        value = bytes.readBigUInt64LE(at);
        at += 8;
        return value;
      case 11:
        value = bytes.readBigInt64LE(at);
        at += 8;
        return value;
      case 12:
        value = bytes.readDoubleLE(at);
        at += 8;
        return value;
      default:
        throw new Error(`unknown value type ${type} at byte ${at}`);
    }
  };
  if (bytes.toString("latin1", 0, 4) !== "GGUF") throw new Error("bad magic");
  at = 4;
  const version = u32();
  const tensorCount = u64();
  const metadataCount = u64();
  const metadata: ReadGguf["metadata"] = [];
  for (let index = 0; index < metadataCount; index++) {
    const key = string();
    const type = u32();
    if (type === 9) {
      const itemType = u32();
      const count = u64();
      const value = Array.from({ length: count }, () => scalar(itemType));
      metadata.push({ key, type, itemType, value });
    } else {
      metadata.push({ key, type, value: scalar(type) });
    }
  }
  const tensors: ReadGguf["tensors"] = [];
  for (let index = 0; index < tensorCount; index++) {
    const name = string();
    const dimensionCount = u32();
    const dimensions = Array.from({ length: dimensionCount }, () => u64());
    const type = u32();
    const offset = u64();
    tensors.push({ name, dimensions, type, offset });
  }
  const alignmentEntry = metadata.find((entry) => entry.key === "general.alignment");
  const alignment = alignmentEntry ? Number(alignmentEntry.value) : 32;
  const dataStart = Math.ceil(at / alignment) * alignment;
  return { version, alignment, metadata, tensors, dataStart, bytes };
}

/** Decodes IEEE half-precision bits. */
export function float16ToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

function readStart(path: string, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  const descriptor = openSync(path, "r");
  try {
    return bytes.subarray(0, readSync(descriptor, bytes, 0, length, 0));
  } finally {
    closeSync(descriptor);
  }
}
