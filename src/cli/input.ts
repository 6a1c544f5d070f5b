import { readFileSync } from "node:fs";
import { MentorError } from "../errors/index.js";
import {
  type ChatMessage,
  depthProblem,
  firstProblem,
  type JsonPath,
  messagesSchema,
} from "../openai/index.js";

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
 * The messages of a file (a JSON array, or an object with a `messages` field), checked with the
 * server's schema of a request's messages.
 */
export function readMessagesFile(file: string): ChatMessage[] {
  const parsed = readJsonFile(file);
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
