import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { modelsDirectory, readCacheRecord } from "./cache.js";
import { loadRegistry, type ModelEntry, type ModelRegistry } from "./registry.js";

export interface ListedModel {
  /** Registry name, or null for a file in the cache that no registry entry names. */
  name: string | null;
  file: string;
  entry: ModelEntry | null;
  /** Path in the cache when the file is there. */
  path: string | null;
  /** Bytes on disk, or the registry's size when not present. */
  size: number | null;
  /** `verified`: checked against the registry (or hashed, where the registry has no checksum). */
  status: "verified" | "unverified" | "absent";
}

export interface ListModelsOptions {
  directory?: string;
  registry?: ModelRegistry;
}

/** The registry's models with their cache status, then other `.gguf` files found in the cache. */
export async function listModels(options: ListModelsOptions = {}): Promise<ListedModel[]> {
  const registry = options.registry ?? loadRegistry();
  const directory = options.directory ?? modelsDirectory();
  let files: string[] = [];
  try {
    files = (await readdir(directory)).filter((file) => file.endsWith(".gguf"));
  } catch {
    files = [];
  }
  const listed: ListedModel[] = [];
  for (const entry of registry.models) {
    const path = join(directory, entry.file);
    if (!files.includes(entry.file)) {
      listed.push({
        name: entry.name,
        file: entry.file,
        entry,
        path: null,
        size: entry.size,
        status: "absent",
      });
      continue;
    }
    const record = await readCacheRecord(path);
    const verified =
      record !== undefined &&
      (entry.size === null || entry.size === record.size) &&
      (entry.sha256 === null || entry.sha256 === record.sha256);
    listed.push({
      name: entry.name,
      file: entry.file,
      entry,
      path,
      size: (await stat(path)).size,
      status: verified ? "verified" : "unverified",
    });
  }
  const known = new Set(registry.models.map((entry) => entry.file));
  for (const file of files.filter((name) => !known.has(name)).sort()) {
    const path = join(directory, file);
    const record = await readCacheRecord(path);
    listed.push({
      name: null,
      file,
      entry: null,
      path,
      size: (await stat(path)).size,
      status: record ? "verified" : "unverified",
    });
  }
  return listed;
}
