import type { Advice, Decision, Duty, ProposedCall } from "../evaluator/index.js";
import { refusedPrefix, stoppedPrefix } from "../run/index.js";

/**
 * The prompt shield's texts: what the model reads in a tool result when the shield blocks a
 * call, when it allows one while duties remain open, and when it refuses to let the run end.
 */

/** `book_train(origin="Toronto", destination="Chicago")`. */
export function formatCall(call: ProposedCall): string {
  const args = Object.entries(call.arguments).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  return `${call.name}(${args.join(", ")})`;
}

/** For a blocked call: the call, each broken rule with its sentence, and the suggested call. */
export function blockedText(decision: Decision): string {
  const rules = decision.violations.map((finding) => `Rule ${finding.rule}: ${finding.sentence}`);
  // The prefix marks the call as refused when the conversation comes back (monitor/trace.ts).
  const parts = [`${refusedPrefix} ${formatCall(decision.call)}.`, ...rules];
  if (decision.argumentProblems) parts.push(`Arguments: ${decision.argumentProblems.join("; ")}.`);
  if (decision.failClosed)
    parts.push(`The shield could not decide (${decision.failClosed}), so it blocked the call.`);
  if (decision.action === "ask") parts.push("The call needs a person's approval.");
  if (decision.action === "stop")
    parts.push("The run is stopped: nothing more may be done until a person resumes it.");
  if (
    decision.overridable?.length &&
    decision.action === "block" &&
    decision.violations.length === decision.overridable.length
  )
    parts.push(
      `To override ${decision.overridable.join(", ")} deliberately, make the identical call again next.`,
    );
  if (decision.advice) parts.push(adviceText(decision.advice));
  return parts.join(" ");
}

const ADVICE_LEAD: Record<Advice["kind"], string> = {
  prerequisite: "First:",
  repair: "Instead:",
  alternative: "Nothing makes this call allowed now; instead:",
};

/** `First: lookup_patient(…)`, with the arguments the user must supply named. */
function adviceText(advice: Advice): string {
  return `${ADVICE_LEAD[advice.kind]} ${formatCall(advice.call)}${missingText(advice.missing)}`;
}

/** ` (ask the user for message: nothing known gives it)`, or nothing when no argument is missing. */
function missingText(missing: readonly string[] | undefined): string {
  if (!missing?.length) return "";
  return ` (ask the user for ${missing.join(", ")}: nothing known gives ${missing.length === 1 ? "it" : "them"})`;
}

/**
 * The assistant message that ends a run a `stop` rule stopped (its first words mark the stop in
 * the conversation, so later requests find the run stopped until a person resumes it).
 */
export function stoppedText(decision: Decision): string {
  const rules = decision.violations.map((finding) => `Rule ${finding.rule}: ${finding.sentence}`);
  return [
    `${stoppedPrefix} the run at ${formatCall(decision.call)}.`,
    ...rules,
    "Nothing more may be done until a person resumes the run.",
  ].join(" ");
}

/** Appended to an allowed call's result: warnings, then the open duties and one call that helps. */
export function reminderText(decision: Pick<Decision, "warnings" | "openDuties">): string | undefined {
  const parts: string[] = [];
  for (const warning of decision.warnings)
    parts.push(`[SHIELD] Warning, rule ${warning.rule}: ${warning.sentence}`);
  const duties = dutiesText(decision.openDuties);
  if (duties) parts.push(duties);
  return parts.length > 0 ? parts.join("\n") : undefined;
}

/**
 * For a run that may end with duties open (`done.stuck_after` calls made): the open duties, and
 * that the model may stop and say what blocks them.
 */
export function stuckText(duties: readonly Duty[]): string {
  return `[SHIELD] ${dutyList(duties)} The run has made many calls without meeting them: if nothing you can do meets them, stop and tell the user what blocks them.`;
}

/** Why the run may not end yet (the model answered without a tool call while duties are open). */
export function doneRefusedText(duties: readonly Duty[]): string {
  return `[SHIELD] You cannot finish yet. ${dutyList(duties)}`;
}

function dutiesText(duties: readonly Duty[]): string | undefined {
  return duties.length === 0 ? undefined : `[SHIELD] ${dutyList(duties)}`;
}

/** `Open duties: P4 (sentence) for route(…). Next: book_train(…)`. */
function dutyList(duties: readonly Duty[]): string {
  const listed = duties.map(
    (duty) => `${duty.rule} (${duty.sentence})${duty.binding ? ` for ${duty.binding}` : ""}`,
  );
  const next = duties.find((duty) => duty.fulfil);
  return `Open duties: ${listed.join("; ")}.${next?.fulfil ? ` Next: ${formatCall(next.fulfil)}${missingText(next.missing)}` : ""}`;
}
