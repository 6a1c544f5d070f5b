/**
 * npm run bench:labeler [-- --limit N] [-- --no-llm] — accuracy and latency of the labeler on the
 * hand-written examples of bench/labeler (travel, refunds): task texts → pseudo calls, tool
 * outputs → labels. Three labelers per example:
 *   rules     the policy's deterministic rules alone (the baseline of the latency ratios);
 *   llm       the LLM labeler alone on `--model` (default: the registry's default model), every
 *             example, whatever the policy allows;
 *   declared  what the server runs: the rules, then the LLM only where the policy allows it.
 * An answer is correct, wrong, or unlabeled (the labeler failed closed: no label / no task).
 * `--limit N` takes the first N examples of each domain and kind for the LLM runs; `--timeout-ms`
 * bounds each model request (default 120 000); `--verbose` lists every wrong and unlabeled answer.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { getLlama } from "node-llama-cpp";
import { parse } from "yaml";
import type { Value } from "../../src/expression/index.js";
import { Labeler, type LabelerOptions } from "../../src/labeler/index.js";
import { defaultThreads } from "../../src/llm/gpu.js";
import { LocalLabelModel } from "../../src/llm/index.js";
import { loadRegistry, resolveModel } from "../../src/models/index.js";
import { loadPolicy, type Policy } from "../../src/policy/index.js";

interface TaskExample {
  text: string;
  first?: boolean;
  calls: { name?: string; [field: string]: unknown }[];
  tags?: string[];
}

interface OutputExample {
  tool: string;
  text: string;
  arguments?: Record<string, Value>;
  label: string;
  tags?: string[];
}

interface ExampleFile {
  domain: string;
  policy: string;
  tasks: TaskExample[];
  outputs: OutputExample[];
}

type Verdict = "correct" | "wrong" | "unlabeled";

interface Outcome {
  domain: string;
  kind: "task" | "label";
  labeler: string;
  verdict: Verdict;
  ms: number;
  source: string;
  tags: string[];
  detail: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const examplesDirectory = resolve(here, "../../../bench/labeler");
const files = ["travel.yaml", "refunds/examples.yaml"];

const args = process.argv.slice(2);
const limitIndex = args.indexOf("--limit");
const limit = limitIndex >= 0 ? Number(args[limitIndex + 1]) : Number.POSITIVE_INFINITY;
const withLlm = !args.includes("--no-llm");
const timeoutIndex = args.indexOf("--timeout-ms");
// Generous by default: on a loaded machine the accuracy should not measure the load.
const timeoutMs = timeoutIndex >= 0 ? Number(args[timeoutIndex + 1]) : 120_000;
const verbose = args.includes("--verbose");
const modelIndex = args.indexOf("--model");
// The model the LLM labeler runs on: a registry name, a cached file or a path (default: the registry's default).
const modelName = modelIndex >= 0 ? (args[modelIndex + 1] as string) : loadRegistry().default;

function loadExamples(file: string): { examples: ExampleFile; policy: Policy } {
  const path = resolve(examplesDirectory, file);
  const examples = parse(readFileSync(path, "utf8")) as ExampleFile;
  return { examples, policy: loadPolicy(resolve(dirname(path), examples.policy)) };
}

/** Expected calls with the domain's task call name filled in (examples omit it when there is one). */
function expectedCalls(
  policy: Policy,
  example: TaskExample,
): { name: string; arguments: Record<string, unknown> }[] {
  const only = [...policy.taskCalls.keys()][0] as string;
  return example.calls.map(({ name, ...fields }) => ({ name: name ?? only, arguments: fields }));
}

/**
 * The grounded calls with only the fields the examples state: travel's `mode` and `travel_class`
 * came to the policy after these examples were written (test/bench/travel.test.ts checks them on
 * the 23 task openings), so a call is judged on its route and urgency.
 */
function stated(
  calls: readonly { name: string; arguments: Record<string, unknown> }[],
  expected: readonly { name: string; arguments: Record<string, unknown> }[],
): { name: string; arguments: Record<string, unknown> }[] {
  const fields = new Set(expected.flatMap((call) => Object.keys(call.arguments)));
  if (fields.size === 0) return [...calls];
  return calls.map((call) => ({
    name: call.name,
    arguments: Object.fromEntries(Object.entries(call.arguments).filter(([key]) => fields.has(key))),
  }));
}

/** Calls as a sorted list of canonical strings; strings compare without case and outer spaces. */
function canonical(calls: readonly { name: string; arguments: Record<string, unknown> }[]): string {
  return JSON.stringify(
    calls
      .map((call) =>
        JSON.stringify([
          call.name,
          Object.entries(call.arguments)
            .sort(([left], [right]) => left.localeCompare(right))
            .map(([key, value]) => [key, typeof value === "string" ? value.trim().toLowerCase() : value]),
        ]),
      )
      .sort(),
  );
}

async function run(
  name: string,
  options: LabelerOptions,
  domains: { examples: ExampleFile; policy: Policy }[],
  take: number,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const { examples, policy } of domains) {
    const labeler = new Labeler(policy, options);
    for (const example of examples.tasks.slice(0, take)) {
      const started = performance.now();
      const result = await labeler.groundTask(example.text, example.first ?? true);
      const ms = performance.now() - started;
      const calls = expectedCalls(policy, example);
      const expected = canonical(calls);
      const verdict: Verdict =
        "error" in result
          ? "unlabeled"
          : canonical(
                stated(result.value as { name: string; arguments: Record<string, unknown> }[], calls),
              ) === expected
            ? "correct"
            : "wrong";
      const detail = "error" in result ? result.error : JSON.stringify(result.value);
      outcomes.push({
        domain: examples.domain,
        kind: "task",
        labeler: name,
        verdict,
        ms,
        source: result.source,
        tags: example.tags ?? [],
        detail: `${example.text} → ${detail}`,
      });
    }
    for (const example of examples.outputs.slice(0, take)) {
      const tool = policy.tools.get(example.tool);
      if (!tool) throw new Error(`${examples.domain}: unknown tool ${example.tool}`);
      const started = performance.now();
      const result = await labeler.labelOutput(tool, example.arguments ?? {}, example.text);
      const ms = performance.now() - started;
      const expected = example.label === "none" ? null : example.label;
      const verdict: Verdict =
        "error" in result ? "unlabeled" : result.value === expected ? "correct" : "wrong";
      const detail = "error" in result ? result.error : String(result.value);
      outcomes.push({
        domain: examples.domain,
        kind: "label",
        labeler: name,
        verdict,
        ms,
        source: result.source,
        tags: example.tags ?? [],
        detail: `${example.text} → ${detail} (expected ${example.label})`,
      });
    }
  }
  return outcomes;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

function formatMs(ms: number): string {
  return ms < 1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
}

function table(outcomes: Outcome[], baseline: Map<string, number>): void {
  const groups = new Map<string, Outcome[]>();
  for (const outcome of outcomes) {
    const key = [outcome.labeler, outcome.domain, outcome.kind].join("\t");
    groups.set(key, [...(groups.get(key) ?? []), outcome]);
  }
  console.log(
    "labeler   domain   kind    n  correct  wrong  unlabeled  accuracy  p50 ms   p95 ms   p50 / rules",
  );
  for (const [key, group] of groups) {
    const [labeler, domain, kind] = key.split("\t") as [string, string, string];
    const count = (verdict: Verdict) => group.filter((outcome) => outcome.verdict === verdict).length;
    const p50 = percentile(
      group.map((outcome) => outcome.ms),
      0.5,
    );
    const base = baseline.get(`${domain}\t${kind}`) ?? Number.NaN;
    console.log(
      [
        labeler.padEnd(9),
        domain.padEnd(8),
        kind.padEnd(5),
        String(group.length).padStart(4),
        String(count("correct")).padStart(8),
        String(count("wrong")).padStart(6),
        String(count("unlabeled")).padStart(10),
        `${((100 * count("correct")) / group.length).toFixed(1)}%`.padStart(9),
        formatMs(p50).padStart(7),
        formatMs(
          percentile(
            group.map((outcome) => outcome.ms),
            0.95,
          ),
        ).padStart(8),
        `${(p50 / base).toFixed(0)}×`.padStart(12),
      ].join(" "),
    );
  }
}

function tagTable(outcomes: Outcome[]): void {
  const labelers = [...new Set(outcomes.map((outcome) => outcome.labeler))];
  const tags = [...new Set(outcomes.flatMap((outcome) => outcome.tags))].sort();
  console.log(`\ncorrect / wrong / unlabeled by tag   ${labelers.map((name) => name.padStart(14)).join("")}`);
  for (const tag of ["(untagged)", ...tags]) {
    const cells = labelers.map((labeler) => {
      const group = outcomes.filter(
        (outcome) =>
          outcome.labeler === labeler &&
          (tag === "(untagged)" ? outcome.tags.length === 0 : outcome.tags.includes(tag)),
      );
      const count = (verdict: Verdict) => group.filter((outcome) => outcome.verdict === verdict).length;
      return `${count("correct")}/${count("wrong")}/${count("unlabeled")}`.padStart(14);
    });
    console.log(`  ${tag.padEnd(34)}${cells.join("")}`);
  }
}

const domains = files.map(loadExamples);
const total = domains.reduce((sum, { examples }) => sum + examples.tasks.length + examples.outputs.length, 0);
console.log(`${total} examples in ${domains.length} domains (${files.join(", ")})\n`);

const rules = await run("rules", { only: "rules" }, domains, Number.POSITIVE_INFINITY);
const baseline = new Map<string, number>();
for (const key of new Set(rules.map((outcome) => `${outcome.domain}\t${outcome.kind}`))) {
  const group = rules.filter((outcome) => `${outcome.domain}\t${outcome.kind}` === key);
  baseline.set(
    key,
    percentile(
      group.map((outcome) => outcome.ms),
      0.5,
    ),
  );
}
const outcomes = [...rules];

if (withLlm) {
  const modelPath = await resolveModel(modelName, { pull: false });
  const llama = await getLlama({
    gpu: false,
    build: "never",
    maxThreads: defaultThreads(),
    logLevel: "error" as never,
  });
  const model = await llama.loadModel({ modelPath });
  const labelModel = await LocalLabelModel.create(model);
  const started = performance.now();
  outcomes.push(...(await run("llm", { only: "llm", model: labelModel, timeoutMs }, domains, limit)));
  outcomes.push(...(await run("declared", { model: labelModel, timeoutMs }, domains, limit)));
  const llmSeconds = (performance.now() - started) / 1000;
  // The same examples again through one labeler: every model answer now comes from the cache.
  const cached = new Labeler((domains[0] as { policy: Policy }).policy, { model: labelModel, only: "llm" });
  const sample = (domains[0] as { examples: ExampleFile }).examples.outputs.slice(0, 10);
  const tool = (example: OutputExample) => (domains[0] as { policy: Policy }).policy.tools.get(example.tool);
  for (const example of sample) await cached.labelOutput(tool(example) as never, {}, example.text);
  const hits: number[] = [];
  for (const example of sample) {
    const start = performance.now();
    await cached.labelOutput(tool(example) as never, {}, example.text);
    hits.push(performance.now() - start);
  }
  console.log(
    `LLM runs: ${llmSeconds.toFixed(0)} s on ${modelName}, ${defaultThreads()} thread(s); a cached answer: p50 ${formatMs(percentile(hits, 0.5))} ms\n`,
  );
  await labelModel.dispose();
  await model.dispose();
}

table(outcomes, baseline);
tagTable(outcomes);
if (verbose) {
  console.log("\nwrong and unlabeled:");
  for (const outcome of outcomes.filter((candidate) => candidate.verdict !== "correct"))
    console.log(
      `  [${outcome.labeler} ${outcome.domain} ${outcome.kind} ${outcome.verdict}] ${outcome.detail}`,
    );
}
