import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { maxJsonDepth } from "../../src/openai/index.js";
import { buildServer, type ServerOptions } from "../../src/server/index.js";
import { ScriptedGenerator } from "../support/scripted-generator.js";
import { travelMessages, travelTools } from "../support/tiny-travel.js";

// Hostile shapes of a request (deep JSON, the wrong content type, bad URLs, fields of the wrong
// type): each is a 4xx in mentor's error shape naming the field, never a 500 or fastify's own shape.
const apps: FastifyInstance[] = [];
const directory = mkdtempSync(join(tmpdir(), "mentor-input-limits-"));
after(async () => {
  for (const app of apps) await app.close();
  rmSync(directory, { recursive: true, force: true });
});

async function build(options: ServerOptions = {}): Promise<FastifyInstance> {
  const app = await buildServer({
    generator: new ScriptedGenerator([{ calls: [{ name: "check_distance", arguments: route }] }]),
    modelId: "scripted",
    shield: "prompt",
    logger: false,
    ...options,
  });
  apps.push(app);
  return app;
}

interface ErrorAnswer {
  error: { message: string; type: string; param: string | null; code: string };
}

const route = { origin: "Toronto", destination: "Chicago" };
const valid = { model: "scripted", messages: travelMessages, tools: travelTools };
/** The valid body's text with `field` set to a JSON text (deep values cannot be built and stringified). */
const withField = (field: string, json: string): string =>
  `${JSON.stringify(valid).slice(0, -1)},"${field}":${json}}`;
const arrays = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const objects = (depth: number): string => `${'{"a":'.repeat(depth)}{}${"}".repeat(depth)}`;

async function post(app: FastifyInstance, payload: string, contentType = "application/json") {
  const response = await app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    headers: { "content-type": contentType },
    payload,
  });
  return { status: response.statusCode, body: response.json() as ErrorAnswer & { id?: string } };
}

describe("the server's input limits", () => {
  it("refuses JSON nested deeper than the limit with a 400 naming where, in the body or in a call's arguments", async () => {
    const app = await build();
    const deepMentor = JSON.stringify(valid).replace('"mentor":{', `"mentor":{"deep":${objects(2_000)},`);
    const deepArguments = JSON.stringify({
      ...valid,
      messages: [
        ...travelMessages,
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "check_distance", arguments: "ARGUMENTS" } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "800 km" },
      ],
    }).replace('"ARGUMENTS"', JSON.stringify(`{"origin":${arrays(5_000)}}`));
    const cases: [string, string, string][] = [
      [
        "extra nested 5,000 deep",
        withField("extra", arrays(5_000)),
        "extra[0][0][0][0][0][0][0][0][0][0][0]…",
      ],
      ["mentor nested 2,000 deep", deepMentor, "messages[0].mentor.deep.a.a.a.a.a.a.a.a…"],
      [
        "one level over the limit",
        withField("extra", arrays(maxJsonDepth)),
        "extra[0][0][0][0][0][0][0][0][0][0][0]…",
      ],
      ["arguments nested 5,000 deep", deepArguments, "messages[1].tool_calls[0].function.arguments"],
    ];
    for (const [name, payload, param] of cases) {
      const { status, body } = await post(app, payload);
      assert.equal(status, 400, name);
      assert.deepEqual([body.error.code, body.error.param], ["MNT_ERR_BAD_INPUT", param], name);
      assert.match(body.error.message, /nests deeper than 64 levels/, name);
    }
    // The body at the limit is read: the outermost object and 63 arrays.
    const { status } = await post(app, withField("extra", arrays(maxJsonDepth - 1)));
    assert.equal(status, 200);
  });

  it("a JSON body sent as text/plain is 415 MNT_ERR_MEDIA_TYPE", async () => {
    const app = await build();
    const { status, body } = await post(app, JSON.stringify(valid), "text/plain");
    assert.deepEqual([status, body.error.code, body.error.param], [415, "MNT_ERR_MEDIA_TYPE", "body"]);
  });

  it("a field of the wrong type is named with what was expected, not in zod's words", async () => {
    const app = await build();
    const cases: [unknown, string, string][] = [
      [{ ...valid, stop: ["a", 5] }, "stop[1]", "stop[1]: must be a string"],
      [
        { ...valid, tool_choice: { type: "function", function: { name: 5 } } },
        "tool_choice.function.name",
        "tool_choice.function.name: must be a string",
      ],
      [
        { ...valid, tools: [{ type: "function", function: { name: "x", parameters: { properties: [] } } }] },
        "tools[0].function.parameters.properties",
        "tools[0].function.parameters.properties: must be an object",
      ],
      [
        { ...valid, tool_choice: { type: "tool", function: { name: "check_distance" } } },
        "tool_choice.type",
        'tool_choice.type: must be "function"',
      ],
    ];
    for (const [payload, param, message] of cases) {
      const { status, body } = await post(app, JSON.stringify(payload));
      assert.equal(status, 400, param);
      assert.deepEqual([body.error.param, body.error.message], [param, message]);
    }
  });

  it("a URL that is not valid percent-encoding or has an over-long segment answers in mentor's shape", async () => {
    const app = await build({ dashboard: true });
    const cases: [string, number, string][] = [
      ["/v1/models/%ff%fe", 400, "MNT_ERR_BAD_INPUT"],
      ["/dashboard/run/%ff", 400, "MNT_ERR_BAD_INPUT"],
      [`/v1/models/${"a".repeat(300)}`, 414, "MNT_ERR_URL_TOO_LONG"],
    ];
    for (const [url, status, code] of cases) {
      const response = await app.inject(url);
      assert.equal(response.statusCode, status, url);
      const { error } = response.json() as ErrorAnswer;
      assert.deepEqual([error.code, error.type, error.param], [code, "invalid_request_error", null], url);
      assert.ok(error.message.length < 200, error.message);
    }
  });

  it("a 60 KB URL gets 431 MNT_ERR_HEADERS_TOO_LARGE in mentor's shape from the socket", async () => {
    const app = await build();
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = httpRequest(`${url}/v1/models/${"a".repeat(60_000)}`, (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      });
      request.on("error", reject);
      request.end();
    });
    assert.equal(status, 431);
    const { error } = JSON.parse(text) as ErrorAnswer;
    assert.deepEqual([error.code, error.type], ["MNT_ERR_HEADERS_TOO_LARGE", "invalid_request_error"]);
  });

  it("the dashboard lists a recorded run whose messages nest too deep as a problem instead of failing on its page", async () => {
    const recorder = join(directory, "deep-record");
    const app = await build({ dashboard: true, recorderDirectory: recorder });
    const message = `{"role":"user","content":"Book a train.","mentor":${objects(2_000)}}`;
    writeFileSync(
      join(recorder, "flight-older.jsonl"),
      `{"time":"2025-01-01T00:00:00.000Z","id":"chatcmpl-deep","policy":"travel","status":200,"messages":[${message}]}\n`,
    );
    assert.equal((await app.inject("/dashboard/run/chatcmpl-deep")).statusCode, 404);
    const api = await app.inject("/dashboard/api/run/chatcmpl-deep");
    assert.equal(api.statusCode, 404);
    assert.equal((api.json() as ErrorAnswer).error.code, "MNT_ERR_NOT_FOUND");
    const runs = (await app.inject("/dashboard/api/runs")).json() as { problems: string[] };
    assert.equal(runs.problems.length, 1);
    assert.match(
      runs.problems[0] as string,
      /flight-older\.jsonl.*messages\[0\]\.mentor\.a\.a.*nests deeper than 64 levels/,
    );
  });
});
