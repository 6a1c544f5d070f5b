import type { FastifyPluginAsync } from "fastify";
import type { ShieldMode } from "../../agent/index.js";
import { MentorError } from "../../errors/index.js";
import type { ServerContext } from "../context.js";
import { RequestError } from "../request.js";

interface ModelEntry {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
}

/** The served model, and the model with each shield mode as an id (`qwen2.5-coder-1.5b-instruct:token`). */
export function modelEntries(context: ServerContext): ModelEntry[] {
  const serving = context.serving;
  if (!serving) throw new MentorError("MNT_ERR_NOT_READY", "the model is still loading");
  const { modelId, generator } = serving.backend;
  const modes: ShieldMode[] = generator.tokenShield ? ["none", "prompt", "token"] : ["none", "prompt"];
  const created = Math.floor(context.startedAt / 1000);
  return [modelId, ...modes.map((mode) => `${modelId}:${mode}`)].map((id) => ({
    id,
    object: "model",
    created,
    owned_by: "mentor",
  }));
}

/** `GET /v1/models` and `GET /v1/models/:id`. */
export const modelRoutes: FastifyPluginAsync<{ context: ServerContext }> = async (app, { context }) => {
  app.get("/v1/models", async () => ({ object: "list", data: modelEntries(context) }));
  app.get<{ Params: { id: string } }>("/v1/models/:id", async (request) => {
    const entry = modelEntries(context).find((model) => model.id === request.params.id);
    if (!entry)
      throw new RequestError(
        "model",
        `this server serves ${context.serving?.backend.modelId} (see GET /v1/models), not ${JSON.stringify(request.params.id)}`,
        "MNT_ERR_MODEL_UNKNOWN",
      );
    return entry;
  });
};
