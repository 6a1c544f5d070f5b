import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The python of a venv in `dir` holding `pkg==version`: the venv is created with `python` and
 * the package pip-installed from PyPI when missing or at another version (with `extras`, e.g.
 * `["server"]`). Failures go to `fail` with what pip said.
 */
export function ensureVenv(
  dir: string,
  python: string,
  pkg: string,
  version: string,
  fail: (message: string) => never,
  extras: readonly string[] = [],
): string {
  const bin = createdVenv(dir, python, fail);
  const installed = spawnSync(bin, ["-c", `import importlib.metadata as m; print(m.version('${pkg}'))`], {
    encoding: "utf8",
  });
  if (installed.status === 0 && installed.stdout.trim() === version) return bin;
  const spec = `${pkg}${extras.length > 0 ? `[${extras.join(",")}]` : ""}==${version}`;
  process.stderr.write(`installing ${spec} from PyPI into ${dir}\n`);
  const pip = spawnSync(bin, ["-m", "pip", "install", "--disable-pip-version-check", "--quiet", spec], {
    encoding: "utf8",
    env: { ...process.env, PIP_DEFAULT_TIMEOUT: process.env.PIP_DEFAULT_TIMEOUT ?? "30" },
  });
  if (pip.status !== 0) {
    const said = `${pip.stdout}\n${pip.stderr}`.trim().split("\n").slice(-4).join("\n  ");
    fail(`could not pip-install ${spec} into ${dir}; is PyPI reachable from here?\n  pip said: ${said}`);
  }
  return bin;
}

/**
 * The python of a venv in `dir` holding every pin of `requirements` (a pip requirements file):
 * created with `python` and pip-installed from PyPI unless the venv was made from the same file
 * (a copy of it is kept in the venv). Failures go to `fail` with what pip said.
 */
export function ensureVenvFromRequirements(
  dir: string,
  python: string,
  requirements: string,
  fail: (message: string) => never,
): string {
  const kept = join(dir, "mentor-requirements.txt");
  const wanted = readFileSync(requirements, "utf8");
  const bin = createdVenv(dir, python, fail);
  if (existsSync(kept) && readFileSync(kept, "utf8") === wanted) return bin;
  process.stderr.write(`installing ${requirements} from PyPI into ${dir}\n`);
  const pip = spawnSync(
    bin,
    ["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "-r", requirements],
    {
      encoding: "utf8",
      env: { ...process.env, PIP_DEFAULT_TIMEOUT: process.env.PIP_DEFAULT_TIMEOUT ?? "30" },
    },
  );
  if (pip.status !== 0) {
    const said = `${pip.stdout}\n${pip.stderr}`.trim().split("\n").slice(-4).join("\n  ");
    fail(
      `could not pip-install ${requirements} into ${dir}; is PyPI reachable from here?\n  pip said: ${said}`,
    );
  }
  writeFileSync(kept, wanted);
  return bin;
}

/** The python of the venv in `dir`, created with `python` where missing. */
function createdVenv(dir: string, python: string, fail: (message: string) => never): string {
  const bin = join(dir, process.platform === "win32" ? "Scripts/python.exe" : "bin/python");
  if (existsSync(bin)) return bin;
  mkdirSync(dirname(dir), { recursive: true });
  process.stderr.write(`creating a venv in ${dir}\n`);
  const made = spawnSync(python, ["-m", "venv", dir], { encoding: "utf8" });
  if (made.status !== 0)
    fail(`could not create a venv in ${dir} with ${python}: ${made.error?.message ?? made.stderr.trim()}`);
  return bin;
}
