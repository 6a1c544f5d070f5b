import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { makeTinyModel } from "../../src/models/tiny-model.js";

// Needs a model: writes a tiny one.
const run = promisify(execFile);
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const policy = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-cli-chat-"));
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

const tool = (name: string) => ({
  type: "function",
  function: {
    name,
    parameters: {
      type: "object",
      properties: { origin: { type: "string" }, destination: { type: "string" } },
    },
  },
});

describe("mentor chat (command line)", () => {
  const model = join(directory, "qwen3.gguf");
  const messages = join(directory, "messages.json");
  const tools = join(directory, "tools.json");
  before(async () => {
    await makeTinyModel({ family: "qwen3", outputPath: model, seed: 7 });
    writeFileSync(
      messages,
      JSON.stringify([
        {
          role: "user",
          content: "Book me a trip from Toronto to Chicago.",
          mentor: {
            task: [
              {
                name: "request_travel",
                arguments: { origin: "Toronto", destination: "Chicago", urgent: false },
              },
            ],
          },
        },
      ]),
    );
    writeFileSync(
      tools,
      JSON.stringify(["check_distance", "check_seats", "book_train", "book_flight"].map(tool)),
    );
  });

  it("prints an OpenAI assistant message whose call the policy allows", async () => {
    for (const seed of ["3"]) {
      const result = await mentor(
        ...["chat", "--model", model, "--messages", messages, "--tools", tools, "--shield", "token"],
        ...["--policy", policy, "--tool-choice", "required", "--seed", seed, "--max-tokens", "100"],
      );
      assert.equal(result.code, 0, result.stderr);
      const message = JSON.parse(result.stdout) as {
        role: string;
        tool_calls: { function: { name: string; arguments: string } }[];
        mentor: { finish_reason: string; gpu: string };
      };
      assert.equal(message.role, "assistant");
      assert.equal(message.mentor.finish_reason, "tool_calls");
      assert.ok(["cpu", "cuda", "vulkan", "metal"].includes(message.mentor.gpu), message.mentor.gpu);
      const call = message.tool_calls[0]?.function;
      assert.ok(call && ["check_distance", "check_seats"].includes(call.name), JSON.stringify(call));
      assert.equal(typeof JSON.parse(call.arguments), "object");
    }
  });

  it("grounds a plain-language request with the policy's labeler and prints the notes", async () => {
    const plain = join(directory, "plain.json");
    writeFileSync(
      plain,
      JSON.stringify([{ role: "user", content: "I need to get to Chicago from Toronto, it's urgent." }]),
    );
    const result = await mentor(
      ...["chat", "--model", model, "--messages", plain, "--tools", tools, "--shield", "token"],
      ...["--policy", policy, "--tool-choice", "required", "--seed", "3", "--max-tokens", "100"],
    );
    assert.equal(result.code, 0, result.stderr);
    const message = JSON.parse(result.stdout) as {
      tool_calls: { function: { name: string } }[];
      mentor: { grounding: { message: number; kind: string; source: string; value: unknown }[] };
    };
    assert.deepEqual(
      message.mentor.grounding.map(({ message, kind, source, value }) => ({ message, kind, source, value })),
      [
        {
          message: 0,
          kind: "task",
          source: "rule",
          value: [
            {
              name: "request_travel",
              arguments: {
                origin: "Toronto",
                destination: "Chicago",
                urgent: true,
                mode: "any",
                travel_class: "any",
              },
            },
          ],
        },
      ],
    );
    // The shield ran on the grounded messages: bookings before the checks are unsafe (P1, P5).
    const name = message.tool_calls[0]?.function.name;
    assert.ok(name === "check_distance" || name === "check_seats", name);
  });

  it("refuses an unknown --gpu, naming the flag", async () => {
    const result = await mentor("chat", "--model", model, "--messages", messages, "--gpu", "tpu");
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      /MNT_ERR_BAD_INPUT: --gpu must be one of auto, cpu, cuda, vulkan, metal, not "tpu"/,
    );
  });

  it("exits with code 1 and a reason when nothing is allowed", async () => {
    const sets = join(directory, "sets.json");
    writeFileSync(sets, JSON.stringify({ allowedTools: [] }));
    const result = await mentor(
      ...["chat", "--model", model, "--messages", messages, "--tools", tools],
      ...["--shield", "token", "--shield-sets", sets, "--tool-choice", "required"],
    );
    assert.equal(result.code, 1, result.stderr);
    const message = JSON.parse(result.stdout) as { mentor: { finish_reason: string; refusal: string } };
    assert.equal(message.mentor.finish_reason, "refused");
    assert.ok(message.mentor.refusal.length > 0);
  });
});
