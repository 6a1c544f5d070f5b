import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";

export interface OpenAIClientOptions {
  /** Base URL of the API, including its `/v1`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer KEY`; without one, no Authorization header is sent. */
  apiKey?: string;
  /** Milliseconds one attempt may take. */
  timeoutMs: number;
  /** Attempts after the first on a connection error, 408, 409, 429 or 5xx (with backoff). */
  maxRetries: number;
}

/**
 * An OpenAI SDK client for any OpenAI-compatible endpoint. It reads nothing from the environment
 * (`OPENAI_API_KEY`, `OPENAI_ORG_ID`, … belong to the user's OpenAI account, not to an upstream
 * mentor was pointed at), and sends no Authorization header without a key.
 */
export function createOpenAIClient(options: OpenAIClientOptions): OpenAI {
  return new OpenAI({
    baseURL: options.baseURL,
    // The SDK insists on a key; without one the header is removed below.
    apiKey: options.apiKey ?? "none",
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
    ...(options.apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {}),
  });
}

/** Why a request through the SDK failed. */
export type RequestFailure =
  | { kind: "cancelled" }
  | { kind: "timeout" }
  /** No HTTP answer; `detail` is the innermost cause (`connect ECONNREFUSED 127.0.0.1:9`). */
  | { kind: "unreachable"; detail: string }
  /** An HTTP error; `detail` is the body's `error` (JSON) or the status line. */
  | { kind: "status"; status: number; detail: string }
  /** A 2xx answer the SDK could not read (not JSON). */
  | { kind: "malformed"; detail: string };

export function requestFailure(error: unknown): RequestFailure {
  if (error instanceof APIUserAbortError) return { kind: "cancelled" };
  if (error instanceof APIConnectionTimeoutError) return { kind: "timeout" };
  if (error instanceof APIConnectionError) return { kind: "unreachable", detail: innermostCause(error) };
  if (error instanceof APIError && error.status !== undefined)
    return {
      kind: "status",
      status: error.status,
      detail: error.error !== undefined ? JSON.stringify(error.error) : error.message,
    };
  return { kind: "malformed", detail: error instanceof Error ? error.message : String(error) };
}

function innermostCause(error: Error): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return (current as Error).message;
}
