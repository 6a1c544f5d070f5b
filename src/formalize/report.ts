import { disagreementText } from "./checker.js";
import { labelText, type TestConversation } from "./conversation.js";
import type { FormalizeResult } from "./loop.js";

/** The test suite file `mentor verify --suite` reads: the conversations with their expected labels. */
export interface SuiteFile {
  /** The manual's sentences, by the ids the labels name. */
  manual: Record<string, string>;
  conversations: {
    id: string;
    expected: { compliant: boolean; sentence?: string };
    source: string;
    messages: unknown[];
  }[];
}

export function suiteFile(result: Pick<FormalizeResult, "sentences" | "suite">): SuiteFile {
  return {
    manual: Object.fromEntries(result.sentences.map((sentence) => [sentence.id, sentence.text])),
    conversations: result.suite.map((conversation: TestConversation) => ({
      id: conversation.id,
      expected: conversation.expected,
      source: conversation.source,
      messages: conversation.messages,
    })),
  };
}

/** The report as JSON-ready data (no Policy objects). */
export function reportData(
  result: FormalizeResult,
  settings: Record<string, unknown>,
): Record<string, unknown> {
  return {
    settings,
    outcome: result.outcome,
    seconds: Number(result.seconds.toFixed(1)),
    agents: result.agents,
    rounds: result.rounds.map((round) => ({
      round: round.round,
      candidates: round.candidates,
      loaded: round.loaded,
      checked: round.checked,
      disagreements: round.disagreements.map((entry) => ({ ...entry, text: disagreementText(entry) })),
      contests: round.contests,
    })),
    rulings: result.rulings,
    suiteProblems: result.suiteProblems,
    final: result.final
      ? {
          conversations: result.suite.length,
          disagreements: result.final.disagreements.map((entry) => disagreementText(entry)),
        }
      : null,
    warnings: result.warnings,
    ...(result.review ? { review: result.review } : {}),
  };
}

const outcomes: Record<FormalizeResult["outcome"], string> = {
  agreed: "agreed: the policy loads, lints clean and agrees with every test conversation",
  disagreements: "not agreed: the policy loads and lints clean, but disagreements remain",
  "no-suite":
    "no test suite: the policy loads and lints clean, but the evaluator wrote no usable conversation",
  "no-policy": "no policy: no candidate loaded and linted clean",
};

/** The report in Markdown: outcome, rounds, disagreements per round, rulings, review. */
export function reportMarkdown(result: FormalizeResult, settings: Record<string, string>): string {
  const lines = ["# mentor formalize: report", ""];
  for (const [key, value] of Object.entries(settings)) lines.push(`- ${key}: ${value}`);
  lines.push(
    `- outcome: **${outcomes[result.outcome]}**`,
    `- rounds: ${result.rounds.length}; time: ${result.seconds.toFixed(1)} s; requests: ${Object.entries(
      result.agents,
    )
      .map(([agent, entry]) => `${agent} ${entry.requests} (${entry.seconds.toFixed(1)} s)`)
      .join(", ")}`,
    "",
    "## Rounds",
    "",
    "| round | candidates | candidates that load | loaded clean | disagreements | contests |",
    "| --- | --- | --- | --- | --- | --- |",
  );
  for (const round of result.rounds)
    lines.push(
      `| ${round.round} | ${round.candidates.length} | ${round.candidates.filter((candidate) => candidate.loaded).length} | ${round.loaded ? "yes" : "no"} | ${round.checked ? round.disagreements.length : "not checked"} | ${round.contests} |`,
    );
  for (const round of result.rounds) {
    const failing = round.candidates.filter((candidate) => candidate.problems.length > 0);
    if (failing.length === 0 && round.disagreements.length === 0) continue;
    lines.push("", `### Round ${round.round}`, "");
    round.candidates.forEach((candidate, index) => {
      if (candidate.problems.length === 0) return;
      lines.push(`Candidate ${index + 1} did not load clean:`, "");
      for (const problem of candidate.problems.slice(0, 20))
        lines.push(`- \`${problem.replace(/`/g, "'")}\``);
      lines.push("");
    });
    if (round.disagreements.length > 0) {
      lines.push("Disagreements:", "");
      for (const entry of round.disagreements) lines.push(`- ${disagreementText(entry)}`);
    }
  }
  lines.push("", "## Contested labels", "");
  if (result.rulings.length === 0) lines.push("None.");
  for (const ruling of result.rulings)
    lines.push(
      `- round ${ruling.round}, ${ruling.conversation}: evaluator ${labelText(ruling.evaluator)}, translator ${labelText(ruling.translator)} ("${ruling.quote}"): **${ruling.winner}** wins (${ruling.by}: ${ruling.why})`,
    );
  lines.push("", "## Test suite", "");
  if (result.suite.length === 0) lines.push("No conversations.");
  for (const conversation of result.suite) {
    const disagreement = result.final?.disagreements.find((entry) => entry.conversation === conversation.id);
    lines.push(
      `- ${conversation.id}: ${labelText(conversation.expected)}${conversation.source === "ruling" ? " (by ruling)" : ""}${disagreement ? ` — still disagrees: ${disagreementText(disagreement)}` : ""}`,
    );
  }
  if (result.suiteProblems.length > 0) {
    lines.push("", "Skipped from the evaluator's answers:", "");
    for (const problem of result.suiteProblems) lines.push(`- ${problem}`);
  }
  if (result.warnings.length > 0) {
    lines.push("", "## Lint warnings", "");
    for (const warning of result.warnings) lines.push(`- ${warning}`);
  }
  if (result.review) {
    lines.push(
      "",
      "## Review",
      "",
      "| rule | sentence | paraphrase (without the sentence) | judged |",
      "| --- | --- | --- | --- |",
    );
    for (const entry of result.review)
      lines.push(
        `| ${entry.rule} | ${cell(entry.sentence)} | ${cell(entry.paraphrase)} | ${entry.verdict === "different" ? `**MISMATCH**: ${cell(entry.difference ?? "")}` : entry.verdict} |`,
      );
  }
  return `${lines.join("\n")}\n`;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}
