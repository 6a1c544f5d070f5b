import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

// The folder order of `npm run lint` (.dependency-cruiser.cjs) against the README's table.
const root = fileURLToPath(new URL("../../../", import.meta.url));
const { layers } = createRequire(import.meta.url)(`${root}.dependency-cruiser.cjs`) as { layers: string[] };

describe("folder layers", () => {
  it("the README's Folders table lists the src/ folders in the enforced order", () => {
    const readme = readFileSync(`${root}README.md`, "utf8");
    const section = readme.slice(readme.indexOf("## Folders"));
    const listed = [...section.matchAll(/^\| `src\/([a-z-]+)\/` \|/gm)].map((match) => match[1]);
    assert.deepEqual(listed, layers);
  });

  it("every folder under src/ has a place in the order", () => {
    const folders = readdirSync(`${root}src`, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    assert.deepEqual([...folders].sort(), [...layers].sort());
  });
});
