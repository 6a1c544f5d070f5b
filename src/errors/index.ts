import { type ErrorCode, errorCodes } from "./codes.js";

export { type ErrorCode, errorCodes } from "./codes.js";

/** Where in a source text an error was found. Lines and columns are 1-based. */
export interface SourceLocation {
  file?: string;
  line?: number;
  column?: number;
  /** Path inside a structured document, e.g. `rules[2].ltl`. */
  path?: string;
}

/** The one error class of mentor: a stable code, an HTTP status and, where known, a location. */
export class MentorError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly location: SourceLocation | undefined;
  /** For errors that gather several problems (a policy file): each problem with its own code and place. */
  readonly problems: readonly MentorError[];
  /** Fields the server adds to its error body (e.g. `pending` for MNT_ERR_APPROVAL_REQUIRED). */
  details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    location?: SourceLocation,
    problems: readonly MentorError[] = [],
  ) {
    super(location ? `${formatLocation(location)}: ${message}` : message);
    this.name = "MentorError";
    this.code = code;
    this.status = errorCodes[code].status;
    this.location = location;
    this.problems = problems;
    this.details = undefined;
  }
}

export function formatLocation(location: SourceLocation): string {
  const { file, line, column, path } = location;
  let text: string;
  if (file !== undefined) {
    text = [file, line, column].filter((part) => part !== undefined).join(":");
  } else if (line !== undefined) {
    text = column !== undefined ? `line ${line}, column ${column}` : `line ${line}`;
  } else {
    text = column !== undefined ? `column ${column}` : "";
  }
  if (path !== undefined) text = text ? `${text} (${path})` : path;
  return text || "<input>";
}

/** Line and column (1-based) of a character index in a text. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, column: offset - before.lastIndexOf("\n") };
}

/** The character index of a line and column (1-based) in a text: the inverse of `lineAndColumn`. */
export function offsetOf(text: string, line: number, column: number): number {
  const lines = text.split("\n");
  let offset = 0;
  for (let index = 1; index < line; index++) offset += (lines[index - 1] ?? "").length + 1;
  return offset + column - 1;
}
