import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { type ErrorCode, MentorError } from "../errors/index.js";
import { RequestError } from "./request.js";

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: ErrorCode; [detail: string]: unknown };
}

/** The longest path parameter the routes read (a model id, a record id); longer ones get 414. */
export const maxParamLength = 256;

/** Fastify's own request errors, answered with mentor's codes (docs/server.md, "Errors"). */
const frameworkErrors: Record<string, { code: ErrorCode; param: string | null; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: "MNT_ERR_BAD_INPUT", param: "body", message: "is not valid JSON" },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: "MNT_ERR_BAD_INPUT",
    param: "body",
    message: "is empty; send a JSON object",
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: "MNT_ERR_BODY_TOO_LARGE",
    param: "body",
    message: "is larger than the server's limit",
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: "MNT_ERR_MEDIA_TYPE",
    param: "body",
    message: "has a content type the server does not read; send application/json",
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: "MNT_ERR_BAD_INPUT",
    param: "body",
    message: "is not as long as its Content-Length says",
  },
  FST_ERR_BAD_URL: {
    code: "MNT_ERR_BAD_INPUT",
    param: null,
    message: "the URL's path is not valid percent-encoded UTF-8",
  },
  FST_ERR_MAX_PARAM_LENGTH: {
    code: "MNT_ERR_URL_TOO_LONG",
    param: null,
    message: `a segment of the URL's path is longer than ${maxParamLength} characters`,
  },
};

/** Any error → its HTTP status and OpenAI's error shape; unexpected errors do not leak their text. */
export function errorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof MentorError) {
    // The evaluator's message errors begin with the field (`messages[0].mentor.task[0].name …`).
    const named =
      error.code === "MNT_ERR_MESSAGES" ? /^messages(\[\d+\]|\.[\w]+)*/.exec(error.message) : null;
    const param = error instanceof RequestError ? error.param : (named?.[0] ?? null);
    const body = errorBody(error.message, error.status, param, error.code);
    if (error.details) body.error = { ...error.details, ...body.error };
    return { status: error.status, body };
  }
  const known = frameworkErrors[(error as FastifyError).code ?? ""];
  if (known) return errorResponse(new RequestError(known.param, known.message, known.code));
  const status = (error as FastifyError).statusCode;
  if (typeof status === "number" && status >= 400 && status < 500)
    return {
      status,
      body: errorBody((error as Error).message || "bad request", status, null, "MNT_ERR_BAD_INPUT"),
    };
  return { status: 500, body: errorBody("internal server error", 500, null, "MNT_ERR_INTERNAL") };
}

export function errorBody(message: string, status: number, param: string | null, code: ErrorCode): ErrorBody {
  return { error: { message, type: errorType(status), param, code } };
}

function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/**
 * The one error handler: the status and body of `errorResponse`, `Retry-After` on 429, and
 * `x-should-retry: false` on the 4xx answers SDKs would otherwise retry (a refusal stays a refusal).
 */
export function replyWithError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, body } = errorResponse(error);
  if (status >= 500) request.log.error({ err: error }, "request failed");
  for (const [name, value] of Object.entries(errorHeaders(status))) reply.header(name, value);
  return reply.code(status).send(body);
}

export function errorHeaders(status: number): Record<string, string> {
  if (status === 429) return { "retry-after": "1" };
  if (status >= 400 && status < 500 && status !== 408) return { "x-should-retry": "false" };
  return {};
}

/**
 * Node's answer to a request it cannot read (fastify's `clientErrorHandler`), in mentor's shape: a
 * request line and headers over Node's limit (a 60 KB URL), a request that does not arrive in time,
 * bytes that are not HTTP. The connection is closed after it.
 */
export function replyToClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const { status, body } = errorResponse(clientError(error));
  if (socket.writable) {
    const text = JSON.stringify(body);
    const headers = Object.entries({
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(text)),
      connection: "close",
      ...errorHeaders(status),
    });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join("")}\r\n${text}`,
    );
  }
  socket.destroy(error);
}

function clientError(error: NodeJS.ErrnoException): MentorError {
  if (error.code === "HPE_HEADER_OVERFLOW")
    return new MentorError(
      "MNT_ERR_HEADERS_TOO_LARGE",
      `the request line (its URL) and headers are longer than ${maxHeaderSize} bytes`,
    );
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT")
    return new MentorError("MNT_ERR_TIMEOUT", "the request did not arrive in time");
  return new MentorError("MNT_ERR_BAD_INPUT", "the request is not valid HTTP/1.1");
}
