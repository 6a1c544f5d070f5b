import type { CallSyntax } from "./grammar.js";

/** A call read from an answer's text. */
export interface TextCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Why the arguments could not be read. */
  invalid?: string;
  /** The text ended before the call's closing tag (an answer cut by max_tokens). */
  incomplete?: true;
}

/**
 * The calls an answer writes as text in `syntax` (what an upstream returns as content when it was
 * given a grammar rather than parsing calls itself), and the text before the first call.
 */
export function readTextCalls(
  text: string,
  syntax: CallSyntax,
): { content: string | null; calls: TextCall[] } {
  // The tags around the JSON, whatever whitespace the model put around them (`<tool_call>`).
  const brace = syntax.prefix.indexOf("{");
  const open = (brace >= 0 ? syntax.prefix.slice(0, brace) : syntax.prefix).trim();
  const close = syntax.suffix.slice(syntax.suffix.lastIndexOf("}") + 1).trim();
  const first = text.indexOf(open);
  if (open === "" || first < 0) return { content: text === "" ? null : text, calls: [] };
  const calls: TextCall[] = [];
  let position = first;
  while (position >= 0) {
    const start = text.indexOf(open, position);
    if (start < 0) break;
    const end = close === "" ? -1 : text.indexOf(close, start + open.length);
    const call = readCall(text.slice(start + open.length, end < 0 ? undefined : end).trim());
    calls.push(end < 0 && close !== "" ? { ...call, incomplete: true } : call);
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
