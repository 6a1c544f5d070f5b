import type { FastifyReply } from "fastify";
import type { TurnResult } from "../agent/index.js";
import type { ErrorBody } from "./errors.js";

/**
 * A streamed answer (server-sent events). Nothing is written until `open()`: the route opens the
 * stream when the turn starts generating, so a turn refused before that (ungrounded, nothing
 * allowed) is an HTTP error like a non-streamed one. Once open: the role chunk, then a comment
 * every 10 s while the turn runs; content and tool calls follow once the shield has decided (a
 * call is never shown before its verdict): content in fragments, each call as one opening chunk
 * (index, id, type, name, empty arguments) and argument fragments, then the finish chunk (with
 * the `mentor` record), the usage chunk if asked, and `[DONE]`.
 */
export class EventStream {
  private readonly created = Math.floor(Date.now() / 1000);
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(
    private readonly reply: FastifyReply,
    private readonly options: { id: string; model: string; includeUsage: boolean },
  ) {}

  get opened(): boolean {
    return this.keepAlive !== undefined;
  }

  open(): void {
    if (this.opened) return;
    const { reply } = this;
    reply.hijack();
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    this.send(this.chunk({ role: "assistant", content: "" }));
    this.keepAlive = setInterval(() => reply.raw.write(": keep-alive\n\n"), 10_000);
  }

  finish(result: TurnResult): void {
    this.open();
    const { content, tool_calls: calls } = result.message;
    for (const piece of fragments(content ?? "", 24)) this.send(this.chunk({ content: piece }));
    (calls ?? []).forEach((call, index) => {
      this.send(
        this.chunk({
          tool_calls: [
            { index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } },
          ],
        }),
      );
      for (const piece of fragments(call.function.arguments, 16))
        this.send(this.chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    this.send({ ...this.chunk({}, result.finishReason), mentor: result.mentor });
    if (this.options.includeUsage) this.send({ ...this.chunk({}), choices: [], usage: usageBody(result) });
    this.end();
  }

  /** An error after the stream opened: an `error` event (clients raise it), then the end. */
  fail(body: ErrorBody): void {
    this.send(body);
    this.end();
  }

  private end(): void {
    clearInterval(this.keepAlive);
    if (this.reply.raw.destroyed) return;
    this.reply.raw.write("data: [DONE]\n\n");
    this.reply.raw.end();
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
    return {
      id: this.options.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.options.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.options.includeUsage ? { usage: null } : {}),
    };
  }

  private send(data: unknown): void {
    if (!this.reply.raw.destroyed) this.reply.raw.write(`data: ${JSON.stringify(data)}\n\n`);
  }
}

export function usageBody(result: TurnResult): Record<string, number> {
  return {
    prompt_tokens: result.usage.promptTokens,
    completion_tokens: result.usage.completionTokens,
    total_tokens: result.usage.promptTokens + result.usage.completionTokens,
  };
}

/** The text in pieces of at most `size` characters (whole code points). */
function fragments(text: string, size: number): string[] {
  const characters = [...text];
  const pieces: string[] = [];
  for (let start = 0; start < characters.length; start += size)
    pieces.push(characters.slice(start, start + size).join(""));
  return pieces;
}
