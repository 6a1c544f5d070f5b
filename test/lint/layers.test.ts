import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

// The folder order of `npm run lint` (.dependency-cruiser.cjs) against the table of docs/architecture.md.
const root = fileURLToPath(new URL("../../../", import.meta.url));
const { layers } = createRequire(import.meta.url)(`${root}.dependency-cruiser.cjs`) as { layers: string[] };

describe("folder layers", () => {
  it("docs/architecture.md's folders table lists the src/ folders in the enforced order", () => {
    const page = readFileSync(`${root}docs/architecture.md`, "utf8");
    const section = page.slice(page.indexOf("## The folders"));
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
