import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { type ErrorCode, MentorError } from "../errors/index.js";
import { RequestError } from "./request.js";

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: ErrorCode; [detail: string]: unknown };
}

/** Fastify's own request errors, answered with mentor's codes (docs/server.md, "Errors"). */
const frameworkErrors: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: "MNT_ERR_BAD_INPUT", message: "is not valid JSON" },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: "MNT_ERR_BAD_INPUT", message: "is empty; send a JSON object" },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: "MNT_ERR_BODY_TOO_LARGE",
    message: "is larger than the server's limit",
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: "MNT_ERR_MEDIA_TYPE",
    message: "has a content type the server does not read; send application/json",
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: "MNT_ERR_BAD_INPUT",
    message: "is not as long as its Content-Length says",
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
  if (known) return errorResponse(new RequestError("body", known.message, known.code));
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
