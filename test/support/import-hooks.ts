// Module hooks for `module.register` (Node 20): every URL the ES module loader loads is appended to
// the file given in `data.log`, for tests that check what an entry point loads.
import { appendFileSync } from "node:fs";

let log = "";

export function initialize(data: { log: string }): void {
  log = data.log;
}

export async function load(
  url: string,
  context: object,
  nextLoad: (url: string, context: object) => Promise<unknown>,
): Promise<unknown> {
  appendFileSync(log, `${url}\n`);
  return nextLoad(url, context);
}
