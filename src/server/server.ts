import type { FastifyInstance } from "fastify";
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
  const address = await listen(app, settings.host, settings.port);
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

/**
 * `app.listen`; when the port cannot be opened (in use, a host that is no address of this machine)
 * the app is closed and the error is MNT_ERR_LISTEN, one line naming the host, port and reason.
 */
export async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (error) {
    await app.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== "string") throw error;
    const reason = listenFailures[code] ?? (error as Error).message;
    throw new MentorError("MNT_ERR_LISTEN", `cannot listen on ${host}:${port}: ${reason} (${code})`);
  }
}

const listenFailures: Record<string, string> = {
  EADDRINUSE: "the port is in use (another server, or another mentor, listens there)",
  EADDRNOTAVAIL: "the host is not an address of this machine",
  EACCES: "permission denied (ports below 1024 need privileges)",
  ENOTFOUND: "the host is neither an IP address nor a name that resolves",
  EAI_AGAIN: "the host's name did not resolve (DNS is unreachable)",
};
