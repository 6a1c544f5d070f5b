import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/**
 * The directory that holds pulled models: `MENTOR_MODELS_DIR` if set, else `mentor/models` in
 * the user's cache directory (`XDG_CACHE_HOME`, default `~/.cache`; `%LOCALAPPDATA%` on Windows).
 */
export function modelsDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  const configured = environment.MENTOR_MODELS_DIR;
  if (configured) return resolve(configured);
  const xdg = environment.XDG_CACHE_HOME;
  let cacheHome: string;
  if (xdg && isAbsolute(xdg)) cacheHome = xdg;
  else if (process.platform === "win32" && environment.LOCALAPPDATA) cacheHome = environment.LOCALAPPDATA;
  else cacheHome = join(homedir(), ".cache");
  return join(cacheHome, "mentor", "models");
}

/** What mentor recorded after checking a file in the cache (`<file>.mentor.json`). */
export interface CacheRecord {
  size: number;
  sha256: string;
  /** Modification time when checked: a changed file is checked again. */
  mtimeMs: number;
  /** The source that delivered the file, if mentor fetched it. */
  source?: string;
  checkedAt: string;
}

export function recordPath(filePath: string): string {
  return `${filePath}.mentor.json`;
}

export async function readCacheRecord(filePath: string): Promise<CacheRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(recordPath(filePath), "utf8")) as CacheRecord;
    const info = await stat(filePath);
    if (record.size !== info.size || record.mtimeMs !== info.mtimeMs) return undefined;
    return record;
  } catch {
    return undefined;
  }
}

export async function writeCacheRecord(
  filePath: string,
  sha256: string,
  source?: string,
): Promise<CacheRecord> {
  const info = await stat(filePath);
  const record: CacheRecord = {
    size: info.size,
    sha256,
    mtimeMs: info.mtimeMs,
    ...(source !== undefined ? { source } : {}),
    checkedAt: new Date().toISOString(),
  };
  await writeFile(recordPath(filePath), `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

/** Lower-case hex SHA-256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
