import { basename } from "node:path";
import { apiBase, EngineGenerator, UpstreamGenerator } from "../agent/index.js";
import { defaultContextSize, defaultSequences } from "../base/defaults.js";
import { MentorError } from "../errors/index.js";
import { Labeler, type LabelModel, OpenAILabelModel } from "../labeler/index.js";
import { defaultThreads, gpuName } from "../llm/gpu.js";
import type { Engine } from "../llm/index.js";
import { loadRegistry, parseModelSpec, resolveModel } from "../models/index.js";
import { createOpenAIClient, requestFailure } from "../openai/index.js";
import type { Policy } from "../policy/index.js";
import type { Backend } from "./context.js";
import type { ServerSettings } from "./options.js";

/**
 * The backend the options describe: an upstream endpoint, or the local engine (the one given, or
 * the model loaded here, fetched first when it is a registry model not cached yet). The native
 * library is imported only for the local engine.
 */
export async function loadBackend(settings: ServerSettings): Promise<Backend> {
  return settings.upstream ? upstreamBackend(settings, settings.upstream) : localBackend(settings);
}

async function upstreamBackend(
  settings: ServerSettings,
  upstream: NonNullable<ServerSettings["upstream"]>,
): Promise<Backend> {
  const model = upstream.model ?? (await upstreamModel(upstream.url, upstream.apiKey));
  const key = upstream.apiKey !== undefined ? { apiKey: upstream.apiKey } : {};
  const labeler = settings.labeler;
  const labelModel =
    labeler === "rules"
      ? undefined
      : endpointLabelModel(labeler === "model" ? { url: upstream.url, model, ...key } : labeler);
  return {
    generator: new UpstreamGenerator({
      url: upstream.url,
      model,
      ...key,
      ...(upstream.grammar !== undefined ? { grammar: upstream.grammar } : {}),
    }),
    modelId: settings.modelId ?? model,
    concurrency: 4,
    grounder: grounderWith(settings, labelModel),
    close: async () => {},
  };
}

async function localBackend(settings: ServerSettings): Promise<Backend> {
  const model = settings.model ?? loadRegistry().default;
  let engine: Engine | undefined = settings.engine as Engine | undefined;
  let owned: Engine | undefined;
  if (!engine) {
    const modelPath = await resolveModel(model, { pull: settings.pull ?? true });
    const { Engine } = await import("../llm/index.js");
    engine = owned = await Engine.load({
      modelPath,
      contextSize: settings.contextSize ?? defaultContextSize,
      sequences: settings.sequences ?? defaultSequences,
      threads: settings.threads ?? defaultThreads(),
      ...(settings.gpu !== undefined ? { gpu: settings.gpu } : {}),
    });
  }
  try {
    const labeler = settings.labeler;
    let labelModel: LabelModel | undefined;
    let disposeLabelModel = async (): Promise<void> => {};
    if (labeler === "model") {
      const { LocalLabelModel } = await import("../llm/index.js");
      const local = await LocalLabelModel.create(engine.model);
      labelModel = local;
      disposeLabelModel = () => local.dispose();
    } else if (typeof labeler === "object") labelModel = endpointLabelModel(labeler);
    return {
      generator: new EngineGenerator(engine),
      modelId: settings.modelId ?? (settings.engine ? "local" : modelIdOf(model)),
      concurrency: engine.sequences,
      gpu: gpuName(engine.gpu),
      grounder: grounderWith(settings, labelModel),
      async close() {
        await disposeLabelModel();
        await owned?.dispose();
      },
    };
  } catch (error) {
    await owned?.dispose();
    throw error;
  }
}

function grounderWith(settings: ServerSettings, model: LabelModel | undefined) {
  return (policy: Policy) =>
    settings.grounder?.(policy) ?? new Labeler(policy, model !== undefined ? { model } : {});
}

function endpointLabelModel(endpoint: { url: string; model: string; apiKey?: string }): LabelModel {
  return new OpenAILabelModel({
    url: apiBase(endpoint.url),
    model: endpoint.model,
    ...(endpoint.apiKey !== undefined ? { key: endpoint.apiKey } : {}),
  });
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
  const baseURL = apiBase(url);
  const client = createOpenAIClient({
    baseURL,
    ...(apiKey !== undefined ? { apiKey } : {}),
    timeoutMs: 30_000,
    maxRetries: 0,
  });
  let id: unknown;
  try {
    const page = await client.models.list();
    id = page.data[0]?.id;
  } catch (error) {
    const failure = requestFailure(error);
    throw new MentorError(
      "MNT_ERR_UPSTREAM",
      `cannot list the models of ${baseURL}/models (${"detail" in failure ? failure.detail : failure.kind}); name the upstream model with --model`,
    );
  }
  if (typeof id !== "string")
    throw new MentorError(
      "MNT_ERR_UPSTREAM",
      `${baseURL}/models lists no model; name the upstream model with --model`,
    );
  return id;
}
