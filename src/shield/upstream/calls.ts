import type { CallSyntax } from "./grammar.js";

/** A call read from an answer's text. */
export interface TextCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Why the arguments could not be read. */
  invalid?: string;
}

/**
 * The calls an answer writes as text in `syntax` (what an upstream returns as content when it was
 * given a grammar rather than parsing calls itself), and the text before the first call.
 */
export function readTextCalls(
  text: string,
  syntax: CallSyntax,
): { content: string | null; calls: TextCall[] } {
  const open = syntax.prefix.slice(
    0,
    syntax.prefix.indexOf("{") >= 0 ? syntax.prefix.indexOf("{") : undefined,
  );
  const first = text.indexOf(open);
  if (first < 0) return { content: text === "" ? null : text, calls: [] };
  const calls: TextCall[] = [];
  const close = syntax.suffix.slice(syntax.suffix.indexOf("}") + 1);
  let position = first;
  while (position >= 0 && position < text.length) {
    const start = text.indexOf(open, position);
    if (start < 0) break;
    const end = text.indexOf(close, start + open.length);
    const body = text.slice(start + open.length, end < 0 ? undefined : end).trim();
    calls.push(readCall(body));
    position = end < 0 ? -1 : end + close.length;
  }
  const before = text.slice(0, first).trim();
  return { content: before === "" ? null : before, calls };
}

function readCall(body: string): TextCall {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const name = /"name"\s*:\s*"([^"]*)"/.exec(body)?.[1] ?? "";
    return { name, arguments: {}, invalid: "the call is not valid JSON" };
  }
  const call = parsed as { name?: unknown; arguments?: unknown };
  const name = typeof call.name === "string" ? call.name : "";
  const args = call.arguments;
  if (typeof args === "object" && args !== null && !Array.isArray(args))
    return { name, arguments: args as Record<string, unknown> };
  return { name, arguments: {}, invalid: "the arguments are not a JSON object" };
}
