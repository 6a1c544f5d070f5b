import { rename } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createModelDownloader } from "node-llama-cpp";

export interface DownloadOptions {
  /** An `hf:` URI (`hf:owner/repo/file.gguf`) or an http(s) URL. */
  uri: string;
  /** Where the file is written. */
  directory: string;
  /** The name it gets there. */
  fileName: string;
  /** How long to wait for the host to answer at all. */
  connectTimeoutMs: number;
  /** How long the download may go without a byte before it is cancelled. */
  stallTimeoutMs: number;
  /** Bytes so far; `totalBytes` is 0 while unknown. */
  onBytes?: (downloadedBytes: number, totalBytes: number) => void;
}

/**
 * Downloads one model file with node-llama-cpp's downloader (Hugging Face URIs, split GGUF files,
 * resumable transfers) and returns its path (`directory/fileName`). Kept in `src/llm/`, the only
 * folder that imports node-llama-cpp; `src/models/` loads it only when a pull needs it.
 */
export async function downloadModelFile(options: DownloadOptions): Promise<string> {
  const { uri, directory, fileName, stallTimeoutMs } = options;
  // node-llama-cpp's downloader retries an unreachable host for minutes: probe it first.
  await probeHost(uri.startsWith("hf:") ? huggingFaceEndpoint() : uri, options.connectTimeoutMs);
  const downloader = await withTimeout(
    createModelDownloader({
      modelUri: uri,
      dirPath: directory,
      fileName,
      showCliProgress: false,
      skipExisting: false,
      onProgress: (status) => options.onBytes?.(status.downloadedSize, status.totalSize),
    }),
    stallTimeoutMs,
    `no answer about ${uri} within ${stallTimeoutMs} ms`,
  );
  let lastBytes = -1;
  let lastChange = Date.now();
  let stalled = false;
  const watchdog = setInterval(() => {
    if (downloader.downloadedSize !== lastBytes) {
      lastBytes = downloader.downloadedSize;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallTimeoutMs) {
      stalled = true;
      void downloader.cancel({ deleteTempFile: true });
    }
  }, 1000);
  try {
    const path = await downloader.download();
    if (stalled) throw new Error("cancelled");
    if (resolve(path) !== resolve(directory, fileName)) await rename(path, join(directory, fileName));
    return join(directory, fileName);
  } catch (error) {
    if (stalled) throw new Error(`no bytes arrived for ${stallTimeoutMs} ms; download cancelled`);
    throw error;
  } finally {
    clearInterval(watchdog);
  }
}

function huggingFaceEndpoint(): string {
  return process.env.MODEL_ENDPOINT || process.env.HF_ENDPOINT || "https://huggingface.co/";
}

/** Fails fast when a host cannot be reached; any HTTP answer counts as reachable. */
async function probeHost(url: string, timeoutMs: number): Promise<void> {
  const host = new URL(url).host;
  try {
    const response = await fetch(url, {
      method: "HEAD",
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new Error(`cannot reach ${host}: ${detail}`);
  }
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
