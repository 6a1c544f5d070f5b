import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchResults } from "../../bench/report.js";
import { runBenchmark } from "../../bench/run.js";
import { buildServer } from "../../src/server/index.js";
import { ScriptedGenerator } from "./scripted-generator.js";

const route = { origin: "Toronto", destination: "Chicago" };
const economy = { ...route, travel_class: "economy" };

/**
 * A results.json written by the benchmark itself (`runBenchmark`: travel's task t01, Toronto to
 * Chicago, condition prompt, the server grounding) against a real mentor server whose model is a
 * script: it books the flight first (blocked: distance and seats not checked), then checks the
 * distance, the seats, books the flight and answers.
 */
export async function benchRunResults(): Promise<{ directory: string; file: string; results: BenchResults }> {
  const app = await buildServer({
    generator: new ScriptedGenerator([
      { calls: [{ name: "book_flight", arguments: economy }] },
      { calls: [{ name: "check_distance", arguments: route }] },
      { calls: [{ name: "check_seats", arguments: route }] },
      { calls: [{ name: "book_flight", arguments: economy }] },
      "Your flight from Toronto to Chicago is booked.",
    ]),
    modelId: "scripted",
    labeler: "rules",
    logger: false,
  });
  const directory = mkdtempSync(join(tmpdir(), "mentor-bench-run-"));
  try {
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    const results = await runBenchmark({
      domains: ["travel"],
      agent: "model",
      server: url,
      conditions: ["prompt"],
      runs: 1,
      limit: 1,
      out: directory,
      seed: 1,
      temperature: 0,
      maxCalls: 10,
      maxTokens: 64,
      contextSize: 4096,
      grounding: "server",
      progress: false,
      command: "npm run bench -- --domain travel --conditions prompt --runs 1 --limit 1",
    });
    return { directory, file: join(directory, "results.json"), results };
  } finally {
    await app.close();
  }
}
