import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import { holdsIn, parseExpression, type Value } from "../../src/expression/index.js";
import {
  type RepairRequest,
  type SolverBackend,
  SolverClient,
  type SolverTool,
} from "../../src/smt/index.js";
import { findZ3Binary } from "../../src/smt/native.js";

// Every test runs on the WASM build, and on the native binary where it is installed (CI installs it;
// test/smt/backend.test.ts says so when it is not).
const backends: SolverBackend[] = ["wasm", ...(findZ3Binary() === undefined ? [] : ["native" as const])];
const solvers = new Map(backends.map((backend) => [backend, new SolverClient({ timeoutMs: 5000, backend })]));
after(() => Promise.all([...solvers.values()].map((solver) => solver.close())));

const bookFlight: SolverTool = {
  name: "book_flight",
  parameters: [
    { name: "origin", type: "string" },
    { name: "destination", type: "string" },
    { name: "travel_class", type: { enum: ["economy", "business", "first"] } },
    { name: "urgent", type: "boolean" },
  ],
  required: ["origin", "destination", "travel_class"],
};
const travel = parseExpression("a.travel_class == 'economy' || task.request_travel.urgent == true");

for (const [backend, solver] of solvers) {
  for (const candidatesFirst of [true, false]) {
    describe(`repair on ${backend} (candidates first: ${candidatesFirst})`, () => {
      const client = {
        repair: (request: RepairRequest) => solver.repair({ ...request, candidatesFirst }),
        satisfiable: solver.satisfiable.bind(solver),
      };
      test("travel class: business repairs to economy when the task is not urgent", async () => {
        const proposed = { origin: "Paris", destination: "Lyon", travel_class: "business" };
        const result = await client.repair({
          tool: bookFlight,
          arguments: proposed,
          constraints: [travel],
          scope: { task: { request_travel: { urgent: false } } },
          repairable: ["travel_class"],
        });
        assert.deepEqual(result, {
          status: "repaired",
          arguments: { ...proposed, travel_class: "economy" },
          changed: ["travel_class"],
        });
      });

      test("a compliant call is returned unchanged", async () => {
        const proposed = { origin: "Paris", destination: "Lyon", travel_class: "business" };
        const result = await client.repair({
          tool: bookFlight,
          arguments: proposed,
          constraints: [travel],
          scope: { task: { request_travel: { urgent: true } } },
          repairable: ["travel_class"],
        });
        assert.deepEqual(result, { status: "repaired", arguments: proposed, changed: [] });
      });

      test("non-repairable arguments never change: no repair exists", async () => {
        const result = await client.repair({
          tool: bookFlight,
          arguments: { origin: "Paris", destination: "Lyon", travel_class: "business" },
          constraints: [travel],
          scope: { task: { request_travel: { urgent: false } } },
          repairable: [],
        });
        assert.deepEqual(result, { status: "unsat" });
      });

      test("only the fewest arguments change, and non-repairable ones stay", async () => {
        const constraint = parseExpression("a.origin != a.destination && a.destination in ['Lyon', 'Nice']");
        const result = await client.repair({
          tool: bookFlight,
          arguments: { origin: "Lyon", destination: "Lyon", travel_class: "economy" },
          constraints: [constraint],
          repairable: ["origin", "destination"],
          candidates: { origin: ["Paris"] },
        });
        assert.equal(result.status, "repaired");
        assert.ok(result.status === "repaired");
        assert.equal(result.changed.length, 1);
        assert.ok(holdsIn(constraint, { arguments: result.arguments }));
      });

      test("patient intake: the insurance status follows the last validation", async () => {
        const tool: SolverTool = {
          name: "register_patient",
          parameters: [
            { name: "patient_id", type: "string" },
            { name: "insurance_status", type: { enum: ["verified", "pending", "denied"] } },
          ],
          required: ["patient_id", "insurance_status"],
        };
        const constraint = parseExpression("a.insurance_status == last('validateInsurance').status");
        const result = await client.repair({
          tool,
          arguments: { patient_id: "P-17", insurance_status: "verified" },
          constraints: [constraint],
          scope: {
            history: {
              last: (name) => (name === "validateInsurance" ? { status: "pending", payer: "Acme" } : null),
              outcomes: () => [],
              held: () => false,
              count: () => 0,
              values: () => [],
            },
          },
          repairable: ["insurance_status"],
        });
        assert.deepEqual(result, {
          status: "repaired",
          arguments: { patient_id: "P-17", insurance_status: "pending" },
          changed: ["insurance_status"],
        });
      });

      test("numeric bound: an amount above 120.5 is repaired to a value within it, preferring candidates", async () => {
        const tool: SolverTool = {
          name: "refund",
          parameters: [
            { name: "order_id", type: "string" },
            { name: "amount", type: "number" },
            { name: "items", type: "integer" },
          ],
          required: ["order_id", "amount"],
        };
        const constraint = parseExpression("a.amount <= 120.5 && a.amount > 0 && a.items * 2 + 1 >= 3");
        const bounded = await client.repair({
          tool,
          arguments: { order_id: "o1", amount: 300, items: 1 },
          constraints: [constraint],
          repairable: ["amount", "items"],
          candidates: { amount: [500, 120.5] },
        });
        assert.deepEqual(bounded, {
          status: "repaired",
          arguments: { order_id: "o1", amount: 120.5, items: 1 },
          changed: ["amount"],
        });
        const free = await client.repair({
          tool,
          arguments: { order_id: "o1", amount: 300.25, items: 0 },
          constraints: [constraint],
          repairable: ["amount", "items"],
        });
        assert.equal(free.status, "repaired");
        assert.ok(free.status === "repaired" && holdsIn(constraint, { arguments: free.arguments }));
        assert.deepEqual(free.status === "repaired" && free.changed, ["amount", "items"]);
      });

      test("string containment, prefix and suffix", async () => {
        const tool: SolverTool = {
          name: "send_email",
          parameters: [
            { name: "to", type: "string" },
            { name: "subject", type: "string" },
          ],
          required: ["to", "subject"],
        };
        const constraint = parseExpression(
          "a.to.endsWith('@corp.example') && a.subject.startsWith('[ticket]') && !a.subject.contains('password') && len(a.subject) <= 40",
        );
        const result = await client.repair({
          tool,
          arguments: { to: "bob@corp.example", subject: "your password é" },
          constraints: [constraint],
          repairable: ["subject"],
        });
        assert.equal(result.status, "repaired");
        assert.ok(result.status === "repaired");
        assert.equal(result.arguments.to, "bob@corp.example");
        assert.deepEqual(result.changed, ["subject"]);
        assert.ok(holdsIn(constraint, { arguments: result.arguments }));
        const unsat = await client.repair({
          tool,
          arguments: { to: "bob@corp.example", subject: "x" },
          constraints: [parseExpression("a.subject.contains('abc') && len(a.subject) < 3")],
          repairable: ["subject"],
        });
        assert.deepEqual(unsat, { status: "unsat" });
      });

      test("a missing argument is null: it can be filled in, and a present one never made absent if required", async () => {
        const tool: SolverTool = {
          name: "t",
          parameters: [
            { name: "note", type: "string" },
            { name: "code", type: "integer" },
          ],
          required: ["code"],
        };
        const result = await client.repair({
          tool,
          arguments: { code: 3 },
          constraints: [parseExpression("a.note != null && a.code == null || a.note == 'x'")],
          repairable: ["note", "code"],
          candidates: { note: ["x"] },
        });
        assert.deepEqual(result, {
          status: "repaired",
          arguments: { code: 3, note: "x" },
          changed: ["note"],
        });
      });

      test("what cannot be encoded faithfully is reported as unsupported", async () => {
        const tool: SolverTool = {
          name: "t",
          parameters: [
            { name: "name", type: "string" },
            { name: "tags", type: "array" },
            { name: "n", type: "integer" },
          ],
        };
        const cases: [string, Record<string, Value>][] = [
          ["a.name.lower() == 'x'", { name: "Y" }],
          ["len(a.tags) > 1", { tags: [] }],
          ["a.n % 2 == 0", { n: 3 }],
          ["a.n * a.n == 4", { n: 3 }],
        ];
        for (const [text, args] of cases) {
          const result = await client.repair({
            tool,
            arguments: args,
            constraints: [parseExpression(text)],
            repairable: ["name", "tags", "n"],
          });
          assert.equal(result.status, "unsupported", text);
        }
      });

      test("satisfiability of a set of constraints", async () => {
        const tool: SolverTool = {
          name: "refund",
          parameters: [
            { name: "amount", type: "number" },
            { name: "reason", type: { enum: ["damaged", "late"] } },
          ],
        };
        const never = await client.satisfiable({
          tool,
          constraints: [parseExpression("a.amount > 100"), parseExpression("a.amount + 5 < 90")],
        });
        assert.deepEqual(never, { status: "unsat" });
        const possible = await client.satisfiable({
          tool,
          constraints: [
            parseExpression("a.amount > 100 || a.reason == 'late'"),
            parseExpression("a.amount < 50"),
          ],
        });
        assert.deepEqual(possible, {
          status: "sat",
          example: possible.status === "sat" ? possible.example : {},
        });
        assert.ok(possible.status === "sat" && possible.example.reason === "late");
      });
    });
  }
}

for (const backend of backends) {
  describe(`solver process (${backend})`, () => {
    test("a request that overruns its time limit rejects with MNT_ERR_SMT_TIMEOUT; the next works", async () => {
      const local = new SolverClient({ timeoutMs: 200, backend });
      try {
        await local.stats();
        const pid = local.pid;
        await assert.rejects(
          local.block(10_000, 200),
          (error) => error instanceof MentorError && error.code === "MNT_ERR_SMT_TIMEOUT",
        );
        const result = await local.repair({
          tool: bookFlight,
          arguments: { origin: "Paris", destination: "Lyon", travel_class: "first" },
          constraints: [travel],
          repairable: ["travel_class"],
          timeoutMs: 5000,
        });
        assert.equal(result.status, "repaired");
        assert.notEqual(local.pid, pid);
      } finally {
        await local.close();
      }
    });

    test("a killed solver process is restarted and the next request works", async () => {
      const local = new SolverClient({ backend });
      try {
        const before = await local.stats();
        const blocked = local.block(5000, 10_000);
        setTimeout(() => process.kill(before.pid, "SIGKILL"), 100);
        await assert.rejects(
          blocked,
          (error) => error instanceof MentorError && error.code === "MNT_ERR_SMT_CRASHED",
        );
        const after = await local.stats();
        assert.notEqual(after.pid, before.pid);
        assert.equal(local.starts, 2);
        const result = await local.repair({
          tool: bookFlight,
          arguments: { origin: "Paris", destination: "Lyon", travel_class: "first" },
          constraints: [travel],
          repairable: ["travel_class"],
        });
        assert.equal(result.status, "repaired");
      } finally {
        await local.close();
      }
    });

    test("after close, requests reject with MNT_ERR_SMT_CLOSED", async () => {
      const local = new SolverClient({ backend });
      await local.close();
      await assert.rejects(
        local.stats(),
        (error) => error instanceof MentorError && error.code === "MNT_ERR_SMT_CLOSED",
      );
    });
  });
}
