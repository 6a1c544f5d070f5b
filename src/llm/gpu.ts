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
