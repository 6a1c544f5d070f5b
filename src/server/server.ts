import { MentorError } from "../errors/index.js";
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
  let address: string;
  try {
    address = await app.listen({ host: settings.host, port: settings.port });
  } catch (error) {
    await app.close();
    throw listenError(error, settings);
  }
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

/** Why the server could not open its port, in one line with the host and port. */
function listenError(error: unknown, settings: { host: string; port: number }): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code !== "string") return error;
  const reasons: Record<string, string> = {
    EADDRINUSE: "the port is in use (another server, or another mentor, listens there)",
    EADDRNOTAVAIL: "the host is not an address of this machine",
    EACCES: "permission denied (ports below 1024 need privileges)",
    ENOTFOUND: "the host is neither an IP address nor a name that resolves",
    EAI_AGAIN: "the host's name did not resolve (DNS is unreachable)",
  };
  const reason = reasons[code] ?? (error as Error).message;
  return new MentorError(
    "MNT_ERR_LISTEN",
    `cannot listen on ${settings.host}:${settings.port}: ${reason} (${code})`,
  );
}
