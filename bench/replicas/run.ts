/**
 * npm run bench:replicas — N stateless `mentor serve` replicas (a tiny random-weight model, the
 * travel policy, the token shield) behind nginx on loopback, and a bounded load test through it:
 * how the requests spread (each replica's /metrics), errors other than 429 (none expected), the
 * same outcomes as one server for the same requests, and latency p50/p99. See docs/operations.md,
 * "Replicas". Skips (exit 0, "SKIP: …") without nginx (`apt-get install -y nginx`).
 *
 * Options: --replicas N (3), --requests N (300), --concurrency N (6), --method least_conn|round_robin,
 * --sequences N per replica (1), --max-queue N per replica (4).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import {
  answeredBy,
  loadTest,
  nginxBinary,
  type Outcome,
  percentile,
  type Replica,
  startNginx,
  startReplica,
  stopReplica,
  travelRequests,
} from "./cluster.js";

const { values: options } = parseArgs({
  options: {
    replicas: { type: "string", default: "3" },
    requests: { type: "string", default: "300" },
    concurrency: { type: "string", default: "6" },
    method: { type: "string", default: "least_conn" },
    sequences: { type: "string", default: "1" },
    "max-queue": { type: "string", default: "4" },
  },
});

const binary = nginxBinary();
if (!binary) {
  console.log("SKIP: nginx is not installed (apt-get install -y nginx)");
  process.exit(0);
}
const count = Number(options.replicas);
const total = Number(options.requests);
const concurrency = Number(options.concurrency);
const method = options.method === "round_robin" ? "round_robin" : "least_conn";
const directory = mkdtempSync(join(tmpdir(), "mentor-replicas-"));
const model = join(directory, "llama.gguf");
await makeTinyModel({ family: "llama3.1", outputPath: model, seed: 3 });
const args = [
  "--model",
  model,
  "--gpu",
  "cpu",
  "--threads",
  "1",
  "--sequences",
  options.sequences as string,
  "--max-queue",
  options["max-queue"] as string,
  "--policy",
  "travel",
  "--trust-client-grounding",
  "--labeler",
  "rules",
];
const requests = travelRequests(total, "llama");
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
const summary = (outcomes: Outcome[], seconds: number) => {
  const ms = outcomes.map((outcome) => outcome.ms);
  const statuses: Record<number, number> = {};
  for (const outcome of outcomes) statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
  return `${outcomes.length} requests in ${seconds.toFixed(1)} s (${(outcomes.length / seconds).toFixed(1)}/s), statuses ${JSON.stringify(statuses)}, p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms`;
};

const replicas: Replica[] = [];
try {
  console.log(
    `# npm run bench:replicas -- --replicas ${count} --requests ${total} --concurrency ${concurrency} --method ${method} --sequences ${options.sequences} --max-queue ${options["max-queue"]}`,
  );
  console.log(
    `# tiny llama3.1 model (random weights), travel policy, token shield; load average at start ${load()}`,
  );

  // One server, the same requests, one at a time per sequence: the reference outcomes.
  const single = await startReplica(args);
  let started = performance.now();
  const reference = await loadTest(single.url, requests, Number(options.sequences));
  const singleSeconds = (performance.now() - started) / 1000;
  await stopReplica(single);
  console.log(`one server, concurrency ${options.sequences}: ${summary(reference, singleSeconds)}`);

  for (let index = 0; index < count; index++) replicas.push(await startReplica(args));
  const balancer = await startNginx({
    binary,
    directory: join(directory, "nginx"),
    upstreams: replicas.map((replica) => replica.url),
    method,
  });
  started = performance.now();
  const outcomes = await loadTest(balancer.url, requests, concurrency);
  const seconds = (performance.now() - started) / 1000;
  const shares = await Promise.all(replicas.map((replica) => answeredBy(replica.url)));
  await balancer.stop();

  const throttled = outcomes.filter((outcome) => outcome.status === 429).length;
  const differing = outcomes.filter((outcome, index) => {
    if (outcome.status === 429) return false;
    const expected = reference[index] as Outcome;
    return (
      outcome.status !== expected.status ||
      outcome.result !== expected.result ||
      outcome.blocked !== expected.blocked ||
      outcome.openDuties !== expected.openDuties
    );
  });
  const unexpected = outcomes.filter((outcome) => ![200, 422, 429].includes(outcome.status));
  console.log(
    `${count} replicas behind nginx (${method}), concurrency ${concurrency}: ${summary(outcomes, seconds)}`,
  );
  console.log(
    `answered per replica (/metrics, status: count): ${shares.map((share, index) => `#${index + 1} ${JSON.stringify(share)}`).join("; ")}`,
  );
  console.log(
    `429 (queues full): ${throttled}; other errors (not 200/422/429): ${unexpected.length}; outcomes differing from one server: ${differing.length}`,
  );
  console.log(`load average at end ${load()}`);
  if (differing.length > 0)
    for (const outcome of differing.slice(0, 5))
      console.log(
        `differs: request ${outcomes.indexOf(outcome)}: ${JSON.stringify(outcome)} vs ${JSON.stringify(reference[outcomes.indexOf(outcome)])}`,
      );
} finally {
  for (const replica of replicas) await stopReplica(replica);
  rmSync(directory, { recursive: true, force: true });
}
