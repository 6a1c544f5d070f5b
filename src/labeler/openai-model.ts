import { MentorError } from "../errors/index.js";
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
}

/**
 * The LLM labeler on any OpenAI-compatible chat endpoint (a larger model can label while a small
 * one acts). Asks for JSON matching a schema of the allowed answers where the endpoint supports
 * it; the labeler validates the answer either way.
 */
export class OpenAILabelModel implements LabelModel {
  readonly name: string;
  private useJsonSchema: boolean;

  constructor(private readonly options: OpenAILabelModelOptions) {
    this.name = `openai:${options.model}@${options.url}`;
    this.useJsonSchema = options.jsonSchema ?? true;
  }

  async complete(request: ModelRequest, signal?: AbortSignal): Promise<string> {
    const first = await this.post(request, this.useJsonSchema, signal);
    if (first.ok || !this.useJsonSchema || !/response_format|json_schema/i.test(first.text))
      return this.answer(first);
    // The endpoint does not support structured output: ask again without it (and from now on).
    this.useJsonSchema = false;
    return this.answer(await this.post(request, false, signal));
  }

  private async post(
    request: ModelRequest,
    jsonSchema: boolean,
    signal?: AbortSignal,
  ): Promise<{ ok: boolean; status: number; text: string }> {
    const body: Record<string, unknown> = {
      model: this.options.model,
      messages: [
        { role: "system", content: request.system },
        { role: "user", content: request.user },
      ],
      temperature: 0,
      max_tokens: 400,
    };
    if (jsonSchema)
      body.response_format = {
        type: "json_schema",
        json_schema: { name: "answer", strict: true, schema: answerSchema(request) },
      };
    const url = `${this.options.url.replace(/\/+$/, "")}/chat/completions`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(this.options.key ? { authorization: `Bearer ${this.options.key}` } : {}),
        },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      throw new MentorError(
        "MNT_ERR_LABELER_ENDPOINT",
        `cannot reach ${url}: ${cause ?? (error as Error).message}`,
      );
    }
    return { ok: response.ok, status: response.status, text: await response.text() };
  }

  private answer(response: { ok: boolean; status: number; text: string }): string {
    if (!response.ok)
      throw new MentorError(
        "MNT_ERR_LABELER_ENDPOINT",
        `the endpoint answered HTTP ${response.status}: ${response.text.slice(0, 200)}`,
      );
    let content: unknown;
    try {
      content = (JSON.parse(response.text) as { choices?: { message?: { content?: unknown } }[] })
        .choices?.[0]?.message?.content;
    } catch {
      content = undefined;
    }
    if (typeof content !== "string")
      throw new MentorError(
        "MNT_ERR_LABELER_OUTPUT",
        "the endpoint's answer has no choices[0].message.content",
      );
    return content;
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
