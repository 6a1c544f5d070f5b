import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

// No model: the upstream is a scripted OpenAI-compatible endpoint.
const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const recorder = fileURLToPath(new URL("../support/import-recorder.js", import.meta.url));
const llmIndex = fileURLToPath(new URL("../../src/llm/index.js", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "mentor-serve-proxy-"));
after(() => rmSync(directory, { recursive: true, force: true }));

/** The ES modules a process loaded (file URLs), recorded by test/support/import-recorder. */
async function loadedModules(args: string[], run: (child: ReturnType<typeof spawn>) => Promise<void>) {
  const log = join(directory, `imports-${Math.random().toString(36).slice(2)}.txt`);
  const child = spawn(process.execPath, ["--import", recorder, ...args], {
    env: { ...process.env, MENTOR_IMPORT_LOG: log },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  await run(child);
  const [code] = await exited;
  assert.equal(code, 0);
  return readFileSync(log, "utf8").trim().split("\n");
}

const nativeLibrary = (url: string): boolean => url.includes("/node_modules/node-llama-cpp/");

describe("proxy mode (mentor serve --upstream)", () => {
  let requests = 0;
  const upstream = createServer((request, response) => {
    requests++;
    response.setHeader("content-type", "application/json");
    if (request.url?.endsWith("/models")) {
      response.end(JSON.stringify({ object: "list", data: [{ id: "scripted", object: "model" }] }));
      return;
    }
    response.end(
      JSON.stringify({
        id: "up",
        object: "chat.completion",
        created: 0,
        model: "scripted",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Sure." } }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  let upstreamUrl = "";
  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  });
  after(() => upstream.close());

  it("serves and shields a turn without loading node-llama-cpp", async () => {
    const loaded = await loadedModules(
      [
        main,
        "serve",
        "--port",
        "0",
        "--upstream",
        upstreamUrl,
        "--policy",
        "travel",
        "--policy",
        "tau2-mock",
      ],
      async (child) => {
        let url: string | undefined;
        for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === "mentor ready") {
            url = entry.url;
            break;
          }
        }
        assert.ok(url, "the server said it is ready");
        child.stdout?.resume();
        const response = await fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            model: "scripted",
            messages: [{ role: "user", content: "Book me a trip from Toronto to Chicago." }],
          }),
        });
        assert.equal(response.status, 200, await response.clone().text());
        const body = (await response.json()) as { choices: { message: { content: string } }[] };
        assert.equal(body.choices[0]?.message.content, "Sure.");
        child.kill("SIGTERM");
      },
    );
    assert.ok(requests >= 2, "the model list and at least one completion went to the upstream");
    // The recorder saw the server and the turn: an empty log would prove nothing.
    for (const part of ["/src/server/server.js", "/src/agent/turn.js", "/node_modules/fastify/"])
      assert.ok(
        loaded.some((url) => url.includes(part)),
        `${part} was loaded`,
      );
    assert.deepEqual(loaded.filter(nativeLibrary), [], "proxy mode loads no node-llama-cpp module");
  });

  it("the recorder sees node-llama-cpp where it is loaded (src/llm/)", async () => {
    const loaded = await loadedModules(
      ["--input-type=module", "-e", `await import(${JSON.stringify(llmIndex)});`],
      async () => {},
    );
    assert.ok(loaded.some(nativeLibrary), "importing src/llm/ loads node-llama-cpp");
  });
});
