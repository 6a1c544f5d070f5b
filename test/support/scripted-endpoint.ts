import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted answer: writes the response to a request whose JSON body it is given. */
export type Script = (response: ServerResponse, body: Record<string, unknown>) => void;

export interface ReceivedRequest {
  path: string;
  body: Record<string, unknown>;
  authorization: string | undefined;
}

/**
 * A real local HTTP server that answers each request with the next scripted answer (500 when none
 * is left) and keeps what it received: for testing OpenAI-compatible clients without a model.
 */
export class ScriptedEndpoint {
  readonly requests: ReceivedRequest[] = [];
  script: Script[] = [];
  private readonly server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      this.requests.push({ path: request.url ?? "", body, authorization: request.headers.authorization });
      (this.script.shift() ?? reply(500, { error: { message: "no scripted response left" } }))(
        response,
        body,
      );
    });
  });

  /** Listens on a free port; resolves to `http://127.0.0.1:PORT`. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Forgets the requests and the script (between tests). */
  reset(): void {
    this.requests.length = 0;
    this.script = [];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export function reply(status: number, body: unknown, contentType = "application/json"): Script {
  return (response) => {
    response.writeHead(status, { "content-type": contentType });
    response.end(typeof body === "string" ? body : JSON.stringify(body));
  };
}

/** A chat completion (200) whose message makes these calls, as an OpenAI-compatible upstream answers. */
export function callsReply(calls: readonly { name: string; arguments: Record<string, unknown> }[]): Script {
  return reply(200, {
    id: "up",
    object: "chat.completion",
    created: 0,
    model: "scripted",
    choices: [
      {
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: null,
          tool_calls: calls.map((call, index) => ({
            id: `c${index + 1}`,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.arguments) },
          })),
        },
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}
