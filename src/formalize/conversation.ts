/** A test conversation of the suite: OpenAI messages and the evaluator's label. */
export interface TestConversation {
  id: string;
  /** OpenAI chat messages: the user's request, assistant tool calls, tool results. */
  messages: Record<string, unknown>[];
  expected: Label;
  /** Where the label came from: the evaluator, or an orchestrator ruling that changed it. */
  source: "evaluator" | "ruling";
}

/** Compliant, or breaks one sentence of the manual. */
export interface Label {
  compliant: boolean;
  /** The id of the manual sentence the conversation breaks (not compliant only). */
  sentence?: string;
}

/** The compact form the evaluator writes: a request and the calls with their outputs. */
interface CompactConversation {
  id?: unknown;
  request?: unknown;
  calls?: unknown;
  messages?: unknown;
  label?: unknown;
  compliant?: unknown;
  sentence?: unknown;
}

/**
 * The conversations of an evaluator's answer (`{conversations: [...]}` or an array), each either
 * `{request, calls: [{name, arguments, output}], label, sentence}` or with OpenAI `messages`.
 * Malformed items are skipped, each with a reason in `problems`.
 */
export function readConversations(
  raw: unknown,
  sentenceIds: ReadonlySet<string>,
  firstNumber = 1,
): { conversations: TestConversation[]; problems: string[] } {
  const list = Array.isArray(raw)
    ? raw
    : typeof raw === "object" &&
        raw !== null &&
        Array.isArray((raw as { conversations?: unknown }).conversations)
      ? (raw as { conversations: unknown[] }).conversations
      : undefined;
  if (list === undefined) return { conversations: [], problems: ["the answer has no `conversations` array"] };
  const conversations: TestConversation[] = [];
  const problems: string[] = [];
  list.forEach((entry, index) => {
    const item = (entry ?? {}) as CompactConversation;
    const id = `c${firstNumber + conversations.length}`;
    try {
      const messages = Array.isArray(item.messages)
        ? (item.messages as Record<string, unknown>[])
        : compactMessages(item);
      if (!messages.some((message) => message.role === "user")) throw new Error("no user message");
      const expected = readLabel(item, sentenceIds);
      conversations.push({ id, messages, expected, source: "evaluator" });
    } catch (error) {
      problems.push(`conversations[${index}]: ${(error as Error).message}`);
    }
  });
  return { conversations, problems };
}

function readLabel(item: CompactConversation, sentenceIds: ReadonlySet<string>): Label {
  const label = typeof item.label === "string" ? item.label.toLowerCase().replace(/[^a-z]/g, "") : undefined;
  const compliant =
    typeof item.compliant === "boolean"
      ? item.compliant
      : label === "compliant"
        ? true
        : label === "violation" || label === "noncompliant" || label === "notcompliant"
          ? false
          : undefined;
  if (compliant === undefined) throw new Error('`label` must be "compliant" or "violation"');
  if (compliant) return { compliant };
  const sentence = typeof item.sentence === "string" ? item.sentence.trim().replace(/[:.]$/, "") : "";
  if (!sentenceIds.has(sentence))
    throw new Error(
      `\`sentence\` must be the id of the manual sentence broken (${[...sentenceIds].join(", ")})`,
    );
  return { compliant, sentence };
}

function compactMessages(item: CompactConversation): Record<string, unknown>[] {
  if (typeof item.request !== "string" || item.request.trim() === "")
    throw new Error("`request` must be a text");
  if (!Array.isArray(item.calls)) throw new Error("`calls` must be an array");
  const messages: Record<string, unknown>[] = [{ role: "user", content: item.request }];
  item.calls.forEach((raw, index) => {
    const call = (raw ?? {}) as { name?: unknown; arguments?: unknown; output?: unknown };
    if (typeof call.name !== "string" || call.name === "")
      throw new Error(`calls[${index}].name must be a tool name`);
    const args =
      typeof call.arguments === "string"
        ? call.arguments
        : JSON.stringify(typeof call.arguments === "object" && call.arguments !== null ? call.arguments : {});
    const id = `call_${index + 1}`;
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: call.name, arguments: args } }],
    });
    const output =
      call.output === undefined || call.output === null
        ? ""
        : typeof call.output === "string"
          ? call.output
          : JSON.stringify(call.output);
    messages.push({ role: "tool", tool_call_id: id, content: output });
  });
  return messages;
}

/** A conversation as a few lines of text, for the agents' prompts. */
export function conversationText(conversation: TestConversation): string {
  const lines: string[] = [];
  for (const message of conversation.messages) {
    if (message.role === "user") lines.push(`user: ${String(message.content ?? "")}`);
    else if (message.role === "assistant") {
      for (const call of (message.tool_calls ?? []) as { function: { name: string; arguments: string } }[])
        lines.push(`call: ${call.function.name}(${call.function.arguments})`);
      if (typeof message.content === "string" && message.content !== "")
        lines.push(`assistant: ${message.content}`);
    } else if (message.role === "tool") lines.push(`  → ${String(message.content ?? "")}`);
  }
  return lines.join("\n");
}

/** A label in words: `compliant`, or `violation of P2`. */
export function labelText(label: Label): string {
  return label.compliant ? "compliant" : `violation of ${label.sentence ?? "?"}`;
}
