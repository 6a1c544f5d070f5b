import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { lintPolicy } from "../../src/game/index.js";
import { loadPolicy } from "../../src/policy/index.js";

const run = promisify(execFile);
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-cli-init-"));
after(() => rmSync(directory, { recursive: true, force: true }));

async function mentor(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

function file(name: string, content: unknown): string {
  const path = join(directory, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const tools = [
  {
    type: "function",
    function: {
      name: "send_transfer",
      description: "Send a wire transfer.",
      parameters: {
        type: "object",
        properties: {
          beneficiary: { type: "string", description: "Who receives it" },
          amount: { type: "number" },
          currency: { type: "string", enum: ["EUR", "USD"] },
        },
        required: ["beneficiary", "amount"],
      },
    },
  },
  // a bare function object, as tau2's tool_schemas.json writes them
  { name: "send_notice", parameters: { type: "object", properties: { transfer_id: { type: "string" } } } },
];

describe("mentor init", () => {
  it("writes a skeleton with the tools and the manual's sentences that loads and lints without errors", async () => {
    const out = join(directory, "wire");
    const manual = file(
      "manual.md",
      "# Wire desk\n\nAuthenticate the customer before any lookup. Screen every beneficiary.\n\n- Send a notice for every transfer.\n",
    );
    const result = await mentor(
      "init",
      "--tools",
      file("tools.json", { tools }),
      "--manual",
      manual,
      "--out",
      out,
    );
    assert.equal(result.code, 0, result.stderr);
    const policy = loadPolicy(join(out, "policy.yaml"));
    assert.equal(policy.name, "wire");
    assert.deepEqual(Object.keys(policy.manual), ["S1", "S2", "S3"]);
    assert.equal(policy.manual.S3, "Send a notice for every transfer.");
    const send = policy.tools.get("send_transfer");
    assert.deepEqual(
      send?.parameters.map((parameter) => parameter.name),
      ["beneficiary", "amount", "currency"],
    );
    assert.deepEqual(send?.required, ["beneficiary", "amount"]);
    assert.deepEqual(send?.parameters[2]?.jsonSchema.enum, ["EUR", "USD"]);
    assert.equal(send?.description, "Send a wire transfer.");
    assert.ok(policy.tools.has("send_notice"));
    assert.equal(policy.rules.length, 0);
    assert.deepEqual(
      lintPolicy(policy).filter((finding) => finding.severity === "error"),
      [],
    );
    const again = await mentor("init", "--tools", file("tools.json", { tools }), "--out", out);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /policy\.yaml exists/);
    assert.match(readFileSync(join(out, "policy.yaml"), "utf8"), /^# Written by mentor init/);
  });

  it("names the file and the field of bad input", async () => {
    const out = join(directory, "bad");
    const cases: [unknown, RegExp][] = [
      [{ nope: 1 }, /bad-0\.json: expected an array of OpenAI tools/],
      [[{ name: "send-money" }], /bad-1\.json: tools\[0\]\.function\.name "send-money" must be a name/],
      [
        [
          {
            name: "pay",
            parameters: { type: "object", properties: { amount: { type: "number" } }, required: ["sum"] },
          },
        ],
        /bad-2\.json: tools\[0\]\.function\.parameters\.required must list parameters \(amount\), found \["sum"\]/,
      ],
      [
        [{ name: "pay", parameters: { type: "object", properties: { mode: { enum: [null, "x"] } } } }],
        /bad-3\.json: tools\[0\]\.function\.parameters\.properties\.mode\.enum must be a list/,
      ],
      [[], /bad-4\.json: there are no tools/],
    ];
    for (const [index, [content, expected]] of cases.entries()) {
      const result = await mentor("init", "--tools", file(`bad-${index}.json`, content), "--out", out);
      assert.equal(result.code, 2, JSON.stringify(content));
      assert.match(result.stderr, expected);
    }
    assert.match(
      (await mentor("init", "--tools", file("bad-5.json", "{"), "--out", out)).stderr,
      /bad-5\.json: .*JSON/,
    );
  });
});
