import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { getLlama, type LlamaModel } from "node-llama-cpp";
import { seededRandom } from "../../src/base/random.js";
import { parseCalls, parseLabel } from "../../src/labeler/answer.js";
import { Labeler, type LabelModel, type ModelRequest } from "../../src/labeler/index.js";
import { labelRequest, taskRequest } from "../../src/labeler/prompt.js";
import { LocalLabelModel } from "../../src/llm/index.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import { loadPolicy, parsePolicy, type TaskCallSpec, type ToolSpec } from "../../src/policy/index.js";
import { traceFromMessages } from "../../src/run/index.js";
import { travelWithSeatsLlm } from "../support/travel-llm.js";

// Needs a model: writes tiny ones (random weights, real tokenizers). With random weights and
// temperature 1 the model writes near-random text; the grammar alone must keep every answer valid.
// Generations per family and kind: MENTOR_LABELER_GENERATIONS (default 15).
const generations = Number(process.env.MENTOR_LABELER_GENERATIONS ?? 15);

const directory = mkdtempSync(join(tmpdir(), "mentor-labeler-"));
after(() => rmSync(directory, { recursive: true, force: true }));

const travel = travelWithSeatsLlm();
const refunds = loadPolicy(
  fileURLToPath(new URL("../../../bench/labeler/refunds/policy.yaml", import.meta.url)),
);
/** Task calls of every field type the grammar knows, several per policy. */
const mixed = parsePolicy(`
policy: mixed
manual: {}
tools: {}
task:
  order:
    description: An order.
    parameters:
      item: string
      quantity: {type: integer, description: How many}
      price: number
      gift: boolean
      size: {enum: [S, M, L]}
  cancel:
    parameters: {order_id: string}
propositions: {}
`);

const words = [
  "short",
  "long",
  "full",
  "fully",
  "available",
  "a",
  "b_2",
  "in_transit",
  "lost",
  "x",
  "nonetheless",
];

/** A random set of 1–5 distinct labels, some prefixes of others. */
function randomLabels(random: () => number): string[] {
  const labels = new Set<string>();
  const size = 1 + Math.floor(random() * 5);
  while (labels.size < size) labels.add(words[Math.floor(random() * words.length)] as string);
  return [...labels];
}

function toolWith(labels: string[]): ToolSpec {
  return {
    name: "probe",
    description: "A tool.",
    parameters: [],
    required: [],
    output: "text",
    labels: Object.fromEntries(labels.map((label) => [label, `the output is ${label}`])),
    repairable: [],
    labeler: { rules: [], llm: true },
  };
}

for (const family of ["gemma3", "qwen3"] as const) {
  describe(`LLM labeler on a tiny ${family} model`, () => {
    let model: LlamaModel;
    let sampled: LocalLabelModel;
    before(async () => {
      const path = join(directory, `${family}.gguf`);
      await makeTinyModel({ family, outputPath: path, seed: 11 });
      const llama = await getLlama({ gpu: false, build: "never", maxThreads: 1, logLevel: "error" as never });
      model = await llama.loadModel({ modelPath: path });
      sampled = await LocalLabelModel.create(model, { temperature: 1.5, seed: 5 });
    });
    after(async () => {
      await sampled?.dispose();
      await model?.dispose();
    });

    test(`grammar-constrained labels always parse and name a declared label or none (${generations} runs)`, async () => {
      const random = seededRandom(3);
      const seen = new Set<string>();
      for (let run = 0; run < generations; run++) {
        const labels = randomLabels(random);
        const raw = await sampled.complete(labelRequest(toolWith(labels), {}, `output number ${run}`));
        const parsed = parseLabel(raw, labels);
        assert.ok(parsed.ok, `${JSON.stringify(raw)} for labels ${labels.join(", ")}`);
        assert.equal(
          JSON.parse(raw),
          parsed.value ?? "none",
          "the answer is exactly the label as a JSON string, nothing around it",
        );
        seen.add(raw);
      }
      assert.ok(seen.size > 1, `sampling explores several labels (saw ${[...seen].join(", ")})`);
    });

    test(`grammar-constrained task answers always validate against the task calls (${generations} runs)`, async () => {
      const policies = [travel, refunds, mixed];
      let nonEmpty = 0;
      for (let run = 0; run < generations; run++) {
        const specs: TaskCallSpec[] = [...(policies[run % policies.length]?.taskCalls.values() ?? [])];
        const raw = await sampled.complete(taskRequest(specs, `request number ${run}`));
        const parsed = parseCalls(raw, specs);
        assert.ok(parsed.ok, `${raw}\n${parsed.ok ? "" : parsed.error}`);
        if (parsed.value.length > 0) nonEmpty++;
      }
      assert.ok(nonEmpty > 0, "some answers contain calls");
    });

    test("answers are cached by content: the same output is asked once; the cache is bounded", async () => {
      let asked = 0;
      const counting: LabelModel = {
        name: sampled.name,
        complete: (request: ModelRequest, signal?: AbortSignal) => {
          asked++;
          return sampled.complete(request, signal);
        },
      };
      const labeler = new Labeler(travel, { model: counting, cacheSize: 2 });
      const seats = travel.tools.get("check_seats") as ToolSpec;
      const first = await labeler.labelOutput(seats, {}, "Plenty of room.");
      assert.equal(first.source, "llm");
      const again = await labeler.labelOutput(seats, {}, "Plenty of room.");
      assert.deepEqual(again, { value: "value" in first ? first.value : undefined, source: "cache" });
      assert.equal(asked, 1);
      await labeler.labelOutput(seats, {}, "Some room.");
      await labeler.labelOutput(seats, {}, "A little room.");
      assert.equal(asked, 3);
      assert.equal((await labeler.labelOutput(seats, {}, "Plenty of room.")).source, "llm", "evicted");
      assert.equal(asked, 4);
      assert.equal((await labeler.labelOutput(seats, {}, "A little room.")).source, "cache");
    });

    test("a model slower than timeoutMs fails closed: no label, an unknown outcome, a timeout note", async () => {
      const labeler = new Labeler(travel, { model: sampled, timeoutMs: 1 });
      const messages = [
        { role: "user", content: "Book me a trip from Toronto to Chicago." },
        {
          role: "assistant",
          tool_calls: [{ id: "s", type: "function", function: { name: "check_seats", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "s", content: "Plenty of room." },
      ];
      const { messages: grounded, notes } = await labeler.ground(messages);
      assert.equal((grounded[2] as { mentor?: unknown }).mentor, undefined);
      assert.match(notes[1]?.error ?? "", /^MNT_ERR_LABELER_TIMEOUT/);
      assert.equal(traceFromMessages(grounded, travel).calls[0]?.outcome.kind, "unknown");
    });
  });
}
