import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

// The worked examples of docs/examples/README.md and the verify output of docs/policy.md: every
// example policy loads and lints clean, every policy shown is the file, every conversation is
// judged as stated below, and every `mentor verify` output shown is the command's output.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const mentor = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const examples = join(root, "docs", "examples");
const pages = ["docs/examples/README.md", "docs/policy.md"];

/**
 * What the docs say of each conversation: the rules and constraints it breaks (a blocked call's
 * violations, a block or warn rule not satisfied at the end), none for a compliant one.
 */
const verdicts: Record<string, string[]> = {
  "order/compliant.json": [],
  "order/violating.json": ["O1"],
  "prohibition/compliant.json": [],
  "prohibition/violating.json": ["S1"],
  "exemption/compliant.json": [],
  "exemption/exempt.json": [],
  "exemption/violating.json": ["E1"],
  "exemption/unreadable.json": ["E1"],
  "earlier-output/compliant.json": [],
  "earlier-output/violating.json": ["R2"],
  "earlier-output/other-order.json": ["R1", "R2"],
  "text-label/compliant.json": [],
  "text-label/violating.json": ["D1"],
  "text-label/unlabelled.json": ["D1"],
  "two-entities/compliant.json": [],
  "two-entities/violating.json": ["T1"],
  "first-call/compliant.json": [],
  "first-call/violating.json": ["F1"],
  "later-request/compliant.json": [],
  "later-request/violating.json": ["L1"],
  "exclusive-outcomes/compliant.json": [],
  "exclusive-outcomes/declined.json": [],
  "exclusive-outcomes/violating.json": ["X1"],
};

interface Report {
  score: number;
  violated: boolean;
  calls: { verdict: string; violations: string[] }[];
  rules: { rule: string; mode: string; satisfied: boolean }[];
}

function mentorRun(args: string[]): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(process.execPath, [mentor, ...args], { cwd: root, encoding: "utf8" });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

const reports = new Map<string, { report: Report; status: number | null }>();
function verify(policy: string, messages: string): { report: Report; status: number | null } {
  const key = `${policy} ${messages}`;
  let known = reports.get(key);
  if (!known) {
    const result = mentorRun(["verify", "--policy", policy, "--messages", messages]);
    assert.ok(result.status === 0 || result.status === 1, `${key}: ${result.stderr}`);
    known = { report: JSON.parse(result.stdout) as Report, status: result.status };
    reports.set(key, known);
  }
  return known;
}

/** The fenced blocks of a page whose first line starts with `start`: that line and the rest. */
function blocks(page: string, language: string, start: string): { first: string; body: string }[] {
  const text = readFileSync(join(root, page), "utf8");
  const found: { first: string; body: string }[] = [];
  for (const match of text.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))) {
    const content = match[1] as string;
    const newline = content.indexOf("\n");
    const first = content.slice(0, newline);
    if (first.startsWith(start)) found.push({ first, body: content.slice(newline + 1) });
  }
  return found;
}

const folders = readdirSync(examples, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
// first-policy holds the walk-through's files (a tools file, a suite): test/docs/first-policy.test.ts.
const conversations = folders
  .filter((folder) => folder !== "first-policy")
  .flatMap((folder) =>
    readdirSync(join(examples, folder))
      .filter((file) => file.endsWith(".json"))
      .sort()
      .map((file) => `${folder}/${file}`),
  );

describe("docs/examples", () => {
  test("every example conversation has a stated verdict, and every verdict a conversation", () => {
    assert.deepEqual([...conversations].sort(), Object.keys(verdicts).sort());
  });

  for (const folder of folders) {
    test(`${folder}: the policy lints clean and is shown as it is`, () => {
      const policy = `docs/examples/${folder}/policy.yaml`;
      const lint = mentorRun(["lint", policy]);
      assert.equal(lint.status, 0, lint.stderr);
      assert.match(lint.stdout, /: 0 error\(s\), 0 warning\(s\)/);
      const shown = pages.flatMap((page) => blocks(page, "yaml", `# ${policy}`));
      assert.ok(shown.length > 0, `${policy} is shown in no page`);
      for (const block of shown) assert.equal(block.body, readFileSync(join(root, policy), "utf8"));
    });
  }

  for (const conversation of conversations) {
    test(`${conversation}: ${verdicts[conversation]?.join(", ") || "compliant"}`, () => {
      const folder = conversation.split("/")[0] as string;
      const { report, status } = verify(
        `docs/examples/${folder}/policy.yaml`,
        `docs/examples/${conversation}`,
      );
      const broken = new Set([
        ...report.calls.flatMap((call) => call.violations),
        ...report.rules.filter((rule) => rule.mode !== "record" && !rule.satisfied).map((rule) => rule.rule),
      ]);
      const expected = verdicts[conversation] ?? [];
      assert.deepEqual([...broken].sort(), expected, JSON.stringify(report));
      assert.equal(report.violated, expected.length > 0);
      assert.equal(report.score === 1, expected.length === 0);
      assert.equal(status, expected.length > 0 ? 1 : 0);
    });
  }

  test("every verify output shown is the command's output, and every conversation is shown", () => {
    const shown = new Set<string>();
    for (const page of pages) {
      for (const block of blocks(page, "console", "$ mentor verify --policy docs/")) {
        const command = /^\$ mentor verify --policy (\S+) --messages (\S+)$/.exec(block.first);
        assert.ok(command, `${page}: ${block.first}`);
        const [, policy, messages] = command as unknown as [string, string, string];
        const { report } = verify(policy, messages);
        assert.deepEqual(
          JSON.parse(block.body),
          report,
          `${page}: ${block.first}\nnow prints ${JSON.stringify(report)}`,
        );
        shown.add(messages.replace("docs/examples/", ""));
      }
    }
    assert.deepEqual(
      conversations.filter((conversation) => !shown.has(conversation)),
      [],
      "conversations without their output in the docs",
    );
  });
});
