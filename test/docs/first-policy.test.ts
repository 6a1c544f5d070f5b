import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

// docs/policy.md, "Writing your first policy": its commands run through the CLI entry in
// docs/examples/first-policy and print what the page shows; the files it shows are the folder's.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const mentor = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const folder = join(root, "docs", "examples", "first-policy");

const page = readFileSync(join(root, "docs", "policy.md"), "utf8");
const start = page.indexOf("\n## Writing your first policy\n");
const end = page.indexOf("\n## ", start + 1);
const section = page.slice(start, end < 0 ? page.length : end);

/** The fenced blocks of the section in a language: their first line and the rest. */
function blocks(language: string): { first: string; body: string }[] {
  return [...section.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((match) => {
    const content = match[1] as string;
    const newline = content.indexOf("\n");
    return { first: content.slice(0, newline), body: content.slice(newline + 1) };
  });
}

function run(command: string): { stdout: string; stderr: string; status: number | null } {
  const args = command.replace(/^\$ mentor /, "").split(" ");
  const result = spawnSync(process.execPath, [mentor, ...args], { cwd: folder, encoding: "utf8" });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

test("the walk-through's commands print what the page shows", () => {
  assert.ok(start >= 0, "docs/policy.md has no section Writing your first policy");
  const commands = blocks("console");
  const ran = commands.map((block) => block.first.split(" ")[2]);
  for (const command of ["init", "ground", "lint", "verify"])
    assert.ok(ran.includes(command), `no mentor ${command}`);
  for (const block of commands) {
    if (block.first.startsWith("$ mentor init ")) {
      // Written to a fresh folder (the example's has its policy.yaml): the folder's skeleton.yaml, shown below.
      const out = mkdtempSync(join(tmpdir(), "mentor-init-"));
      const result = run(`${block.first} --out ${out}`);
      assert.equal(result.status, 0, `${block.first}: ${result.stderr}`);
      assert.equal(
        readFileSync(join(out, "policy.yaml"), "utf8"),
        readFileSync(join(folder, "skeleton.yaml"), "utf8"),
      );
      continue;
    }
    const result = run(block.first);
    assert.ok(result.status === 0 || result.status === 1, `${block.first}: ${result.stderr}`);
    assert.equal(result.stdout, block.body, `${block.first} now prints:\n${result.stdout}`);
  }
});

test("the files the walk-through shows are the folder's", () => {
  const shown = [...blocks("yaml"), ...blocks("text")];
  assert.ok(shown.length >= 3);
  for (const block of shown) {
    const file = /^# docs\/examples\/first-policy\/(\S+)$/.exec(block.first)?.[1];
    assert.ok(file, block.first);
    assert.equal(block.body, readFileSync(join(folder, file), "utf8"), file);
  }
});

test("the final policy agrees with every one of at least 20 labelled conversations; the draft does not", () => {
  const suite = JSON.parse(readFileSync(join(folder, "suite.json"), "utf8")) as { conversations: unknown[] };
  assert.ok(suite.conversations.length >= 20);
  const final = run("$ mentor verify --policy policy.yaml --suite suite.json");
  assert.equal(final.status, 0, final.stdout);
  assert.equal(JSON.parse(final.stdout).agree, suite.conversations.length);
  const draft = run("$ mentor verify --policy draft.yaml --suite suite.json");
  assert.equal(draft.status, 1);
  assert.deepEqual(
    JSON.parse(draft.stdout).disagreements.map((entry: { conversation: string }) => entry.conversation),
    ["c07", "c19"],
  );
});
