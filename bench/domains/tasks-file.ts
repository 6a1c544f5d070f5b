import { readFileSync } from "node:fs";
import { MentorError } from "../../src/errors/index.js";

/** Reads a JSON array of task objects; errors name the file. */
export function readTaskArray(file: string): Record<string, unknown>[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new MentorError("MNT_ERR_BENCH_INPUT", `${file}: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed))
    throw new MentorError("MNT_ERR_BENCH_INPUT", `${file}: must be a JSON array of tasks`);
  return parsed.map((task, index) => {
    if (typeof task !== "object" || task === null || Array.isArray(task)) {
      throw new MentorError("MNT_ERR_BENCH_INPUT", `${file}: [${index}] must be an object`);
    }
    return task as Record<string, unknown>;
  });
}

/** Throws a bench input error naming the file, task and field unless `ok`. */
export function requireField(ok: boolean, file: string, where: string, expected: string): asserts ok {
  if (!ok) throw new MentorError("MNT_ERR_BENCH_INPUT", `${file}: ${where} must be ${expected}`);
}
