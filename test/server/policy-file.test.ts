import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../src/errors/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { policyFile } from "../../src/server/index.js";

// No model. The policies shipped in policies/ and how the server names them.
const shipped = fileURLToPath(new URL("../../../policies/", import.meta.url));
const ids = readdirSync(shipped, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe("shipped policies", () => {
  it("are travel, the three tau2 domains and the SOPBench domains", () => {
    assert.deepEqual(ids, [
      "sopbench-bank",
      "sopbench-dmv",
      "sopbench-healthcare",
      "sopbench-hotel",
      "sopbench-library",
      "sopbench-online_market",
      "sopbench-university",
      "tau2-airline",
      "tau2-mock",
      "tau2-retail",
      "travel",
    ]);
  });

  for (const id of ids)
    it(`${id}: the id names policies/${id}/policy.yaml, which loads`, () => {
      const file = policyFile(id);
      assert.equal(file, `${shipped}${id}/policy.yaml`);
      assert.equal(loadPolicy(file).name, id.replace("-", "_"));
    });

  it("a path is taken as given; an unknown id lists the shipped ones", () => {
    assert.equal(policyFile("./mine.yaml"), "./mine.yaml");
    assert.throws(
      () => policyFile("nope"),
      (error: unknown) =>
        error instanceof MentorError &&
        error.code === "MNT_ERR_POLICY_UNKNOWN" &&
        ids.every((id) => error.message.includes(id)),
    );
  });
});
