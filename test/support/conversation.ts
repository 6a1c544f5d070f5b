import type { Value } from "../../src/expression/index.js";

/** Builds OpenAI chat `messages` for tests, with grounded task calls and labels in `mentor` fields. */
export class Conversation {
  readonly messages: Record<string, unknown>[] = [];
  private nextId = 1;

  constructor(task: { name: string; arguments: Record<string, Value> }[], text = "Please book my trip.") {
    this.messages.push({ role: "user", content: text, mentor: { task } });
  }

  /** An assistant tool call and its result (JSON value, or a label for text tools). */
  call(
    name: string,
    args: Record<string, Value>,
    result: { json?: Value; label?: string | null; text?: string } = {},
  ): this {
    const id = `call_${this.nextId++}`;
    this.messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    });
    const tool: Record<string, unknown> = {
      role: "tool",
      tool_call_id: id,
      content: result.json !== undefined ? JSON.stringify(result.json) : (result.text ?? ""),
    };
    if (result.label !== undefined) tool.mentor = { label: result.label };
    this.messages.push(tool);
    return this;
  }
}
