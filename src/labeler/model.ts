import type { TaskCallSpec } from "../policy/index.js";

/** What the labeler asks a model: a prompt and the shape of the answer. */
export interface ModelRequest {
  system: string;
  user: string;
  /** One of `labels` (or "none"), or a JSON array of calls of `calls`. */
  output: { kind: "label"; labels: string[] } | { kind: "calls"; calls: TaskCallSpec[] };
}

/**
 * A model the labeler asks when its rules do not decide. It returns the raw answer; the labeler
 * parses and validates it (a model may constrain its decoding, but is never trusted to).
 */
export interface LabelModel {
  /** Names the model in notes and in the cache key. */
  readonly name: string;
  complete(request: ModelRequest, signal?: AbortSignal): Promise<string>;
}
