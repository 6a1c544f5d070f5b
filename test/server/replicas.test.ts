import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  answeredBy,
  loadTest,
  nginxBinary,
  type Outcome,
  type Replica,
  startNginx,
  startReplica,
  stopReplica,
  travelRequests,
} from "../../bench/replicas/cluster.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import { missingTool } from "../support/system-tools.js";

// Needs a model (writes a tiny one) and nginx (Debian package `nginx`; `npm run setup` installs it).
// The figures of a larger run are in docs/operations.md ("Replicas", npm run bench:replicas).
const binary = nginxBinary();
const missing = missingTool("nginx", binary !== undefined);
const directory = mkdtempSync(join(tmpdir(), "mentor-replicas-test-"));
after(() => rmSync(directory, { recursive: true, force: true }));

describe("replicas behind nginx", () => {
  it("spreads requests over stateless servers, with the outcomes of one server and no errors beyond 429", {
    skip: missing,
  }, async () => {
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
      "1",
      "--max-queue",
      "4",
      "--policy",
      "travel",
      "--trust-client-grounding",
      "--labeler",
      "rules",
    ];
    const requests = travelRequests(30, "llama");
    const replicas: Replica[] = [];
    try {
      const single = await startReplica(args);
      const reference = await loadTest(single.url, requests, 1);
      await stopReplica(single);
      for (let index = 0; index < 2; index++) replicas.push(await startReplica(args));
      const balancer = await startNginx({
        binary: binary as string,
        directory: join(directory, "nginx"),
        upstreams: replicas.map((replica) => replica.url),
      });
      const outcomes = await loadTest(balancer.url, requests, 4);
      await balancer.stop();

      // The shield decides every outcome here (test: bench/replicas/cluster.ts travelRequests).
      assert.deepEqual(
        [...new Set(reference.map((outcome) => `${outcome.status} ${outcome.result}`))].sort(),
        ["200 check_distance", "200 text", "422 MNT_ERR_NOTHING_ALLOWED"],
      );
      const decided = (outcome: Outcome) => [
        outcome.status,
        outcome.result,
        outcome.blocked,
        outcome.openDuties,
      ];
      outcomes.forEach((outcome, index) => {
        assert.ok([200, 422, 429].includes(outcome.status), `request ${index}: ${JSON.stringify(outcome)}`);
        if (outcome.status !== 429)
          assert.deepEqual(decided(outcome), decided(reference[index] as Outcome), `request ${index}`);
      });
      const shares = await Promise.all(replicas.map((replica) => answeredBy(replica.url)));
      const answered = shares.map((share) => Object.values(share).reduce((sum, value) => sum + value, 0));
      assert.equal(
        answered.reduce((sum, value) => sum + value, 0),
        requests.length,
      );
      for (const [index, count] of answered.entries())
        assert.ok(count > 0, `replica ${index + 1} answered ${count}`);
    } finally {
      for (const replica of replicas) await stopReplica(replica);
    }
  });
});
