import { spawnSync } from "node:child_process";
import { sopbenchDataDir } from "../../bench/sopbench/run.js";
import { missingTool } from "./system-tools.js";

/**
 * SOPBench's folder (its snapshot in ../shared/bench-data/sopbench, third-party code run in its own
 * venv) and why the tests that run it are skipped: no python3, or no such folder (a clone alone).
 */
export const sopbench = (() => {
  try {
    return sopbenchDataDir();
  } catch {
    return undefined;
  }
})();

export const sopbenchSkip: string | false =
  missingTool("python3", spawnSync("python3", ["--version"], { stdio: "ignore" }).status === 0) ||
  (sopbench === undefined ? "no SOPBench folder (../shared/bench-data/sopbench)" : false);
