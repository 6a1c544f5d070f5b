import cors from "@fastify/cors";
import Fastify, { type FastifyInstance } from "fastify";
import { dashboardKey, dashboardRoutes } from "../dashboard/index.js";
import { MentorError } from "../errors/index.js";
import { FlightRecorder } from "../evaluator/index.js";
import { type Grounder, Labeler } from "../labeler/index.js";
import type { Policy } from "../policy/index.js";
import { SolverClient } from "../smt/index.js";
import { Admission } from "./admission.js";
import type { Backend, ServerContext } from "./context.js";
import { maxParamLength, replyToClientError, replyWithError } from "./errors.js";
import { Metrics } from "./metrics.js";
import { type ServerOptions, type ServerSettings, serverSettings } from "./options.js";
import { PolicySet } from "./policies.js";
import { checkBodyDepth } from "./request.js";
import { chatRoutes } from "./routes/chat.js";
import { healthRoutes } from "./routes/health.js";
import { modelRoutes } from "./routes/models.js";
import { monitorRoutes } from "./routes/monitor.js";

/** What `buildServer` adds to the fastify instance (`app.mentor`). */
export interface ServerControl {
  readonly settings: ServerSettings;
  /** Starts answering requests with this backend (until then they get 503 `MNT_ERR_NOT_READY`). */
  serve(backend: Backend): void;
}

declare module "fastify" {
  interface FastifyInstance {
    mentor: ServerControl;
  }
}

/**
 * The OpenAI-compatible server as a fastify instance, not listening: its policies loaded, its
 * routes registered, one error handler. With `options.generator` it answers at once; otherwise
 * the caller loads a model and hands it to `app.mentor.serve` (`startServer` does both). Closing
 * the instance closes the recorder, the solver and the backend.
 */
export async function buildServer(options: ServerOptions = {}): Promise<FastifyInstance> {
  const settings = serverSettings(options);
  let solver: SolverClient | undefined;
  const context: ServerContext = {
    settings,
    policies: new PolicySet(
      settings.policies,
      settings.searchMs !== undefined ? { search: { maxMs: settings.searchMs } } : {},
    ),
    metrics: new Metrics(() => ({
      waiting: context.serving?.admission.waiting ?? 0,
      running: context.serving?.admission.running ?? 0,
    })),
    recorder:
      settings.recorderDirectory !== undefined
        ? new FlightRecorder(settings.recorderDirectory, {
            fsync: settings.recorderFsync ?? false,
            ...(settings.recorderFileSystem ? { fileSystem: settings.recorderFileSystem } : {}),
          })
        : undefined,
    startedAt: Date.now(),
    serving: undefined,
    solver: () => {
      solver ??= new SolverClient();
      return solver;
    },
  };

  const app = Fastify({
    logger: settings.logger,
    bodyLimit: settings.bodyLimit,
    routerOptions: { maxParamLength },
    forceCloseConnections: "idle",
    // Fastify's answers to a bad URL, and Node's to a request it cannot read, in mentor's shape.
    frameworkErrors: replyWithError,
    clientErrorHandler: replyToClientError,
  });
  // JSON only: fastify also reads text/plain, and would hand a JSON body sent as text on as a string.
  app.removeContentTypeParser("text/plain");
  if (settings.cors !== false)
    await app.register(cors, {
      origin: settings.cors,
      methods: ["GET", "POST", "OPTIONS"],
      exposedHeaders: ["retry-after", "x-should-retry"],
      maxAge: 600,
    });
  const apiKeys = new Set(settings.apiKeys);
  app.addHook("onRequest", async (request) => {
    if (request.method === "OPTIONS" || request.url === "/health" || apiKeys.size === 0) return;
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? "")?.[1];
    const key = bearer ?? request.headers["x-api-key"] ?? dashboardKey(request);
    if (typeof key !== "string" || !apiKeys.has(key))
      throw new MentorError("MNT_ERR_UNAUTHORIZED", "a valid API key is required");
  });
  app.addHook("preValidation", async (request) => checkBodyDepth(request.body));
  app.addHook("onResponse", async (request, reply) => {
    context.metrics.request(request.routeOptions.url ?? "unknown", reply.statusCode);
  });
  app.setErrorHandler(replyWithError);
  app.setNotFoundHandler((request, reply) =>
    replyWithError(
      new MentorError("MNT_ERR_NOT_FOUND", `no route ${request.method} ${request.url}`),
      request,
      reply,
    ),
  );
  await app.register(healthRoutes, { context });
  await app.register(modelRoutes, { context });
  await app.register(chatRoutes, { context });
  await app.register(monitorRoutes, { context });
  if (settings.dashboard)
    await app.register(dashboardRoutes, {
      prefix: "/dashboard",
      ...(settings.recorderDirectory !== undefined ? { recorderDirectory: settings.recorderDirectory } : {}),
      policies: context.policies.all,
      solver: context.solver,
    });

  app.decorate("mentor", {
    settings,
    serve(backend: Backend) {
      if (context.serving) throw new Error("the server already has a backend");
      const grounders = new WeakMap<Policy, Grounder>();
      context.serving = {
        backend,
        admission: new Admission(settings.concurrency ?? backend.concurrency, settings.maxQueue),
        grounderOf(policy) {
          const grounder = grounders.get(policy) ?? backend.grounder(policy);
          grounders.set(policy, grounder);
          return grounder;
        },
      };
    },
  } satisfies ServerControl);
  app.addHook("onClose", async () => {
    context.recorder?.close();
    await solver?.close();
    await context.serving?.backend.close();
  });

  if (settings.generator)
    app.mentor.serve({
      generator: settings.generator,
      modelId: settings.modelId ?? "local",
      concurrency: 4,
      grounder: (policy) => settings.grounder?.(policy) ?? new Labeler(policy),
      close: async () => {},
    });
  return app;
}
