import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { errorCodes } from "../../src/errors/index.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** The rows of docs/server.md's table of error codes: code → status. */
function documentedCodes(): Map<string, number> {
  const text = readFileSync(join(root, "docs/server.md"), "utf8");
  const rows = [...text.matchAll(/^\| `(MNT_ERR_[A-Z_]+)` \| (\d{3}) \|/gm)];
  return new Map(rows.map((row) => [row[1] as string, Number(row[2])]));
}

/** Every `"MNT_ERR_…"` literal in the TypeScript files under a folder of src/. */
function codesUsedIn(folder: string): Set<string> {
  const codes = new Set<string>();
  const directory = join(root, "src", folder);
  for (const entry of readdirSync(directory, { recursive: true, encoding: "utf8" })) {
    if (!entry.endsWith(".ts")) continue;
    for (const match of readFileSync(join(directory, entry), "utf8").matchAll(/"(MNT_ERR_[A-Z_]+)"/g))
      codes.add(match[1] as string);
  }
  return codes;
}

describe("the error codes of the HTTP API", () => {
  it("docs/server.md gives each the status the code registry gives it", () => {
    const documented = documentedCodes();
    assert.ok(documented.size >= 20, `${documented.size} rows found`);
    for (const [code, status] of documented) {
      const registered = errorCodes[code as keyof typeof errorCodes];
      assert.ok(registered, `${code} is documented but not in src/errors/codes.ts`);
      assert.equal(status, registered.status, code);
    }
  });

  it("every code the server, the turn and the dashboard can raise is documented", () => {
    const documented = documentedCodes();
    const used = new Set([...codesUsedIn("server"), ...codesUsedIn("agent"), ...codesUsedIn("dashboard")]);
    const missing = [...used].filter((code) => !documented.has(code));
    assert.deepEqual(missing, []);
  });
});
