import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

// Bad input and bad starts as a careless operator or an attacker would give them: each ends with
// exit code 2 and one line `mentor: CODE: message` on stderr, never a stack trace.
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const travel = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-cli-errors-"));
after(() => rmSync(directory, { recursive: true, force: true }));

async function mentor(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [main, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

/** Runs mentor and checks that it failed with exit 2 and one line naming `code` and matching `message`. */
async function failsWith(args: readonly string[], code: string, message: RegExp): Promise<void> {
  const result = await mentor(args);
  const what = `mentor ${args.join(" ").slice(0, 120)}`;
  assert.equal(result.code, 2, `${what}\n${result.stderr}`);
  assert.equal(result.stdout, "", what);
  assert.doesNotMatch(result.stderr, /^\s+at /m, what);
  const lines = result.stderr.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 1, `${what}\n${result.stderr}`);
  assert.ok(lines[0]?.startsWith(`mentor: ${code}: `), `${what}\n${result.stderr}`);
  assert.match(lines[0] as string, message, what);
}

function file(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

describe("check and verify read messages as the server does", () => {
  const shapes: [string, string, RegExp][] = [
    ["[{}]", "empty.json", /messages\[0\]\.role must be one of system, developer, user, assistant, tool/],
    ['{"role": "hacker"}', "object.json", /messages must be a non-empty array/],
    ['[{"role": "hacker", "content": "hi"}]', "hacker.json", /messages\[0\]\.role must be one of/],
    [
      '[{"role": "user", "content": 5}]',
      "number.json",
      /messages\[0\]\.content must be a string or an array of text parts/,
    ],
    ["[]", "none.json", /messages must be a non-empty array/],
  ];
  for (const [text, name, message] of shapes)
    test(`${text} is an error naming the message and field, not a score`, async () => {
      const messages = file(name, text);
      // check reads its messages as verify does (one function); one shape is enough to show it.
      for (const command of name === "empty.json" ? ["verify", "check"] : ["verify"])
        await failsWith([command, "--policy", travel, "--messages", messages], "MNT_ERR_MESSAGES", message);
    });

  test("JSON nested 5,000 deep is an error naming where, not a RangeError", async () => {
    const deep = file(
      "deep.json",
      `[{"role": "user", "content": "hi", "mentor": ${"[".repeat(5_000)}${"]".repeat(5_000)}}]`,
    );
    for (const command of ["verify", "check"])
      await failsWith(
        [command, "--policy", travel, "--messages", deep],
        "MNT_ERR_BAD_INPUT",
        /deep\.json: \[0\]\.mentor\[0\]\[0\].*… nests deeper than 64 levels/,
      );
    const plain = file(
      "plain.json",
      '[{"role": "user", "content": "Book a train from Toronto to Chicago."}]',
    );
    const call = `{"name": "book_train", "arguments": {"origin": ${"[".repeat(5_000)}${"]".repeat(5_000)}}}`;
    await failsWith(
      ["check", "--policy", travel, "--messages", plain, "--call", call],
      "MNT_ERR_BAD_INPUT",
      /--call: arguments\.origin\[0\].*… nests deeper than 64 levels/,
    );
  });
});

describe("formulas and policies that would crash the loader", () => {
  test("ltl eval of 20,000 nested G's", async () => {
    await failsWith(
      ["ltl", "eval", `${"G ".repeat(20_000)}a`],
      "MNT_ERR_FORMULA_TOO_LARGE",
      /^mentor: MNT_ERR_FORMULA_TOO_LARGE: line 1, column 513: the formula nests deeper than 256 levels/,
    );
  });

  const rule = (ltl: string) =>
    [
      "policy: p",
      "manual: {R1: A rule.}",
      "tools: {ta: {}, tb: {}}",
      "propositions: {a: {tool: ta}, b: {tool: tb}}",
      "rules:",
      `  - {id: R1, ltl: "${ltl}"}`,
      "",
    ].join("\n");

  test("an empty policy, an alias bomb and a deep formula are one located line each, from lint and serve", async () => {
    const laughs = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
    for (const [index, name] of ["b", "c", "d", "e", "f", "g", "h", "i"].entries())
      laughs.push(`${name}: &${name} [${Array(9).fill(`*${"abcdefghi"[index]}`).join(", ")}]`);
    const cases: [string, RegExp][] = [
      [file("empty.yaml", ""), /empty\.yaml:1:1: the file is empty/],
      [
        file("laughs.yaml", `${laughs.join("\n")}\n`),
        /laughs\.yaml:2:8: the aliases expand to more than 100 copies/,
      ],
      [
        file("deep.yaml", rule(`${"G ".repeat(20_000)}a`)),
        /deep\.yaml:6:532 \(rules\[0\]\.ltl\): rule R1: the formula nests deeper than 256 levels/,
      ],
    ];
    for (const [policy, message] of cases)
      await failsWith(["lint", policy], "MNT_ERR_POLICY_INVALID", message);
    const [empty, message] = cases[0] as [string, RegExp];
    await failsWith(
      ["serve", "--port", "0", "--model", join(directory, "none.gguf"), "--policy", empty],
      "MNT_ERR_POLICY_INVALID",
      message,
    );
  });

  test("an automaton past its state limit names the rule's file, line and column", async () => {
    // G(a -> X…X b) remembers the last 18 positions: 2^18 states, past the limit of 100,000.
    const ltl = `G(a -> ${"X(".repeat(18)}b${")".repeat(18)})`;
    await failsWith(
      ["lint", file("states.yaml", rule(ltl))],
      "MNT_ERR_AUTOMATON_LIMIT",
      /states\.yaml:6:19 \(rules\[0\]\.ltl\): the automaton of rule R1 exceeds 100000 states/,
    );
  });
});

describe("mentor serve refuses a bad start before it loads a model", () => {
  const model = () => join(directory, "none.gguf");

  test("a busy port (serve, and the dashboard alone)", async () => {
    const busy = createServer();
    busy.listen(0, "127.0.0.1");
    await once(busy, "listening");
    const { port } = busy.address() as { port: number };
    try {
      await failsWith(
        ["serve", "--host", "127.0.0.1", "--port", String(port), "--model", model()],
        "MNT_ERR_LISTEN",
        new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .*\\(EADDRINUSE\\)`),
      );
      await failsWith(["dashboard", "--port", String(port)], "MNT_ERR_LISTEN", /\(EADDRINUSE\)/);
    } finally {
      busy.close();
    }
  });

  test("a host that is no address", async () => {
    await failsWith(
      ["serve", "--host", "999.1.1.1", "--port", "0", "--model", model()],
      "MNT_ERR_LISTEN",
      /cannot listen on 999\.1\.1\.1:0: .*\((ENOTFOUND|EAI_AGAIN|EADDRNOTAVAIL)\)/,
    );
  });

  test("--recorder naming a regular file", async () => {
    const recorder = file("recorder-file", "not a directory\n");
    await failsWith(
      ["serve", "--port", "0", "--model", model(), "--recorder", recorder],
      "MNT_ERR_RECORDER_PATH",
      /the flight recorder cannot write in .*recorder-file: EEXIST/,
    );
  });
});
