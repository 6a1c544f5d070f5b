import { z } from "zod";
import { type Grounder, type ShieldMode, shieldModes, type TurnGenerator } from "../agent/index.js";
import {
  defaultHost,
  defaultMaxQueue,
  defaultMaxRegenerations,
  defaultPort,
  defaultRequestTimeoutMs,
} from "../base/defaults.js";
import { MentorError } from "../errors/index.js";
import type { RecorderFileSystem } from "../evaluator/index.js";
import { gpuChoices } from "../llm/gpu.js";
import type { Engine, GpuChoice } from "../llm/index.js";
import type { Policy } from "../policy/index.js";

export interface ServerOptions {
  /** A registry name, a cached model or a .gguf path for the local engine. Default: the registry's `default`. */
  model?: string;
  /** Fetch a registry model that is not cached yet (with a progress bar). Default true. */
  pull?: boolean;
  /** An engine already loaded (the server does not dispose it). Replaces `model`; the id defaults to `local`. */
  engine?: Engine;
  /**
   * Any generator of turns instead of a model (a scripted one in tests, or one of your own).
   * Replaces `model` and `engine`; the id defaults to `local`.
   */
  generator?: TurnGenerator;
  /** Engine settings when the server loads the model. Default 4096. */
  contextSize?: number;
  /** Generations at once on the local engine (sequences of its context). Default 2. */
  sequences?: number;
  /** Threads of the local engine's context. Default: one per core (`defaultThreads`). */
  threads?: number;
  /** The local engine's backend (`auto`: a GPU if a prebuilt binary loads, else the CPU). Default `auto`. */
  gpu?: GpuChoice;
  /**
   * Serve an OpenAI-compatible endpoint instead of a local model. The token shield there is what a
   * request can carry (docs/server.md, "The token shield over an upstream"); `grammar: "gbnf"` adds
   * a GBNF grammar of the answer (llama.cpp's server, llama-cpp-python).
   */
  upstream?: { url: string; apiKey?: string; model?: string; grammar?: "gbnf" };
  /** The id clients name the model by. Default: the registry name or the file name; upstream: its model id. */
  modelId?: string;
  /** Shipped policy ids (`travel`, `tau2-mock`, …) or paths; the first is the default. Default `["travel"]`; `[]` serves without a policy. */
  policies?: string[];
  /** Default shield mode. Default `token` (`prompt` with an upstream, where `token` is what the upstream can enforce). */
  shield?: ShieldMode;
  /** Default token shield boost. Default 0.5. */
  eta?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Accepted API keys (`Authorization: Bearer K` or `X-Api-Key: K`); none = open. */
  apiKeys?: string[];
  /** `Access-Control-Allow-Origin` value, or false for no CORS headers. Default `*`. */
  cors?: string | false;
  /** Directory of the flight recorder's JSONL files; none = no recording. */
  recorderDirectory?: string;
  /**
   * Flush each flight record to disk (fsync of the file, and of the directory once the file is
   * made) before its answer is sent: every answered request is on disk whatever the kill point,
   * also after a power loss. Default false (each record is written before the answer, to the
   * operating system: a killed server loses none, a crashed machine may lose the last ones).
   */
  recorderFsync?: boolean;
  /**
   * Refuse new work while the flight recorder cannot write (503 `MNT_ERR_RECORDER_FAILED`, and
   * `/health` 503), and do not send an answer whose record could not be written. Default false: a
   * write failure is logged, counted and shown in `/health` (200, `degraded`), and the answer goes out.
   * Needs `recorderDirectory`.
   */
  recorderRequired?: boolean;
  /** The flight recorder's file operations (default node:fs): for injecting write failures in tests. */
  recorderFileSystem?: RecorderFileSystem;
  /** Serve the dashboard's pages under `/dashboard` (behind the API keys when some are set). Default false. */
  dashboard?: boolean;
  /** Requests answered at once. Default: the engine's sequences (local) or 4 (upstream, generator). */
  concurrency?: number;
  /** Requests waiting beyond those; more are refused with 429. Default 16. */
  maxQueue?: number;
  /** A request (queue wait included) is cancelled after this long. Default 300,000 ms. */
  requestTimeoutMs?: number;
  /** Largest request body in bytes. Default 4 MiB. */
  bodyLimit?: number;
  /** Generations after the first one per turn. Default 4. */
  maxRegenerations?: number;
  /**
   * Milliseconds one search for advice or redirects may run (the time backstop of
   * `SearchLimits.maxMs`). Default 1,000. The 500-decision budget shapes the answers; on a loaded
   * machine a large policy can reach this backstop first, so a benchmark lifts it to get the same
   * advice on any load.
   */
  searchMs?: number;
  /**
   * Who grounds tasks and text outputs where the policy lets a model do it: `model` (default) the
   * served model (the local one through a grammar, or the upstream), `rules` the policy's rules only
   * (cases left to a model fail closed), or another OpenAI-compatible endpoint.
   */
  labeler?: "model" | "rules" | { url: string; model: string; apiKey?: string };
  /**
   * Use the grounding a client sends (`mentor.task` on user messages, `mentor.label` on tool
   * messages) instead of the labeler's. Default false: whoever writes the messages could claim
   * `urgent: true`, so those fields are dropped and the labeler grounds the text. Set it only when
   * the clients are trusted to ground (a benchmark sending the ground truth, a pipeline that
   * labels outputs itself).
   */
  trustClientGrounding?: boolean;
  /** Refuse requests whose task cannot be grounded (`MNT_ERR_UNGROUNDED`, 422). Default false. */
  strictGrounding?: boolean;
  /** Grounding per policy instead of the labeler. */
  grounder?: (policy: Policy) => Grounder;
  /** Fastify's logger (pino) options, or false. Default: info level to stdout. */
  logger?: boolean | Record<string, unknown>;
  /** Called once the port is open, before the model has loaded (`/health` answers 503 until then). */
  onListening?: (url: string) => void;
}

/** The options after validation, with the defaults that do not depend on the model filled in. */
export type ServerSettings = Readonly<
  ServerOptions &
    Required<
      Pick<
        ServerOptions,
        | "policies"
        | "shield"
        | "host"
        | "port"
        | "apiKeys"
        | "cors"
        | "maxQueue"
        | "requestTimeoutMs"
        | "bodyLimit"
        | "maxRegenerations"
        | "labeler"
        | "logger"
      >
    >
>;

const count = (min: number) =>
  z
    .number({ error: "must be a number" })
    .int({ error: "must be a whole number" })
    .min(min, { error: `must be at least ${min}` });
const text = z.string({ error: "must be a string" }).min(1, { error: "must not be empty" });
const url = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
const callback = z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", {
  error: "must be a function",
});
const object = z.custom<object>((value) => typeof value === "object" && value !== null, {
  error: "must be an object",
});

const schema = z.strictObject({
  model: text.optional(),
  pull: z.boolean({ error: "must be true or false" }).optional(),
  engine: object.optional(),
  generator: object.optional(),
  contextSize: count(256).optional(),
  sequences: count(1).optional(),
  threads: count(1).optional(),
  gpu: z.enum(gpuChoices, { error: `must be one of ${gpuChoices.join(", ")}` }).optional(),
  upstream: z
    .strictObject(
      {
        url,
        apiKey: text.optional(),
        model: text.optional(),
        grammar: z.enum(["gbnf"], { error: "must be gbnf" }).optional(),
      },
      { error: "must be {url, apiKey?, model?, grammar?}" },
    )
    .optional(),
  modelId: text.optional(),
  policies: z.array(text, { error: "must be a list of policy ids or paths" }).default(["travel"]),
  shield: z.enum(shieldModes, { error: `must be one of ${shieldModes.join(", ")}` }).optional(),
  eta: z.number({ error: "must be a number" }).min(0, { error: "must be at least 0" }).optional(),
  host: text.default(defaultHost),
  port: count(0).max(65535, { error: "must be at most 65535" }).default(defaultPort),
  apiKeys: z.array(text, { error: "must be a list of keys" }).default([]),
  cors: z.union([text, z.literal(false)], { error: "must be an origin or false" }).default("*"),
  recorderDirectory: text.optional(),
  recorderFsync: z.boolean({ error: "must be true or false" }).optional(),
  recorderRequired: z.boolean({ error: "must be true or false" }).optional(),
  recorderFileSystem: object.optional(),
  dashboard: z.boolean({ error: "must be true or false" }).default(false),
  concurrency: count(1).optional(),
  maxQueue: count(0).default(defaultMaxQueue),
  requestTimeoutMs: count(1).default(defaultRequestTimeoutMs),
  bodyLimit: count(1).default(4 * 1024 * 1024),
  maxRegenerations: count(0).default(defaultMaxRegenerations),
  searchMs: count(1).optional(),
  labeler: z
    .union([z.enum(["model", "rules"]), z.strictObject({ url, model: text, apiKey: text.optional() })], {
      error: "must be model, rules or {url, model, apiKey?}",
    })
    .default("model"),
  trustClientGrounding: z.boolean({ error: "must be true or false" }).optional(),
  strictGrounding: z.boolean({ error: "must be true or false" }).optional(),
  grounder: callback.optional(),
  logger: z
    .union([z.boolean(), z.record(z.string(), z.unknown())], { error: "must be a boolean or pino options" })
    .default({ level: "info" }),
  onListening: callback.optional(),
});

/** Validates server options once (every problem names its option) and freezes the result. */
export function serverSettings(options: ServerOptions): ServerSettings {
  const parsed = schema.safeParse(options);
  if (!parsed.success)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `server options: ${parsed.error.issues
        .map((issue) => `${issue.path.join(".") || "(options)"} ${issue.message}`)
        .join("; ")}`,
    );
  const settings = parsed.data as ServerSettings & { shield?: ShieldMode };
  const shield = settings.shield ?? (settings.upstream ? "prompt" : "token");
  const sources = [
    settings.upstream && "upstream",
    settings.engine && "engine",
    settings.generator && "generator",
  ];
  if (sources.filter(Boolean).length > 1)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `server options: give one of upstream, engine and generator, not ${sources.filter(Boolean).join(" and ")}`,
    );
  if (settings.recorderRequired && settings.recorderDirectory === undefined)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      "server options: recorderRequired needs recorderDirectory (--recorder-required needs --recorder)",
    );
  // Objects given by reference (engine, generator, callbacks) are the caller's: not frozen.
  return Object.freeze({ ...settings, shield });
}
