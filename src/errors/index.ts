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
