/**
 * How deep client-written JSON may nest. JSON.parse reads any depth, but the recursive steps after
 * it (JSON.stringify, structuredClone, the validators) overflow the stack a few thousand levels
 * down; the server and the CLI refuse deeper input up front, naming where it goes too deep.
 */

/** Containers (objects and arrays) nested in one another, the outermost one counted. */
export const maxJsonDepth = 64;

/** Keys and indexes from the top of a JSON value, e.g. `["messages", 0, "content"]`. */
export type JsonPath = readonly (string | number)[];

/** A problem of client-written JSON: the field it concerns (null for the whole value) and what is wrong there. */
export interface InputProblem {
  param: string | null;
  message: string;
}

/**
 * Where `value` nests deeper than `maxJsonDepth` (its path cut after 40 characters with `…`) and
 * the message saying so; undefined when it does not.
 */
export function depthProblem(value: unknown): { param: string; message: string } | undefined {
  const path = pathBeyondDepth(value);
  if (path === undefined) return undefined;
  return {
    param: formatJsonPath(path, { maxLength: 40 }),
    message: `nests deeper than ${maxJsonDepth} levels`,
  };
}

interface Visit {
  value: object;
  depth: number;
  parent: Visit | undefined;
  key: string | number;
}

/**
 * The path of the first container (in document order) that sits deeper than `limit`, or undefined
 * when none does. Walks with its own stack, so any depth is safe to check.
 */
export function pathBeyondDepth(value: unknown, limit: number = maxJsonDepth): JsonPath | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const stack: Visit[] = [{ value, depth: 1, parent: undefined, key: "" }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    if (visit.depth > limit) return pathOf(visit);
    // Children pushed last to first, so the first is visited first; only containers are pushed.
    const container = visit.value;
    if (Array.isArray(container)) {
      for (let index = container.length - 1; index >= 0; index--) push(stack, visit, index, container[index]);
    } else {
      const keys = Object.keys(container);
      for (let index = keys.length - 1; index >= 0; index--) {
        const key = keys[index] as string;
        push(stack, visit, key, (container as Record<string, unknown>)[key]);
      }
    }
  }
  return undefined;
}

function push(stack: Visit[], parent: Visit, key: string | number, child: unknown): void {
  if (typeof child === "object" && child !== null)
    stack.push({ value: child, depth: parent.depth + 1, parent, key });
}

function pathOf(visit: Visit): JsonPath {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.parent !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * `["messages", 1, "tool_calls", 0, "id"]` → `messages[1].tool_calls[0].id`. With `maxLength`, the
 * path stops at the segment that would pass it and ends in `…` (a path 64 levels deep says where
 * it starts).
 */
export function formatJsonPath(path: JsonPath, options: { maxLength?: number } = {}): string {
  const maxLength = options.maxLength ?? Number.POSITIVE_INFINITY;
  let text = "";
  for (const [index, key] of path.entries()) {
    const segment = typeof key === "number" ? `[${key}]` : `${index > 0 ? "." : ""}${key}`;
    if (text.length + segment.length > maxLength) return `${text}…`;
    text += segment;
  }
  return text;
}
