import type { CandidateCall } from "../game/index.js";
import { fitsParameterType, type Policy } from "../policy/index.js";
import type { Instance } from "../run/index.js";

/**
 * The ways of meeting a duty that its request asked for: of `candidates`, the calls that are
 * events of the duty's `instance` (a dispense, a renewal, a decline for "every refill request ends
 * dispensed, renewed or declined"). Where a task call that introduced the instance's bindings
 * names the tools it asks for (`asks_for`), the ways of those tools (a financial aid request asks
 * for the application, not for a login that fails or a record that rules it out, though either
 * meets the duty). Otherwise those whose tool takes the most of the request's fields — a field of
 * those task calls, of a parameter's name and a value the parameter can take (a trip's
 * `travel_class: "any"` asks for no cabin) (`request_refill(rx_id, days_supply, …)` asks for
 * `dispense(rx_id, patient_id, days_supply)`, not for `decline_refill(rx_id, reason, message)`).
 * Empty where the ways tie or no task call introduced the bindings: then no way is preferred.
 */
export function requestedWays(
  policy: Policy,
  instance: Instance,
  index: number,
  candidates: readonly CandidateCall[],
): CandidateCall[] {
  const ways = candidates.filter((candidate) => candidate.affected.includes(index));
  const asked = new Set(
    instance.bindings.flatMap((binding) =>
      binding.taskCall ? (policy.taskCalls.get(binding.taskCall.name)?.asksFor ?? []) : [],
    ),
  );
  if (asked.size > 0) return ways.filter((way) => asked.has(way.tool));
  const fields = instance.bindings.flatMap((binding) => Object.entries(binding.taskCall?.arguments ?? {}));
  const taken = (candidate: CandidateCall): number =>
    (policy.tools.get(candidate.tool)?.parameters ?? []).filter((parameter) =>
      fields.some(([name, value]) => name === parameter.name && fitsParameterType(parameter.type, value)),
    ).length;
  const most = Math.max(0, ...ways.map(taken));
  return most === 0 || ways.every((way) => taken(way) === most)
    ? []
    : ways.filter((candidate) => taken(candidate) === most);
}
