import { readFileSync } from "node:fs";
import { MentorError } from "../errors/index.js";
import {
  type ChatMessage,
  depthProblem,
  firstProblem,
  type JsonPath,
  messagesSchema,
} from "../openai/index.js";

/** A text file an option names; a file that cannot be read is an error naming the option and the file. */
export function readText(file: string, option: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new MentorError("MNT_ERR_BAD_INPUT", `${option} ${file}: ${(error as Error).message}`);
  }
}

/** A JSON file, refused (naming the place) where it nests deeper than the server reads a body. */
export function readJsonFile(file: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new MentorError("MNT_ERR_BAD_INPUT", `cannot read ${file}: ${(error as Error).message}`);
  }
  checkDepth(value, file);
  return value;
}

/** Refuses a JSON value nested deeper than the server reads; `where` names the file or option it came from. */
export function checkDepth(value: unknown, where: string): void {
  const deep = depthProblem(value);
  if (deep) throw new MentorError("MNT_ERR_BAD_INPUT", `${where}: ${deep.param} ${deep.message}`);
}

/**
 * The messages of a file (a JSON array, an object with a `messages` field, or AgentLTL's trace
 * `{"tool_calls": [{"tool_name", "tool_args", "tool_result"}]}`), checked with the server's
 * schema of a request's messages.
 */
export function readMessagesFile(file: string): ChatMessage[] {
  const parsed = readJsonFile(file);
  if (typeof parsed === "object" && parsed !== null && "tool_calls" in parsed) {
    const messages = agentltlTraceMessages(parsed.tool_calls, file);
    // A run that made no call is a trace AgentLTL scores (its liveness constraints fail).
    return messages.length === 0 ? [] : checkedMessages(messages, ["tool_calls"]);
  }
  const wrapped =
    typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "messages" in parsed;
  return checkedMessages(wrapped ? (parsed as { messages: unknown }).messages : parsed, ["messages"]);
}

/** `messages` if the server's schema accepts them; else their first problem, named from `path` down. */
export function checkedMessages(messages: unknown, path: JsonPath): ChatMessage[] {
  const problem = firstProblem(messagesSchema, messages, path);
  if (problem) throw new MentorError("MNT_ERR_MESSAGES", `${problem.param} ${problem.message}`);
  return messages as ChatMessage[];
}

/**
 * AgentLTL's trace (`metrics["tool_calls"]`, as its `Trace.from_metrics` reads it: `tool_name` or
 * `name`, `tool_args` or `arguments`, `tool_result` or `result`) as chat messages: one assistant
 * message per call, then its result (a string as it is, anything else as JSON).
 */
function agentltlTraceMessages(calls: unknown, file: string): unknown[] {
  if (!Array.isArray(calls))
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `${file}: tool_calls must be a list of {tool_name, tool_args, tool_result}`,
    );
  return calls.flatMap((entry: Record<string, unknown>, index) => {
    const name = entry?.tool_name ?? entry?.name;
    if (typeof name !== "string")
      throw new MentorError("MNT_ERR_BAD_INPUT", `${file}: tool_calls[${index}].tool_name must be a string`);
    const id = `call_${index + 1}`;
    const result = entry.tool_result ?? entry.result ?? null;
    return [
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id,
            type: "function",
            function: { name, arguments: JSON.stringify(entry.tool_args ?? entry.arguments ?? {}) },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: id,
        content: typeof result === "string" ? result : JSON.stringify(result),
      },
    ];
  });
}
