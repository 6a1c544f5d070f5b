import { buildServer } from "./app.js";
import { loadBackend } from "./backend.js";
import type { Backend } from "./context.js";
import type { ServerOptions } from "./options.js";

export interface RunningServer {
  url: string;
  /** Stops accepting requests, finishes those in flight, flushes the recorder, frees the model. */
  close(): Promise<void>;
}

/**
 * Starts the OpenAI-compatible server: listens first (so `/health` can say 503 while loading),
 * then loads the model, and resolves once requests can be answered.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const app = await buildServer(options);
  const { settings } = app.mentor;
  const address = await app.listen({ host: settings.host, port: settings.port });
  const url = address.replace("[::1]", "localhost");
  settings.onListening?.(url);
  let backend: Backend | undefined;
  try {
    if (!settings.generator) {
      backend = await loadBackend(settings);
      app.mentor.serve(backend);
    }
  } catch (error) {
    await app.close();
    throw error;
  }
  app.log.info(
    {
      url,
      model: backend?.modelId ?? settings.modelId ?? "local",
      ...(backend?.gpu !== undefined ? { gpu: backend.gpu } : {}),
      shield: settings.shield,
      policies: settings.policies,
    },
    "mentor ready",
  );
  return { url, close: () => app.close() };
}
