import assert from "node:assert/strict";
import { test } from "node:test";

/** The system tools some tests run; `npm run setup` (scripts/setup.sh) installs them. */
export type SystemTool = "mona" | "z3" | "chromium" | "nginx" | "python3";

/**
 * Whether the tests that need `tool` run: `false` where it is found. Where it is missing, a test
 * that fails naming the setup command is added to the file, so `npm test` fails rather than
 * skipping silently, and the reason is returned for the `skip` option of the tests that need
 * the tool. With MENTOR_SKIP_MISSING_TOOLS=1 (a machine where setup cannot install) nothing
 * fails: those tests are skipped with the reason.
 */
export function missingTool(tool: SystemTool, found: boolean, where?: string): string | false {
  if (found) return false;
  const reason = `${tool} is not installed${where ? ` (${where})` : ""}: run \`npm run setup\` (scripts/setup.sh), or set MENTOR_SKIP_MISSING_TOOLS=1 to skip the tests that need it`;
  if (process.env.MENTOR_SKIP_MISSING_TOOLS !== "1") {
    test(`the system tool ${tool} is installed`, () => assert.fail(reason));
  }
  return reason;
}
