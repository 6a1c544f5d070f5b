import { MentorError } from "../errors/index.js";
import { type LintFinding, lintConstraints, lintPolicy } from "../game/index.js";
import { type Policy, parsePolicy } from "../policy/index.js";
import type { SolverClient } from "../smt/index.js";

/** A translator's candidate after loading and linting. */
export interface CandidateCheck {
  /** The policy, when it loads and has no lint errors. */
  policy?: Policy;
  /** Load problems (file:line:column (path): message) and lint errors, verbatim: what goes back to the translator. */
  problems: string[];
  /** Lint warnings (kept in the report; they do not go back). */
  warnings: string[];
  /** Whether it loads (`parsePolicy`), lint errors or not. */
  loaded: boolean;
}

/**
 * Loads a candidate policy text as `mentor lint` would (every load problem with its place, then
 * contradictions, traps and, with a solver, constraints that can never hold together).
 */
export async function checkCandidate(
  text: string,
  file: string,
  solver: SolverClient | undefined,
): Promise<CandidateCheck> {
  let policy: Policy;
  try {
    policy = parsePolicy(text, file);
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    const problems = (error.problems.length > 0 ? error.problems : [error]).map(
      (problem) => `${problem.code}: ${problem.message}`,
    );
    return { problems, warnings: [], loaded: false };
  }
  let findings: LintFinding[];
  try {
    findings = lintPolicy(policy);
    if (solver) findings.push(...(await lintConstraints(policy, solver)));
  } catch (error) {
    if (!(error instanceof MentorError)) throw error;
    return { problems: [`${error.code}: ${error.message}`], warnings: [], loaded: true };
  }
  const line = (finding: LintFinding): string =>
    `${finding.severity} [${finding.kind}] ${finding.message}${finding.example ? ` (example: ${finding.example.join(" ; ")})` : ""}`;
  const problems = findings.filter((finding) => finding.severity === "error").map(line);
  const warnings = findings.filter((finding) => finding.severity === "warning").map(line);
  return problems.length === 0
    ? { policy, problems, warnings, loaded: true }
    : { problems, warnings, loaded: true };
}
