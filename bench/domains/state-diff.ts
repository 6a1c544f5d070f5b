/**
 * Where two JSON database states differ, as paths (`tasks.task_2.status: "pending" → "completed"`).
 * Used by evaluators that compare the agent's final database with the reference's.
 */
export function stateDifferences(expected: unknown, actual: unknown, path = "", limit = 20): string[] {
  const differences: string[] = [];
  walk(expected, actual, path, differences, limit);
  return differences;
}

function walk(expected: unknown, actual: unknown, path: string, out: string[], limit: number): void {
  if (out.length >= limit) return;
  if (isObject(expected) && isObject(actual)) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const key of keys) {
      const where = path === "" ? key : `${path}.${key}`;
      if (!(key in actual)) out.push(`${where}: missing (expected ${show(expected[key])})`);
      else if (!(key in expected)) out.push(`${where}: unexpected ${show(actual[key])}`);
      else walk(expected[key], actual[key], where, out, limit);
      if (out.length >= limit) return;
    }
    return;
  }
  if (Array.isArray(expected) && Array.isArray(actual) && expected.length === actual.length) {
    expected.forEach((item, index) => {
      walk(item, actual[index], `${path}[${index}]`, out, limit);
    });
    return;
  }
  if (JSON.stringify(expected) !== JSON.stringify(actual)) {
    out.push(`${path || "(root)"}: ${show(actual)}, expected ${show(expected)}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
