import { MentorError } from "../errors/index.js";
import { type LintFinding, lintConstraints, lintPolicy } from "../game/index.js";
import type { Policy } from "../policy/index.js";
import { SolverClient } from "../smt/index.js";

/** What `mentor lint` finds: the game's checks, then the solver's (constraints, `when` predicates). */
export async function lintFindings(policy: Policy): Promise<LintFinding[]> {
  const findings = lintPolicy(policy);
  // The solver process starts only for a question its exact search in TypeScript cannot answer.
  const solver = new SolverClient();
  try {
    findings.push(...(await lintConstraints(policy, solver)));
  } finally {
    await solver.close();
  }
  return findings;
}

/**
 * Refuses a policy with lint errors (`MNT_ERR_POLICY_LINT`, each error on a line of its own), as
 * an LTL harness refuses to fly on a failing rulebook: a rule that can never be broken, a trap or
 * a contradiction is a policy that does not say what its author meant. `allow`
 * (`--allow-lint-errors`) runs it anyway.
 */
export async function refuseLintErrors(
  policy: Policy,
  file: string,
  allow: boolean | undefined,
): Promise<void> {
  if (allow) return;
  const errors = (await lintFindings(policy)).filter((finding) => finding.severity === "error");
  if (errors.length === 0) return;
  const lines = errors.map((finding) => `\n  [${finding.kind}] ${finding.message}`).join("");
  throw new MentorError(
    "MNT_ERR_POLICY_LINT",
    `${file} has ${errors.length} lint error(s) (mentor lint ${file}; --allow-lint-errors runs it anyway):${lines}`,
  );
}
