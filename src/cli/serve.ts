import { type Command, Option } from "commander";
import { shieldModes } from "../agent/index.js";
import {
  defaultContextSize,
  defaultEta,
  defaultHost,
  defaultMaxQueue,
  defaultPort,
  defaultRequestTimeoutMs,
  defaultSequences,
} from "../base/defaults.js";
import { MentorError } from "../errors/index.js";
import { gpuChoices, parseGpuChoice } from "../llm/gpu.js";
import { loadPolicy } from "../policy/index.js";
import { refuseLintErrors } from "./lint-gate.js";
import { decimal, integer } from "./options.js";

interface ServeCommandOptions {
  model?: string;
  policy: string[];
  shield?: string;
  host: string;
  port: string;
  upstream?: string;
  upstreamKey?: string;
  upstreamGrammar?: string;
  recorderFsync?: boolean;
  recorderRequired?: boolean;
  apiKey: string[];
  recorder?: string;
  dashboard?: boolean;
  cors: string;
  maxQueue: string;
  requestTimeout: string;
  searchMs?: string;
  sequences: string;
  threads?: string;
  contextSize: string;
  gpu: string;
  eta: string;
  labeler: string;
  trustClientGrounding?: boolean;
  strictGrounding?: boolean;
  labelerModel?: string;
  labelerKey?: string;
  allowLintErrors?: boolean;
}

/** A repeatable flag; from the environment, a comma-separated list. */
const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  ...value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== ""),
];

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description(
      "Serve a shielded model over an OpenAI-compatible HTTP API (POST /v1/chat/completions, GET /v1/models, /health, /metrics)",
    )
    .addOption(
      new Option(
        "-m, --model <model>",
        "local model: registry name, cached model or .gguf path (pulled on first use; default: the registry's default model); with --upstream: the upstream model id",
      ).env("MENTOR_MODEL"),
    )
    .addOption(
      new Option(
        "--policy <id|path...>",
        "policy id (policies/<id>) or file; repeat for more; the first is the default",
      )
        .env("MENTOR_POLICY")
        .argParser(collect),
    )
    .addOption(
      new Option(
        "--shield <mode>",
        "default shield mode (token, or prompt with --upstream; token there sends only what the upstream can enforce)",
      )
        .choices([...shieldModes])
        .env("MENTOR_SHIELD"),
    )
    .addOption(new Option("--host <host>", "address to listen on").default(defaultHost).env("MENTOR_HOST"))
    .addOption(
      new Option("--port <port>", "port (0 = any free port)").default(String(defaultPort)).env("MENTOR_PORT"),
    )
    .addOption(
      new Option("--upstream <url>", "serve this OpenAI-compatible endpoint instead of a local model").env(
        "MENTOR_UPSTREAM",
      ),
    )
    .addOption(new Option("--upstream-key <key>", "API key for the upstream").env("MENTOR_UPSTREAM_KEY"))
    .addOption(
      new Option(
        "--upstream-grammar <kind>",
        "token shield over the upstream: also send a grammar of the answer (gbnf: llama.cpp's server, llama-cpp-python; Hermes call syntax)",
      )
        .choices(["gbnf"])
        .env("MENTOR_UPSTREAM_GRAMMAR"),
    )
    .addOption(
      new Option("--api-key <key...>", "accepted API key; repeat for more; none = open")
        .env("MENTOR_API_KEY")
        .argParser(collect),
    )
    .addOption(
      new Option("--recorder <dir>", "flight recorder directory (one JSONL record per request)").env(
        "MENTOR_RECORDER",
      ),
    )
    .addOption(
      new Option(
        "--recorder-fsync",
        "flush each flight record to disk (fsync) before its answer is sent",
      ).env("MENTOR_RECORDER_FSYNC"),
    )
    .addOption(
      new Option(
        "--recorder-required",
        "refuse work (503 MNT_ERR_RECORDER_FAILED) while the flight recorder cannot write, instead of answering unrecorded",
      ).env("MENTOR_RECORDER_REQUIRED"),
    )
    .addOption(
      new Option(
        "--dashboard",
        "serve the dashboard under /dashboard (behind --api-key when one is set)",
      ).env("MENTOR_DASHBOARD"),
    )
    .addOption(
      new Option("--cors <origin>", "Access-Control-Allow-Origin ('off' for none)")
        .default("*")
        .env("MENTOR_CORS"),
    )
    .addOption(
      new Option("--max-queue <n>", "requests waiting beyond those running")
        .default(String(defaultMaxQueue))
        .env("MENTOR_MAX_QUEUE"),
    )
    .addOption(
      new Option("--request-timeout <ms>", "cancel a request after this long")
        .default(String(defaultRequestTimeoutMs))
        .env("MENTOR_REQUEST_TIMEOUT"),
    )
    .addOption(
      new Option("--search-ms <ms>", "time one search for advice or redirects may take (default 1000)").env(
        "MENTOR_SEARCH_MS",
      ),
    )
    .addOption(
      new Option("--sequences <n>", "generations at once on the local model")
        .default(String(defaultSequences))
        .env("MENTOR_SEQUENCES"),
    )
    .addOption(
      new Option("--threads <n>", "threads of the local model (default: one per core)").env("MENTOR_THREADS"),
    )
    .addOption(
      new Option("--context-size <n>", "context tokens per sequence")
        .default(String(defaultContextSize))
        .env("MENTOR_CONTEXT_SIZE"),
    )
    .addOption(
      new Option(
        "--gpu <backend>",
        `llama.cpp backend of the local model: ${gpuChoices.join(", ")} (auto: a GPU whose prebuilt binary loads, else the CPU)`,
      )
        .default("auto")
        .env("MENTOR_GPU"),
    )
    .addOption(
      new Option("--eta <x>", "default token shield boost").default(String(defaultEta)).env("MENTOR_ETA"),
    )
    .addOption(
      new Option(
        "--labeler <who>",
        "grounds tasks and text outputs where the policy lets a model: model (the served one), rules (the policy's rules only), or the URL of an OpenAI-compatible endpoint",
      )
        .default("model")
        .env("MENTOR_LABELER"),
    )
    .addOption(
      new Option("--labeler-model <id>", "the labeler endpoint's model (with --labeler URL)").env(
        "MENTOR_LABELER_MODEL",
      ),
    )
    .addOption(
      new Option("--labeler-key <key>", "API key for the labeler endpoint").env("MENTOR_LABELER_KEY"),
    )
    .addOption(
      new Option(
        "--trust-client-grounding",
        "use the mentor.task and mentor.label fields clients send instead of grounding the text (only for trusted clients)",
      ).env("MENTOR_TRUST_CLIENT_GROUNDING"),
    )
    .addOption(
      new Option(
        "--strict-grounding",
        "refuse a request whose task cannot be grounded (422 MNT_ERR_UNGROUNDED) instead of running it without duties",
      ).env("MENTOR_STRICT_GROUNDING"),
    )
    .addOption(
      new Option(
        "--allow-lint-errors",
        "serve a policy that mentor lint finds errors in (refused by default)",
      ).env("MENTOR_ALLOW_LINT_ERRORS"),
    )
    .action(async (options: ServeCommandOptions) => {
      const gpu = parseGpuChoice(options.gpu, "--gpu (MENTOR_GPU)");
      const { startServer, policyFile } = await import("../server/index.js");
      for (const id of options.policy ?? ["travel"]) {
        const file = policyFile(id);
        await refuseLintErrors(loadPolicy(file), file, options.allowLintErrors);
      }
      const server = await startServer({
        ...(options.model !== undefined && !options.upstream ? { model: options.model } : {}),
        ...(options.upstream !== undefined
          ? {
              upstream: {
                url: options.upstream,
                ...(options.upstreamKey !== undefined ? { apiKey: options.upstreamKey } : {}),
                ...(options.upstreamGrammar !== undefined
                  ? { grammar: options.upstreamGrammar as "gbnf" }
                  : {}),
                ...(options.model !== undefined ? { model: options.model } : {}),
              },
            }
          : {}),
        ...(options.policy !== undefined ? { policies: options.policy } : {}),
        ...(options.shield !== undefined ? { shield: options.shield as (typeof shieldModes)[number] } : {}),
        host: options.host,
        port: integer(options.port, "--port", 0),
        apiKeys: options.apiKey ?? [],
        ...(options.recorder !== undefined ? { recorderDirectory: options.recorder } : {}),
        ...(options.recorderFsync === true ? { recorderFsync: true } : {}),
        ...(options.recorderRequired === true ? { recorderRequired: true } : {}),
        dashboard: options.dashboard === true,
        cors: options.cors === "off" ? false : options.cors,
        maxQueue: integer(options.maxQueue, "--max-queue", 0),
        requestTimeoutMs: integer(options.requestTimeout, "--request-timeout", 1),
        ...(options.searchMs !== undefined ? { searchMs: integer(options.searchMs, "--search-ms", 1) } : {}),
        sequences: integer(options.sequences, "--sequences", 1),
        ...(options.threads !== undefined ? { threads: integer(options.threads, "--threads", 1) } : {}),
        contextSize: integer(options.contextSize, "--context-size", 256),
        gpu,
        eta: decimal(options.eta, "--eta", 0),
        labeler: labelerOption(options),
        trustClientGrounding: options.trustClientGrounding === true,
        strictGrounding: options.strictGrounding === true,
      });
      // Graceful stop: no new requests, those in flight finish, the recorder is flushed.
      const stop = (): void => {
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    });
}

function labelerOption(
  options: ServeCommandOptions,
): "model" | "rules" | { url: string; model: string; apiKey?: string } {
  if (options.labeler === "model" || options.labeler === "rules") return options.labeler;
  if (!/^https?:\/\//.test(options.labeler))
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `--labeler must be model, rules or an http(s) URL, not ${JSON.stringify(options.labeler)}`,
    );
  if (options.labelerModel === undefined)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      "--labeler URL needs --labeler-model (the endpoint's model id)",
    );
  return {
    url: options.labeler,
    model: options.labelerModel,
    ...(options.labelerKey !== undefined ? { apiKey: options.labelerKey } : {}),
  };
}
