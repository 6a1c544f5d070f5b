import type OpenAI from "openai";
import { MentorError } from "../errors/index.js";
import { createOpenAIClient, requestFailure } from "../openai/index.js";
import type { AgentPrompt } from "./prompts.js";

export type AgentName = "translator" | "evaluator" | "orchestrator" | "reviewer";

/** One request to the endpoint, as the transcript keeps it. */
export interface Exchange {
  agent: AgentName;
  messages: OpenAI.ChatCompletionMessageParam[];
  answer: string;
  ms: number;
}

export interface EndpointOptions {
  /** Base URL of an OpenAI-compatible API, with its `/v1`: `http://127.0.0.1:8080/v1`. */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer KEY` when given. */
  key?: string;
  /** Tokens per answer. Default 2048. */
  maxTokens?: number;
  /** Default 0. */
  temperature?: number;
  /** Milliseconds one request may take. Default 600,000. */
  timeoutMs?: number;
  /** Ask for `response_format: json_schema` where an agent answers JSON. Default true; dropped for good if the endpoint rejects it. */
  jsonSchema?: boolean;
  /** Extra fields for every request body (e.g. `{mentor: {shield: "none"}}` for a mentor server with a policy). */
  extraBody?: Record<string, unknown>;
  /** Called with every exchange as it completes (the transcript). */
  onExchange?: (exchange: Exchange) => void;
}

/** The agents' OpenAI-compatible endpoint: one chat completion per question, timed and kept. */
export class AgentEndpoint {
  readonly exchanges: Exchange[] = [];
  private useJsonSchema: boolean;
  private readonly client: OpenAI;
  private readonly where: string;

  constructor(private readonly options: EndpointOptions) {
    this.useJsonSchema = options.jsonSchema ?? true;
    const baseURL = options.url.replace(/\/+$/, "");
    this.where = `${baseURL}/chat/completions`;
    this.client = createOpenAIClient({
      baseURL,
      ...(options.key ? { apiKey: options.key } : {}),
      timeoutMs: options.timeoutMs ?? 600_000,
      maxRetries: 1,
    });
  }

  /** Whether requests still carry `response_format` (not turned off, not dropped after a 4xx). */
  get structured(): boolean {
    return this.useJsonSchema;
  }

  /** The answer's text; with `schema`, structured output is asked for where the endpoint allows it. */
  async ask(agent: AgentName, prompt: AgentPrompt, schema?: Record<string, unknown>): Promise<string> {
    const started = performance.now();
    let answer: string;
    try {
      answer = await this.complete(prompt, schema !== undefined && this.useJsonSchema ? schema : undefined);
    } catch (error) {
      const failure = requestFailure(error);
      const unsupported =
        schema !== undefined &&
        this.useJsonSchema &&
        failure.kind === "status" &&
        failure.status >= 400 &&
        failure.status < 500 &&
        /response_format|json_schema/i.test(failure.detail);
      if (!unsupported) throw this.endpointError(error);
      this.useJsonSchema = false;
      try {
        answer = await this.complete(prompt, undefined);
      } catch (again) {
        throw this.endpointError(again);
      }
    }
    const exchange: Exchange = { agent, messages: prompt.messages, answer, ms: performance.now() - started };
    this.exchanges.push(exchange);
    this.options.onExchange?.(exchange);
    return answer;
  }

  private async complete(prompt: AgentPrompt, schema: Record<string, unknown> | undefined): Promise<string> {
    const body = {
      model: this.options.model,
      messages: prompt.messages,
      temperature: this.options.temperature ?? 0,
      max_tokens: this.options.maxTokens ?? 2048,
      ...(schema !== undefined
        ? { response_format: { type: "json_schema" as const, json_schema: { name: "answer", schema } } }
        : {}),
      ...(this.options.extraBody ?? {}),
    };
    const completion = await this.client.chat.completions.create(
      body as OpenAI.ChatCompletionCreateParamsNonStreaming,
    );
    const content = (completion as { choices?: { message?: { content?: unknown } }[] } | undefined)
      ?.choices?.[0]?.message?.content;
    if (typeof content !== "string")
      throw new MentorError(
        "MNT_ERR_FORMALIZE_ENDPOINT",
        `${this.where} answered without choices[0].message.content`,
      );
    return content;
  }

  private endpointError(error: unknown): unknown {
    if (error instanceof MentorError) return error;
    const failure = requestFailure(error);
    const detail =
      failure.kind === "status"
        ? `HTTP ${failure.status}: ${failure.detail.slice(0, 300)}`
        : failure.kind === "cancelled" || failure.kind === "timeout"
          ? failure.kind
          : failure.detail;
    return new MentorError("MNT_ERR_FORMALIZE_ENDPOINT", `${this.where}: ${detail}`);
  }
}
