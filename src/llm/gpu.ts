import { availableParallelism } from "node:os";
import { MentorError } from "../errors/index.js";

/**
 * Values of `EngineOptions.gpu` and of the `--gpu` flag: `auto` (the best prebuilt GPU binary that
 * loads here, else the CPU), `cpu`, or one backend. Kept apart from the engine so that the command
 * line can check the flag without loading node-llama-cpp.
 */
export const gpuChoices = ["auto", "cpu", "cuda", "vulkan", "metal"] as const;
export type GpuChoice = (typeof gpuChoices)[number];

/** Checks a `--gpu` value; `option` names the flag (or variable) in the error. */
export function parseGpuChoice(value: string, option = "--gpu"): GpuChoice {
  if ((gpuChoices as readonly string[]).includes(value)) return value as GpuChoice;
  throw new MentorError(
    "MNT_ERR_BAD_INPUT",
    `${option} must be one of ${gpuChoices.join(", ")}, not ${JSON.stringify(value)}`,
  );
}

/** How a backend is named in logs and in `/health`: `cpu`, `cuda`, `vulkan` or `metal`. */
export function gpuName(gpu: false | string): string {
  return gpu === false ? "cpu" : gpu;
}

/**
 * Threads per context for the commands that serve or run a model alone: one per core. Measured on
 * 2 cores with Qwen2.5-Coder-1.5B (`npm run bench:decode`): 2 threads evaluated the prompt at 64.7
 * tokens/s and generated 20.7 tokens/s, 1 thread 32.6 and 10.0. More threads than cores collapse
 * (a tiny model fell from ≈450 to 1.2 tokens/s at 4 threads on 2 cores). Tests that run several
 * engines at once keep the engine's own default, 1.
 */
export function defaultThreads(): number {
  return availableParallelism();
}
