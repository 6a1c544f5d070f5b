import { type ErrorCode, MentorError, offsetOf, type SourceLocation } from "../errors/index.js";
import type { Report } from "./labeling.js";
import type { PolicySource, YamlPath } from "./source.js";

/** How many copies of anchored values the aliases of a policy file may make (yaml's default). */
const maxAliasCount = 100;

/**
 * The problems of one policy file, each with its file, line, column and rule id. The compiler
 * extends it: every section reports with `problem` and the file fails once, listing them all.
 */
export class PolicyProblems {
  protected readonly problems: MentorError[] = [];

  constructor(protected readonly source: PolicySource) {}

  /**
   * The document as plain data. Aliases that expand past `maxAliasCount` copies (a "billion
   * laughs" file) or name no anchor are a problem at the first alias, not a crash.
   */
  protected plainValue(): unknown {
    try {
      return this.source.document.toJS({ maxAliasCount });
    } catch (error) {
      if (!(error instanceof ReferenceError)) throw error;
      const message = error.message.startsWith("Excessive alias count")
        ? `the aliases expand to more than ${maxAliasCount} copies of anchored values (an alias bomb); write the values out`
        : error.message;
      this.problems.push(new MentorError("MNT_ERR_POLICY_YAML", message, this.source.firstAlias()));
      this.fail();
    }
  }

  /** One problem is one line (it names its file, line and column); several are listed under a count. */
  protected fail(): never {
    const count = this.problems.length;
    const message =
      count === 1
        ? (this.problems[0] as MentorError).message
        : `${count} problems in policy ${this.source.file}:\n${this.problems.map((problem) => `  ${problem.message}`).join("\n")}`;
    throw new MentorError("MNT_ERR_POLICY_INVALID", message, undefined, this.problems);
  }

  protected problem(
    code: ErrorCode,
    message: string,
    path: YamlPath,
    options: { key?: boolean; offsetInValue?: number; rule?: string } = {},
  ): void {
    const location = this.source.locate(path, options);
    const rule = options.rule ? `rule ${options.rule}: ` : "";
    this.problems.push(new MentorError(code, `${rule}${message}`, location));
  }

  protected readonly report: Report = (code, message, path, options) =>
    this.problem(code, message, path, options);
}

/** The character index inside `text` of an error located by line and column within it. */
export function errorOffset(text: string, location: SourceLocation | undefined): number {
  return location?.line && location.column ? offsetOf(text, location.line, location.column) : 0;
}

/** Drops the "line L, column C: " prefix of an error found inside a string; the policy location replaces it. */
export function stripLocation(message: string): string {
  return message.replace(/^(line \d+, )?column \d+: /, "");
}
