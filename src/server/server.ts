import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import Fastify, { type FastifyReply } from "fastify";
import {
  apiBase,
  EngineGenerator,
  type Grounder,
  givenGrounding,
  runTurn,
  type ShieldMode,
  type TurnGenerator,
  type TurnResult,
  UpstreamGenerator,
} from "../agent/index.js";
import { MentorError } from "../errors/index.js";
import { Evaluator } from "../evaluator/index.js";
import { Labeler, type LabelModel, OpenAILabelModel } from "../labeler/index.js";
import { defaultThreads, gpuName } from "../llm/gpu.js";
import type { Engine, GpuChoice, LocalLabelModel } from "../llm/index.js";
import { loadRegistry, parseModelSpec, resolveModel } from "../models/index.js";
import type { ChatMessage } from "../openai/index.js";
import { loadPolicy, type Policy } from "../policy/index.js";
import { SolverClient } from "../smt/index.js";
import { Admission } from "./admission.js";
import { Metrics } from "./metrics.js";
import { FlightRecorder } from "./recorder.js";
import { type ChatRequest, checkToolsAgainstPolicy, RequestError, readChatRequest } from "./request.js";

export interface ServerOptions {
  /** A registry name, a cached model or a .gguf path for the local engine. Default: the registry's `default`. */
  model?: string;
  /** Fetch a registry model that is not cached yet (with a progress bar). Default true. */
  pull?: boolean;
  /** An engine already loaded (the server does not dispose it). Replaces `model`; the id defaults to `local`. */
  engine?: Engine;
  /** Engine settings when the server loads the model. */
  contextSize?: number;
  /** Generations at once on the local engine (sequences of its context). Default 2. */
  sequences?: number;
  /** Threads of the local engine's context. Default: one per core (`defaultThreads`). */
  threads?: number;
  /** The local engine's backend (`auto`: a GPU if a prebuilt binary loads, else the CPU). Default `auto`. */
  gpu?: GpuChoice;
  /** Serve an OpenAI-compatible endpoint instead of a local model (prompt shield only). */
  upstream?: { url: string; apiKey?: string; model?: string };
  /** The id clients name the model by. Default: the registry name or the file name; upstream: its model id. */
  modelId?: string;
  /** Policy ids (`policies/<id>/policy.yaml`) or paths; the first is the default. Default `["travel"]`; `[]` serves without a policy. */
  policies?: string[];
  /** Default shield mode. Default `token` (`prompt` with an upstream). */
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
  /** Requests answered at once. Default: the engine's sequences (local) or 4 (upstream). */
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

export interface RunningServer {
  url: string;
  /** Stops accepting requests, finishes those in flight, flushes the recorder, frees the model. */
  close(): Promise<void>;
}

interface PolicyEntry {
  policy: Policy;
  evaluator: Evaluator;
  grounder: Grounder;
}

const domainsDirectory = fileURLToPath(new URL("../../../policies/", import.meta.url));

/** A policy id (a domain shipped with mentor) or a path → the policy file. */
export function policyFile(idOrPath: string): string {
  if (/[/\\]|\.ya?ml$/.test(idOrPath)) return idOrPath;
  const file = `${domainsDirectory}${idOrPath}/policy.yaml`;
  if (existsSync(file)) return file;
  const known = existsSync(domainsDirectory)
    ? readdirSync(domainsDirectory).filter((name) => existsSync(`${domainsDirectory}${name}/policy.yaml`))
    : [];
  throw new MentorError(
    "MNT_ERR_POLICY_UNKNOWN",
    `no policy ${JSON.stringify(idOrPath)}; shipped policies: ${known.join(", ") || "none"} (or give a path)`,
  );
}

/**
 * Starts the OpenAI-compatible server: listens first (so `/health` can say 503 while loading),
 * then loads the model, and resolves once requests can be answered.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const defaultMode: ShieldMode = options.shield ?? (options.upstream ? "prompt" : "token");
  if (options.upstream && defaultMode === "token")
    throw new MentorError(
      "MNT_ERR_TOKEN_SHIELD_UNAVAILABLE",
      "the token shield needs the local engine; with --upstream use --shield prompt (or none)",
    );
  const policies = new Map<string, PolicyEntry>();
  const policyIds = options.policies ?? ["travel"];
  for (const id of policyIds) {
    const policy = loadPolicy(policyFile(id));
    const entry = {
      policy,
      evaluator: new Evaluator(policy),
      grounder: givenGrounding as Grounder,
    };
    policies.set(policy.name, entry);
    policies.set(id, entry);
  }
  const defaultPolicy = policyIds[0] !== undefined ? policies.get(policyIds[0]) : undefined;
  const metrics = new Metrics();
  const recorder = options.recorderDirectory ? new FlightRecorder(options.recorderDirectory) : undefined;
  const apiKeys = new Set(options.apiKeys ?? []);
  const cors = options.cors ?? "*";
  const requestTimeoutMs = options.requestTimeoutMs ?? 300_000;
  const state: { generator?: TurnGenerator; modelId: string; admission?: Admission; gpu?: string } = {
    modelId: options.modelId ?? "",
  };
  // Z3 for argument repairs that candidate values cannot make, started on first need.
  let solver: SolverClient | undefined;
  const repairSolver = (): SolverClient => {
    solver ??= new SolverClient();
    return solver;
  };

  const app = Fastify({
    logger: options.logger ?? { level: "info" },
    bodyLimit: options.bodyLimit ?? 4 * 1024 * 1024,
    forceCloseConnections: "idle",
  });
  metrics.gauge("mentor_queue_depth", () => state.admission?.depth ?? 0);
  metrics.gauge("mentor_requests_running", () => state.admission?.active ?? 0);

  app.addHook("onRequest", async (request, reply) => {
    if (cors !== false) {
      reply.header("access-control-allow-origin", cors);
      reply.header("access-control-expose-headers", "retry-after, x-should-retry");
    }
    if (request.method === "OPTIONS" || request.url === "/health" || apiKeys.size === 0) return;
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? "")?.[1];
    const key = bearer ?? request.headers["x-api-key"];
    if (typeof key !== "string" || !apiKeys.has(key))
      throw new MentorError("MNT_ERR_UNAUTHORIZED", "a valid API key is required");
  });
  app.addHook("onResponse", async (request, reply) => {
    metrics.increment("mentor_requests_total", {
      route: request.routeOptions.url ?? "unknown",
      status: String(reply.statusCode),
    });
  });
  app.setErrorHandler((error, request, reply) => {
    const { status, body } = errorResponse(error);
    if (status >= 500) request.log.error({ err: error }, "request failed");
    if (status === 429) reply.header("retry-after", "1");
    if (status >= 400 && status < 500 && status !== 408 && status !== 429)
      reply.header("x-should-retry", "false");
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(
        errorBody(`no route ${request.method} ${request.url}`, "invalid_request_error", null, "not_found"),
      );
  });
  app.options("*", async (request, reply) => {
    reply.header("access-control-allow-methods", "GET, POST, OPTIONS");
    reply.header(
      "access-control-allow-headers",
      request.headers["access-control-request-headers"] ?? "authorization, content-type, x-api-key",
    );
    reply.header("access-control-max-age", "600");
    return reply.code(204).send();
  });

  app.get("/health", async (_request, reply) => {
    if (!state.generator) return reply.code(503).send({ status: "loading" });
    return { status: "ok", model: state.modelId, ...(state.gpu !== undefined ? { gpu: state.gpu } : {}) };
  });
  app.get("/metrics", async (_request, reply) => {
    return reply.type("text/plain; version=0.0.4").send(metrics.render());
  });
  /** The served model, and the model with each shield mode as an id (`qwen2.5-coder-1.5b-instruct:token`). */
  function modelEntries(): { id: string; object: "model"; created: number; owned_by: string }[] {
    if (!state.generator) throw new MentorError("MNT_ERR_NOT_READY", "the model is still loading");
    const modes: ShieldMode[] = state.generator.tokenShield
      ? ["none", "prompt", "token"]
      : ["none", "prompt"];
    const created = Math.floor(startedAt / 1000);
    return [state.modelId, ...modes.map((mode) => `${state.modelId}:${mode}`)].map((id) => ({
      id,
      object: "model",
      created,
      owned_by: "mentor",
    }));
  }

  app.get("/v1/models", async () => ({ object: "list", data: modelEntries() }));

  app.get<{ Params: { id: string } }>("/v1/models/:id", async (request) => {
    const entry = modelEntries().find((model) => model.id === request.params.id);
    if (!entry)
      throw new RequestError(
        "model",
        `this server serves ${state.modelId} (see GET /v1/models), not ${JSON.stringify(request.params.id)}`,
        "MNT_ERR_MODEL_UNKNOWN",
      );
    return entry;
  });

  app.post("/v1/chat/completions", async (request, reply) => {
    const { generator, admission } = state;
    if (!generator || !admission) throw new MentorError("MNT_ERR_NOT_READY", "the model is still loading");
    const started = performance.now();
    const id = `chatcmpl-${randomBytes(12).toString("base64url")}`;
    const flight: Record<string, unknown> = {
      time: new Date().toISOString(),
      id,
      digest: createHash("sha256")
        .update(JSON.stringify(request.body ?? null))
        .digest("hex"),
    };
    const controller = new AbortController();
    const onClose = (): void => {
      if (!reply.raw.writableFinished)
        controller.abort(new MentorError("MNT_ERR_CANCELLED", "the client closed the connection"));
    };
    reply.raw.on("close", onClose);
    const timer = setTimeout(
      () => controller.abort(new MentorError("MNT_ERR_TIMEOUT", `no answer within ${requestTimeoutMs} ms`)),
      requestTimeoutMs,
    );
    let release: (() => void) | undefined;
    let stream: EventStream | undefined;
    try {
      const chat = readChatRequest(request.body);
      const mode = chat.mode ?? defaultMode;
      const entry = selectPolicy(chat);
      Object.assign(flight, {
        model: chat.model,
        mode,
        policy: entry?.policy.name ?? null,
        stream: chat.stream,
      });
      if (mode === "token" && !generator.tokenShield)
        throw new RequestError(
          chat.modeParam ?? null,
          "the token shield needs the local engine; this server forwards to an upstream endpoint (use prompt)",
          "MNT_ERR_TOKEN_SHIELD_UNAVAILABLE",
        );
      if (entry) checkToolsAgainstPolicy(chat.tools, entry.policy);
      release = await admission.enter(controller.signal);
      if (chat.stream)
        stream = new EventStream(reply, { id, model: chat.model, includeUsage: chat.includeUsage });
      const result = await runTurn({
        messages: options.trustClientGrounding ? chat.messages : withoutClientGrounding(chat.messages),
        tools: chat.tools,
        ...(chat.toolChoice !== undefined ? { toolChoice: chat.toolChoice } : {}),
        parallelToolCalls: chat.parallelToolCalls,
        mode,
        eta: chat.eta ?? options.eta,
        ...(chat.intent !== undefined ? { intent: chat.intent } : {}),
        ...(options.strictGrounding ? { strictGrounding: true } : {}),
        solver: repairSolver,
        ...(entry ? { evaluator: entry.evaluator } : {}),
        grounder: entry?.grounder ?? givenGrounding,
        generator,
        seed: chat.seed,
        temperature: chat.temperature,
        topP: chat.topP,
        maxTokens: chat.maxTokens,
        stop: chat.stop,
        signal: controller.signal,
        maxRegenerations: options.maxRegenerations,
      });
      count(result, mode);
      Object.assign(flight, {
        status: 200,
        returned: { message: result.message, finish_reason: result.finishReason },
        usage: result.usage,
        mentor: result.mentor,
      });
      request.log.info(
        {
          mode,
          policy: entry?.policy.name,
          attempts: result.mentor.attempts.length,
          blocked: result.mentor.blocked,
          finish: result.finishReason,
        },
        "turn",
      );
      if (stream) {
        stream.finish(result);
        return reply;
      }
      return completionBody(id, chat.model, result);
    } catch (caught) {
      // An abort surfaces as a cancelled generation: report why it was aborted.
      const reason = controller.signal.reason;
      const error = controller.signal.aborted && reason instanceof MentorError ? reason : caught;
      const { status, body } = errorResponse(error);
      Object.assign(flight, { status, error: body.error });
      if (stream) {
        stream.fail(body);
        return reply;
      }
      throw error;
    } finally {
      clearTimeout(timer);
      reply.raw.off("close", onClose);
      release?.();
      // A streamed reply is hijacked from fastify, whose onResponse hook then does not run.
      if (stream)
        metrics.increment("mentor_requests_total", {
          route: "/v1/chat/completions",
          status: String(flight.status),
        });
      flight.ms = performance.now() - started;
      recorder?.write(flight);
    }
  });

  function selectPolicy(chat: ChatRequest): PolicyEntry | undefined {
    if (chat.modelBase !== state.modelId && chat.model !== state.modelId)
      throw new RequestError(
        "model",
        `this server serves ${state.modelId} (see GET /v1/models)`,
        "MNT_ERR_MODEL_UNKNOWN",
      );
    if (chat.policy === undefined) return defaultPolicy;
    const entry = policies.get(chat.policy);
    if (!entry)
      throw new RequestError(
        "mentor.policy",
        `no policy ${JSON.stringify(chat.policy)}; this server loaded ${[...new Set([...policies.values()].map((known) => known.policy.name))].join(", ") || "none"}`,
        "MNT_ERR_POLICY_UNKNOWN",
      );
    return entry;
  }

  function count(result: TurnResult, mode: ShieldMode): void {
    metrics.increment("mentor_prompt_tokens_total", {}, result.usage.promptTokens);
    metrics.increment("mentor_completion_tokens_total", {}, result.usage.completionTokens);
    for (const attempt of result.mentor.attempts) {
      metrics.increment("mentor_calls_proposed_total", { mode }, attempt.calls.length);
      metrics.observe("mentor_decision_seconds", attempt.decideMs / 1000);
    }
    metrics.increment("mentor_calls_blocked_total", { mode }, result.mentor.blocked);
    metrics.increment("mentor_calls_repaired_total", { mode }, result.mentor.repairs.length);
    metrics.increment("mentor_done_refusals_total", { mode }, result.mentor.doneRefusals);
    if (result.mentor.exhausted) metrics.increment("mentor_turns_exhausted_total", { mode });
    metrics.observe("mentor_turn_seconds", result.mentor.timings.totalMs / 1000);
  }

  const startedAt = Date.now();
  const address = await app.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 8080 });
  const url = address.replace("[::1]", "localhost");
  options.onListening?.(url);
  let ownedEngine: Engine | undefined;
  let localLabelModel: LocalLabelModel | undefined;
  /** Set once the model is there (requests are refused until then). */
  const groundWith = (labelModel: LabelModel | undefined): void => {
    for (const entry of new Set(policies.values()))
      entry.grounder =
        options.grounder?.(entry.policy) ??
        new Labeler(entry.policy, labelModel !== undefined ? { model: labelModel } : {});
  };
  const endpointLabelModel = (endpoint: { url: string; model: string; apiKey?: string }): LabelModel =>
    new OpenAILabelModel({
      url: apiBase(endpoint.url),
      model: endpoint.model,
      ...(endpoint.apiKey !== undefined ? { key: endpoint.apiKey } : {}),
    });
  const labeler = options.labeler ?? "model";
  try {
    if (options.upstream) {
      const model =
        options.upstream.model ?? (await upstreamModel(options.upstream.url, options.upstream.apiKey));
      state.generator = new UpstreamGenerator({
        url: options.upstream.url,
        model,
        ...(options.upstream.apiKey !== undefined ? { apiKey: options.upstream.apiKey } : {}),
      });
      state.modelId = options.modelId ?? model;
      groundWith(
        labeler === "rules"
          ? undefined
          : endpointLabelModel(
              labeler === "model"
                ? {
                    url: options.upstream.url,
                    model,
                    ...(options.upstream.apiKey !== undefined ? { apiKey: options.upstream.apiKey } : {}),
                  }
                : labeler,
            ),
      );
      state.admission = new Admission(options.concurrency ?? 4, options.maxQueue ?? 16);
    } else {
      let engine = options.engine;
      const model = options.model ?? loadRegistry().default;
      if (!engine) {
        const modelPath = await resolveModel(model, { pull: options.pull ?? true });
        const { Engine } = await import("../llm/index.js");
        engine = await Engine.load({
          modelPath,
          contextSize: options.contextSize ?? 4096,
          sequences: options.sequences ?? 2,
          threads: options.threads ?? defaultThreads(),
          ...(options.gpu !== undefined ? { gpu: options.gpu } : {}),
        });
        ownedEngine = engine;
      }
      state.gpu = gpuName(engine.gpu);
      state.modelId = options.modelId ?? (options.engine ? "local" : modelIdOf(model));
      if (labeler === "model") {
        const { LocalLabelModel } = await import("../llm/index.js");
        localLabelModel = await LocalLabelModel.create(engine.model);
      }
      groundWith(typeof labeler === "object" ? endpointLabelModel(labeler) : localLabelModel);
      state.admission = new Admission(options.concurrency ?? engine.sequences, options.maxQueue ?? 16);
      state.generator = new EngineGenerator(engine);
    }
  } catch (error) {
    await app.close();
    recorder?.close();
    await localLabelModel?.dispose();
    throw error;
  }
  app.log.info(
    {
      url,
      model: state.modelId,
      ...(state.gpu !== undefined ? { gpu: state.gpu } : {}),
      shield: defaultMode,
      policies: [...policies.keys()],
    },
    "mentor ready",
  );
  return {
    url,
    async close() {
      await app.close();
      recorder?.close();
      await solver?.close();
      await localLabelModel?.dispose();
      await ownedEngine?.dispose();
    },
  };
}

/** The id a model is served under: its registry name, or its file name without `.gguf`. */
function modelIdOf(model: string): string {
  try {
    if (parseModelSpec(model, loadRegistry()).kind !== "path") return model;
  } catch {
    // Not a registry name: a path.
  }
  return basename(model).replace(/\.gguf$/i, "");
}

async function upstreamModel(url: string, apiKey: string | undefined): Promise<string> {
  const endpoint = `${apiBase(url)}/models`;
  try {
    const response = await fetch(
      endpoint,
      apiKey !== undefined ? { headers: { authorization: `Bearer ${apiKey}` } } : {},
    );
    const listing = (await response.json()) as { data?: { id?: string }[] };
    const id = listing.data?.[0]?.id;
    if (!response.ok || typeof id !== "string")
      throw new Error(`answered ${response.status} without a model`);
    return id;
  } catch (error) {
    throw new MentorError(
      "MNT_ERR_UPSTREAM",
      `cannot list the models of ${endpoint} (${(error as Error).message}); name the upstream model with --model`,
    );
  }
}

function completionBody(id: string, model: string, result: TurnResult): Record<string, unknown> {
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: { ...result.message, refusal: null },
        logprobs: null,
        finish_reason: result.finishReason,
      },
    ],
    usage: usageBody(result),
    mentor: result.mentor,
  };
}

function usageBody(result: TurnResult): Record<string, number> {
  return {
    prompt_tokens: result.usage.promptTokens,
    completion_tokens: result.usage.completionTokens,
    total_tokens: result.usage.promptTokens + result.usage.completionTokens,
  };
}

/**
 * A streamed answer (server-sent events). The role chunk goes out at once and a comment every
 * 10 s keeps the connection alive; content and tool calls follow once the shield has decided
 * (a call is never shown before its verdict): content in fragments, each call as one opening
 * chunk (index, id, type, name, empty arguments) and argument fragments, then the finish chunk
 * (with the `mentor` record), the usage chunk if asked, and `[DONE]`.
 */
class EventStream {
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly reply: FastifyReply,
    private readonly options: { id: string; model: string; includeUsage: boolean },
  ) {
    reply.hijack();
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    this.send(this.chunk({ role: "assistant", content: "" }));
    this.keepAlive = setInterval(() => reply.raw.write(": keep-alive\n\n"), 10_000);
  }

  finish(result: TurnResult): void {
    const { content, tool_calls: calls } = result.message;
    for (const piece of fragments(content ?? "", 24)) this.send(this.chunk({ content: piece }));
    (calls ?? []).forEach((call, index) => {
      this.send(
        this.chunk({
          tool_calls: [
            { index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } },
          ],
        }),
      );
      for (const piece of fragments(call.function.arguments, 16))
        this.send(this.chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    this.send({ ...this.chunk({}, result.finishReason), mentor: result.mentor });
    if (this.options.includeUsage) this.send({ ...this.chunk({}), choices: [], usage: usageBody(result) });
    this.end();
  }

  /** An error after the stream started: an `error` event (clients raise it), then the end. */
  fail(body: { error: Record<string, unknown> }): void {
    if (!this.reply.raw.destroyed) this.send(body);
    this.end();
  }

  private end(): void {
    clearInterval(this.keepAlive);
    if (this.reply.raw.destroyed) return;
    this.reply.raw.write("data: [DONE]\n\n");
    this.reply.raw.end();
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
    return {
      id: this.options.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.options.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.options.includeUsage ? { usage: null } : {}),
    };
  }

  private send(data: unknown): void {
    if (!this.reply.raw.destroyed) this.reply.raw.write(`data: ${JSON.stringify(data)}\n\n`);
  }
}

/** The text in pieces of at most `size` characters (whole code points). */
function fragments(text: string, size: number): string[] {
  const characters = [...text];
  const pieces: string[] = [];
  for (let start = 0; start < characters.length; start += size)
    pieces.push(characters.slice(start, start + size).join(""));
  return pieces;
}

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function errorBody(message: string, type: string, param: string | null, code: string | null): ErrorBody {
  return { error: { message, type, param, code } };
}

/** Any error → status and OpenAI's error shape; internal errors do not leak their text. */
export function errorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof MentorError) {
    // The evaluator's message errors begin with the field (`messages[0].mentor.task[0].name …`).
    const named =
      error.code === "MNT_ERR_MESSAGES" ? /^messages(\[\d+\]|\.[\w]+)*/.exec(error.message) : null;
    const param = error instanceof RequestError ? error.param : (named?.[0] ?? null);
    return {
      status: error.status,
      body: errorBody(error.message, errorType(error.status), param, error.code),
    };
  }
  const framework = error as { statusCode?: number; code?: string; message?: string };
  if (typeof framework.statusCode === "number" && framework.statusCode >= 400 && framework.statusCode < 500)
    return {
      status: framework.statusCode,
      body: errorBody(
        framework.message ?? "bad request",
        errorType(framework.statusCode),
        framework.statusCode === 413 || framework.code?.includes("JSON") ? "body" : null,
        framework.code ?? null,
      ),
    };
  return { status: 500, body: errorBody("internal server error", "server_error", null, "internal_error") };
}

function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** The messages without the grounding fields a client may write (`mentor.task`, `mentor.label`). */
function withoutClientGrounding(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => {
    if (typeof message.mentor !== "object" || message.mentor === null) return message;
    const { task: _task, label: _label, ...rest } = message.mentor as Record<string, unknown>;
    const { mentor: _mentor, ...copy } = message;
    return Object.keys(rest).length > 0 ? { ...copy, mentor: rest } : copy;
  });
}
