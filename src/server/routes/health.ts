import type { FastifyPluginAsync } from "fastify";
import type { ServerContext } from "../context.js";

/**
 * `GET /health` (503 while the model loads, and while a required flight recorder fails) and
 * `GET /metrics` (Prometheus).
 */
export const healthRoutes: FastifyPluginAsync<{ context: ServerContext }> = async (app, { context }) => {
  app.get("/health", async (_request, reply) => {
    const serving = context.serving;
    if (!serving) return reply.code(503).send({ status: "loading" });
    const { modelId, gpu } = serving.backend;
    const recorder = context.recorder?.health();
    // A failing recorder degrades the server; one it requires takes it out of service.
    if (recorder?.failing && context.settings.recorderRequired) reply.code(503);
    return {
      status: recorder?.failing ? "degraded" : "ok",
      model: modelId,
      ...(gpu !== undefined ? { gpu } : {}),
      ...(recorder ? { recorder } : {}),
    };
  });
  app.get("/metrics", async (_request, reply) => {
    const { registry } = context.metrics;
    return reply.type(registry.contentType).send(await registry.metrics());
  });
};
