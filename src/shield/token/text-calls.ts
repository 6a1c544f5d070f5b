import type { CallSyntax } from "./call-syntax.js";

// Spotting calls written as text: instruction-tuned models write their calls as JSON in their
// answer under `tool_choice: auto` (Qwen 2.5's own `<tool_call>` tags, fenced JSON, bare objects).
// The local decoder reads them token by token (decoder.ts), the upstream shield in a whole
// answer (../upstream/calls.ts): both by this one pattern.

/**
 * Where a call written as text opens: a JSON object with `"name"` first, at the start of a line,
 * right after a ``` fence, or after a `<tools>`, `<tool_call>` or `<function_call>` tag, possibly
 * the first of a JSON array of calls (the group `array`), up to the name's opening quote.
 */
export const textCallOpening =
  /(?:(?:^|\n)[ \t]*|```[\w-]*[ \t]*\n[ \t]*|<(?:tools|tool_call|function_call)>\s*)(?<array>\[\s*)?\{\s*"name"\s*:\s*"/;

/** The opening, then the part of the name already written, at the end of the text. */
const openingAtEnd = new RegExp(`${textCallOpening.source}(?<rest>[^"\\\\\\n]*)$`);

/** The next call of a JSON array of calls written as text, right after the one before it. */
const nextInArray = /^\s*,\s*\{\s*"name"\s*:\s*"(?<rest>[^"\\\n]*)$/;

/** After the name of a call written as text (not in the chat format's own syntax). */
const textCallParamsPrefix = '", "arguments": ';

/**
 * A call written as text that the free text opens with its last token (`token`, whose text holds
 * the opening's last quote): where it starts (`at`), its syntax (the opening as written, then
 * JSON), and the part of the name the token already wrote (`rest`). After a call written as text
 * that ended at `lastCallEnd`, the next call of its array opens too.
 */
export function textCallAt(
  freeText: string,
  token: string,
  lastCallEnd: number | undefined,
): { at: number; syntax: CallSyntax; rest: string } | undefined {
  if (!token.includes('"')) return undefined;
  let match = openingAtEnd.exec(freeText);
  let offset = 0;
  if (match === null && lastCallEnd !== undefined) {
    match = nextInArray.exec(freeText.slice(lastCallEnd));
    offset = lastCallEnd;
  }
  const rest = match?.groups?.rest;
  if (match === null || rest === undefined || rest.length >= token.length) return undefined;
  return {
    at: offset + match.index,
    syntax: {
      prefix: match[0].slice(0, match[0].length - rest.length),
      paramsPrefix: textCallParamsPrefix,
      suffix: "}",
    },
    rest,
  };
}
