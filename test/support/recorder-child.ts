import { buildServer } from "../../src/server/index.js";
import { ScriptedGenerator } from "./scripted-generator.js";
import { travelMessages, travelTools } from "./tiny-travel.js";

// A server on a scripted generator whose flight recorder writes to the directory in argv[2]; it
// answers argv[3] requests (through inject) and prints their statuses and /health as one JSON
// line. test/server/recorder.test.ts runs it under a file size limit (`ulimit -f`), a real write
// failure (a short write, then EFBIG) without root.
const [directory, count] = process.argv.slice(2);
const app = await buildServer({
  generator: new ScriptedGenerator([
    { calls: [{ name: "check_distance", arguments: { origin: "Toronto", destination: "Chicago" } }] },
  ]),
  modelId: "scripted",
  shield: "prompt",
  logger: false,
  trustClientGrounding: true,
  recorderDirectory: directory as string,
});
const statuses: number[] = [];
for (let index = 0; index < Number(count); index++) {
  const answer = await app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    payload: { model: "scripted", messages: travelMessages, tools: travelTools },
  });
  statuses.push(answer.statusCode);
}
const health = await app.inject("/health");
console.log(JSON.stringify({ statuses, health: { status: health.statusCode, body: health.json() } }));
await app.close();
