import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "../../bench/conformance/venv.js";

/** The Python client's pinned version (test/server/python/requirements.txt, which scripts/setup.sh reads too). */
export const pythonOpenAIVersion = /^openai==(\S+)$/m.exec(
  readFileSync(
    fileURLToPath(new URL("../../../test/server/python/requirements.txt", import.meta.url)),
    "utf8",
  ),
)?.[1] as string;

/**
 * The python of the cached venv with the pinned `openai` package (`npm run setup` makes it; made
 * here from PyPI where it is missing). Throws, naming `npm run setup`, where it cannot be made.
 */
export function pythonWithOpenAI(): string {
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  const dir = join(cache, "mentor", "venvs", `openai-${pythonOpenAIVersion}`);
  return ensureVenv(dir, process.env.MENTOR_PYTHON ?? "python3", "openai", pythonOpenAIVersion, (message) => {
    throw new Error(`${message}\nrun \`npm run setup\` (scripts/setup.sh), which makes this venv`);
  });
}
