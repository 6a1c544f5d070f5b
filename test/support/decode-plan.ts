import type { DecodePlan } from "../../src/shield/token/index.js";

/**
 * A decode plan for decoder tests: a required single call, nothing progressing or redirected, no
 * argument sets, token mode's boost; `plan` gives the syntax, the tools and what differs.
 */
export function decodePlan(
  plan: Pick<DecodePlan, "syntax" | "tools" | "names"> & Partial<DecodePlan>,
): DecodePlan {
  return {
    progressingNames: [],
    redirects: new Map(),
    argumentSets: new Map(),
    startInCall: true,
    callsAllowed: true,
    endAllowed: false,
    endProgressing: false,
    maxCalls: 1,
    minCalls: 0,
    eta: 0.5,
    strength: 100,
    boost: true,
    maxStringTokens: 24,
    ...plan,
  };
}
