/**
 * Tiny models (and real ones already in the cache): write time, load time, tokens per second.
 *
 *   npm run bench:models                      # the three tiny families
 *   npm run bench:models -- gemma-3-270m ...  # also models by registry name or path (not fetched)
 *
 * One thread (`threads: 1`), no GPU, as on the 2-core build machine.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { getLlama, LlamaLogLevel, resolveChatWrapper } from "node-llama-cpp";
import { makeTinyModel, resolveModel, tinyModelFamilies } from "../../src/models/index.js";

const tokensToGenerate = 200;
const directory = mkdtempSync(join(tmpdir(), "mentor-bench-models-"));
const llama = await getLlama({ gpu: false, build: "never", maxThreads: 1, logLevel: LlamaLogLevel.error });

console.log(
  `bench:models — node ${process.version}, ${cpus().length} cores, 1 thread, ${tokensToGenerate} tokens`,
);
console.log("model                       write ms  load ms  tokens/s  wrapper");

async function measure(label: string, path: string, writeMs: number | undefined): Promise<void> {
  let started = performance.now();
  const model = await llama.loadModel({ modelPath: path });
  const loadMs = performance.now() - started;
  const wrapper = resolveChatWrapper(model)?.constructor.name ?? "-";
  const context = await model.createContext({ contextSize: 1024, threads: 1 });
  const sequence = context.getSequence();
  let count = 0;
  started = performance.now();
  for await (const _token of sequence.evaluate(model.tokenize("The quick brown fox"), {
    temperature: 0.8,
    seed: 1,
  })) {
    if (++count >= tokensToGenerate) break;
  }
  const rate = count / ((performance.now() - started) / 1000);
  await context.dispose();
  await model.dispose();
  const size = `${(statSync(path).size / 1e6).toFixed(0)} MB`;
  console.log(
    `${`${label} (${size})`.padEnd(28)}${(writeMs === undefined ? "-" : writeMs.toFixed(0)).padStart(8)}  ${loadMs
      .toFixed(0)
      .padStart(7)}  ${rate.toFixed(0).padStart(8)}  ${wrapper}`,
  );
}

try {
  for (const family of tinyModelFamilies) {
    const path = join(directory, `${family}.gguf`);
    const started = performance.now();
    await makeTinyModel({ family, outputPath: path });
    await measure(`tiny ${family}`, path, performance.now() - started);
  }
  for (const name of process.argv.slice(2))
    await measure(name, await resolveModel(name, { pull: false }), undefined);
} finally {
  await llama.dispose();
  rmSync(directory, { recursive: true, force: true });
}
