import { textCallOpening } from "../token/index.js";

/** A call read from an answer's text. */
export interface TextCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Why the arguments could not be read. */
  invalid?: string;
  /** The text ended inside the call (an answer cut by max_tokens). */
  incomplete?: true;
}

/**
 * Where a call written as text opens (`textCallOpening`, the pattern the local decoder reads token
 * by token): Qwen 2.5's own `<tool_call>` tags, and what instruction-tuned models write under
 * `tool_choice: auto` when nothing parses their calls (test/llm/fixtures).
 */
const callOpening = new RegExp(textCallOpening.source, "g");

/** Lines that only wrapped calls written as text (fences, tags, array brackets): dropped from the content. */
const callWrapperLine = /^[ \t]*(?:```[\w-]*|<\/?(?:tools|tool_call|function_call)>|[[\],])[ \t]*$/gm;

/** The content of an answer whose calls were written as text, without the fences and tags around them. */
export function withoutCallWrappers(text: string): string {
  return text.replace(callWrapperLine, "").replace(/\n{3,}/g, "\n\n");
}

/**
 * The calls an answer writes as text, in any form `callOpening` knows, naming one of `tools` (a
 * JSON object of another name is text), and the text around them without their wrappers (null
 * when nothing is left). For an upstream that does not parse calls itself (llama-cpp-python's chat
 * templates; any upstream under a grammar, which goes up with `tool_choice: "none"`): its calls are
 * read as the local engine reads the same model's, so the evaluator judges them.
 */
export function readTextCalls(
  text: string,
  tools: ReadonlySet<string>,
): { content: string | null; calls: TextCall[] } {
  const calls: TextCall[] = [];
  const spans: [number, number][] = [];
  callOpening.lastIndex = 0;
  for (let opening = callOpening.exec(text); opening; opening = callOpening.exec(text)) {
    const inArray = opening.groups?.array !== undefined;
    const first = opening.index + opening[0].lastIndexOf("{");
    let start = first;
    let spanEnd = -1;
    while (start >= 0) {
      const end = objectEnd(text, start);
      const call = end < 0 ? cutCall(text.slice(start)) : readCall(text.slice(start, end));
      if (call === undefined || !(tools.has(call.name) || (call.incomplete && namesPrefix(tools, call.name))))
        break;
      calls.push(call);
      spanEnd = end < 0 ? text.length : end;
      if (end < 0 || !inArray) break;
      start = /^\s*,\s*\{/.test(text.slice(end)) ? text.indexOf("{", end) : -1;
    }
    if (spanEnd < 0) {
      callOpening.lastIndex = opening.index + 1;
      continue;
    }
    // An array's brackets and commas go with its calls.
    const closing = inArray ? /^\s*\]/.exec(text.slice(spanEnd)) : null;
    if (closing) spanEnd += closing[0].length;
    spans.push([inArray ? text.lastIndexOf("[", first) : first, spanEnd]);
    callOpening.lastIndex = spanEnd;
  }
  if (calls.length === 0) return { content: text === "" ? null : text, calls };
  let rest = "";
  let from = 0;
  for (const [start, end] of spans) {
    rest += text.slice(from, start);
    from = end;
  }
  rest += text.slice(from);
  const content = withoutCallWrappers(rest.replace(/<\/?(?:tools|tool_call|function_call)>/g, "")).trim();
  return { content: content === "" ? null : content, calls };
}

function namesPrefix(tools: ReadonlySet<string>, written: string): boolean {
  for (const tool of tools) if (tool.startsWith(written)) return true;
  return false;
}

/** Where the JSON object opening at `start` ends (just after its `}`), or -1 when the text ends first. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let at = start; at < text.length; at++) {
    const char = text[at];
    if (inString) {
      if (char === "\\") at++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{" || char === "[") depth++;
    else if (char === "}" || char === "]") {
      depth--;
      if (depth === 0) return at + 1;
    }
  }
  return -1;
}

/** A call the text ended inside of: its name as far as written. */
function cutCall(body: string): TextCall | undefined {
  const name = /^\{\s*"name"\s*:\s*"([^"\\]*)/.exec(body)?.[1];
  return name === undefined ? undefined : { name, arguments: {}, incomplete: true };
}

function readCall(body: string): TextCall | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const name = /^\{\s*"name"\s*:\s*"([^"]*)"/.exec(body)?.[1];
    return name === undefined ? undefined : { name, arguments: {}, invalid: "the call is not valid JSON" };
  }
  const call = parsed as { name?: unknown; arguments?: unknown; parameters?: unknown };
  if (typeof call.name !== "string") return undefined;
  // Llama 3 writes `parameters`; a few models write the arguments as a JSON string, as OpenAI sends them.
  let args = "arguments" in call ? call.arguments : "parameters" in call ? call.parameters : {};
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      // Reported below as not an object.
    }
  }
  if (typeof args === "object" && args !== null && !Array.isArray(args))
    return { name: call.name, arguments: args as Record<string, unknown> };
  return { name: call.name, arguments: {}, invalid: "the arguments are not a JSON object" };
}
