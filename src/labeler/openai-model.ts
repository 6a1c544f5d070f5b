import type OpenAI from "openai";
import { MentorError } from "../errors/index.js";
import { createOpenAIClient, requestFailure } from "../openai/index.js";
import type { Parameter, TaskCallSpec } from "../policy/index.js";
import { maxGroundedCalls, noneLabel } from "./grammar.js";
import type { LabelModel, ModelRequest } from "./model.js";

export interface OpenAILabelModelOptions {
  /** Base URL of an OpenAI-compatible API, e.g. `http://localhost:8080/v1`. */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer KEY` when given. */
  key?: string;
  /** Default true: ask for `response_format: json_schema`; dropped for good if the endpoint rejects it. */
  jsonSchema?: boolean;
  /** Milliseconds one request may take. Default 30,000 (the labeler's own `timeoutMs` also cancels it). */
  timeoutMs?: number;
  /**
   * Requests after the first on a connection error, 429 or 5xx. Default 0: a labeler that cannot
   * answer fails closed at once (the labeler asks twice only when an answer is invalid).
   */
  maxRetries?: number;
}

/**
 * The LLM labeler on any OpenAI-compatible chat endpoint (a larger model can label while a small
 * one acts), through the OpenAI SDK. Asks for JSON matching a schema of the allowed answers where
 * the endpoint supports it; the labeler validates the answer either way.
 */
export class OpenAILabelModel implements LabelModel {
  readonly name: string;
  private useJsonSchema: boolean;
  private readonly client: OpenAI;
  private readonly endpoint: string;

  constructor(private readonly options: OpenAILabelModelOptions) {
    this.name = `openai:${options.model}@${options.url}`;
    this.useJsonSchema = options.jsonSchema ?? true;
    const baseURL = options.url.replace(/\/+$/, "");
    this.endpoint = `${baseURL}/chat/completions`;
    this.client = createOpenAIClient({
      baseURL,
      ...(options.key ? { apiKey: options.key } : {}),
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 0,
    });
  }

  async complete(request: ModelRequest, signal?: AbortSignal): Promise<string> {
    try {
      return await this.ask(request, this.useJsonSchema, signal);
    } catch (error) {
      const failure = requestFailure(error);
      const unsupported =
        this.useJsonSchema &&
        failure.kind === "status" &&
        failure.status >= 400 &&
        failure.status < 500 &&
        /response_format|json_schema/i.test(failure.detail);
      if (!unsupported) throw this.labelerError(error, signal);
    }
    // The endpoint does not support structured output: ask again without it (and from now on).
    this.useJsonSchema = false;
    try {
      return await this.ask(request, false, signal);
    } catch (error) {
      throw this.labelerError(error, signal);
    }
  }

  private async ask(request: ModelRequest, jsonSchema: boolean, signal?: AbortSignal): Promise<string> {
    const completion = await this.client.chat.completions.create(
      {
        model: this.options.model,
        messages: [
          { role: "system", content: request.system },
          { role: "user", content: request.user },
        ],
        temperature: 0,
        max_tokens: 400,
        ...(jsonSchema
          ? {
              response_format: {
                type: "json_schema" as const,
                json_schema: { name: "answer", strict: true, schema: answerSchema(request) },
              },
            }
          : {}),
      },
      signal ? { signal } : {},
    );
    // A body that is not a completion (the SDK returns text that is not JSON as a string).
    const content = (completion as { choices?: { message?: { content?: unknown } }[] } | undefined)
      ?.choices?.[0]?.message?.content;
    if (typeof content !== "string")
      throw new MentorError(
        "MNT_ERR_LABELER_OUTPUT",
        "the endpoint's answer has no choices[0].message.content",
      );
    return content;
  }

  private labelerError(error: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason;
    if (error instanceof MentorError) return error;
    const failure = requestFailure(error);
    switch (failure.kind) {
      case "cancelled":
        return error;
      case "timeout":
        return new MentorError(
          "MNT_ERR_LABELER_ENDPOINT",
          `no answer from ${this.endpoint} within ${this.options.timeoutMs ?? 30_000} ms`,
        );
      case "unreachable":
        return new MentorError(
          "MNT_ERR_LABELER_ENDPOINT",
          `cannot reach ${this.endpoint}: ${failure.detail}`,
        );
      case "status":
        return new MentorError(
          "MNT_ERR_LABELER_ENDPOINT",
          `the endpoint answered HTTP ${failure.status}: ${failure.detail.slice(0, 200)}`,
        );
      case "malformed":
        return new MentorError(
          "MNT_ERR_LABELER_OUTPUT",
          `the endpoint's answer is not JSON: ${failure.detail}`,
        );
    }
  }
}

/** JSON Schema of the allowed answers (an object at the root, as structured output requires). */
export function answerSchema(request: ModelRequest): Record<string, unknown> {
  if (request.output.kind === "label") {
    return {
      type: "object",
      properties: { label: { type: "string", enum: [...request.output.labels, noneLabel] } },
      required: ["label"],
      additionalProperties: false,
    };
  }
  return {
    type: "object",
    properties: {
      calls: {
        type: "array",
        maxItems: maxGroundedCalls,
        items: { anyOf: request.output.calls.map(callSchema) },
      },
    },
    required: ["calls"],
    additionalProperties: false,
  };
}

function callSchema(call: TaskCallSpec): Record<string, unknown> {
  const names = call.parameters.map((parameter: Parameter) => parameter.name);
  return {
    type: "object",
    properties: {
      name: { type: "string", enum: [call.name] },
      arguments: {
        type: "object",
        properties: Object.fromEntries(
          call.parameters.map((parameter) => [parameter.name, parameter.jsonSchema]),
        ),
        required: names,
        additionalProperties: false,
      },
    },
    required: ["name", "arguments"],
    additionalProperties: false,
  };
}
