/** Module hooks of `import-recorder.ts` (they run on node's loader thread). */
import { appendFileSync } from "node:fs";

let file: string | undefined;

export function initialize(data: { file: string }): void {
  file = data.file;
}

interface LoadResult {
  format?: string;
  source?: unknown;
  shortCircuit?: boolean;
}

export async function load(
  url: string,
  context: Record<string, unknown>,
  nextLoad: (url: string, context: Record<string, unknown>) => Promise<LoadResult>,
): Promise<LoadResult> {
  if (file !== undefined) appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}
