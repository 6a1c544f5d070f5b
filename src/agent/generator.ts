import type OpenAI from "openai";
import { defaultMaxTokens } from "../base/defaults.js";
import { MentorError } from "../errors/index.js";
import type { Engine, GenerationResult } from "../llm/index.js";
import {
  type ChatMessage,
  type ChatTool,
  createOpenAIClient,
  requestFailure,
  type ToolChoice,
} from "../openai/index.js";
import { type ShieldSets, turnSets } from "../shield/token/index.js";
import { plainToolChoice, readTextCalls, upstreamShield } from "../shield/upstream/index.js";

/** One generation request of a turn (OpenAI shapes). */
export interface GenerationRequest {
  messages: readonly ChatMessage[];
  tools: readonly ChatTool[];
  toolChoice: ToolChoice;
  /** Whether the model may write several calls in one message. Default true. */
  parallelToolCalls?: boolean;
  /** Token shield: what it bans and boosts during decoding. Only generators with `tokenShield`. */
  tokenShield?: { sets: ShieldSets; eta: number };
  seed?: number;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: readonly string[];
  /**
   * `response_format`'s JSON Schema. The local engine decodes an answer that cannot call a tool
   * under its grammar (`jsonSchemaGrammar`); an upstream endpoint gets it as `response_format`.
   */
  responseSchema?: Record<string, unknown>;
  signal?: AbortSignal;
}

/**
 * A call as the model wrote it; `invalid` says why it is blocked without being judged: its
 * arguments could not be read, or it is not a call the request offers (`offeredCall`).
 */
export interface GeneratedCall {
  name: string;
  arguments: Record<string, unknown>;
  invalid?: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface Generation {
  content: string | null;
  toolCalls: GeneratedCall[];
  finishReason: "stop" | "tool_calls" | "length" | "refused";
  /** Why nothing was generated (`refused`). */
  refusal?: string;
  usage: Usage;
}

/** One model generation per call: the local engine, or an upstream OpenAI-compatible endpoint. */
export interface TurnGenerator {
  /**
   * Whether the generator takes `tokenShield`: the local engine applies it token by token, an
   * upstream endpoint what a request can carry (safe tools, tool_choice, narrowed schemas, grammar).
   */
  readonly tokenShield: boolean;
  generate(request: GenerationRequest): Promise<Generation>;
  /**
   * Throws `MNT_ERR_CONTEXT_LENGTH` when the conversation cannot fit the model's context with
   * `maxTokens`: the turn asks before grounding, so the labeler never reads an over-long
   * conversation. Optional: an upstream endpoint judges its own context.
   */
  checkContext?(request: Pick<GenerationRequest, "messages" | "tools" | "maxTokens">): void;
}

/** The local engine (token shield available). */
export class EngineGenerator implements TurnGenerator {
  readonly tokenShield = true;

  constructor(readonly engine: Engine) {}

  checkContext(request: Pick<GenerationRequest, "messages" | "tools" | "maxTokens">): void {
    this.engine.checkContext(request.messages, request.tools, request.maxTokens);
  }

  async generate(request: GenerationRequest): Promise<Generation> {
    let result: GenerationResult;
    try {
      result = await this.engine.generate({
        messages: request.messages,
        tools: request.tools,
        toolChoice: request.toolChoice,
        parallelToolCalls: request.parallelToolCalls,
        shield: request.tokenShield ? { mode: "token", ...request.tokenShield } : { mode: "none" },
        ...(request.responseSchema !== undefined &&
        (request.tools.length === 0 || request.toolChoice === "none")
          ? { responseSchema: request.responseSchema }
          : {}),
        seed: request.seed,
        temperature: request.temperature,
        topP: request.topP,
        maxTokens: request.maxTokens,
        stop: request.stop,
        signal: request.signal,
      });
    } catch (error) {
      // The token budget ran out inside a call: for the client, a cut answer (OpenAI's `length`),
      // which spent (at most) the whole budget.
      if (error instanceof MentorError && error.code === "MNT_ERR_ENGINE_CALL_INCOMPLETE")
        return {
          content: null,
          toolCalls: [],
          finishReason: "length",
          usage: { promptTokens: 0, completionTokens: request.maxTokens ?? defaultMaxTokens },
        };
      throw error;
    }
    return {
      content: result.content,
      toolCalls: result.toolCalls.map((call) => ({ name: call.name, arguments: call.arguments })),
      finishReason: result.finishReason,
      ...(result.refusal !== undefined ? { refusal: result.refusal } : {}),
      usage: {
        promptTokens: result.stats.promptTokens,
        completionTokens: result.stats.completionTokens,
      },
    };
  }
}

export interface UpstreamOptions {
  /** Base URL of an OpenAI-compatible API, with or without the trailing `/v1`. */
  url: string;
  /** Sent as `Authorization: Bearer KEY`; without one, no Authorization header is sent. */
  apiKey?: string;
  /** The model id the upstream serves. */
  model: string;
  /** Milliseconds one generation may take. Default 300,000 (the request's own signal also cancels it). */
  timeoutMs?: number;
  /**
   * Requests after the first on a connection error, 429 or 5xx. Default 0: the failure goes back to
   * the client as a 502, and OpenAI's clients retry that themselves.
   */
  maxRetries?: number;
  /**
   * Token shield: `gbnf` also sends a GBNF `grammar` of the answer (llama.cpp's server,
   * llama-cpp-python) in Hermes call syntax, and reads the calls from the text it answers.
   * Default: none (tools, tool_choice and narrowed schemas only).
   */
  grammar?: "gbnf";
}

/**
 * An OpenAI-compatible endpoint (llama-server, vLLM, a hosted model) through the openai SDK. With
 * `tokenShield`, the request carries what the upstream can enforce (`upstreamShield`): only the
 * safe tools, `tool_choice: "required"` while the turn may not end, argument schemas narrowed to
 * the allowed values, and with `grammar: "gbnf"` a grammar that excludes the masked names and values.
 */
export class UpstreamGenerator implements TurnGenerator {
  readonly tokenShield = true;
  readonly endpoint: string;
  private readonly client: OpenAI;

  constructor(readonly options: UpstreamOptions) {
    const baseURL = apiBase(options.url);
    this.endpoint = `${baseURL}/chat/completions`;
    this.client = createOpenAIClient({
      baseURL,
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
      timeoutMs: options.timeoutMs ?? 300_000,
      maxRetries: options.maxRetries ?? 0,
    });
  }

  async generate(request: GenerationRequest): Promise<Generation> {
    let tools = request.tools;
    let toolChoice = request.toolChoice;
    let grammar: string | undefined;
    if (request.tokenShield) {
      const shield = upstreamShield({
        sets: request.tokenShield.sets,
        tools,
        toolChoice,
        ...(request.parallelToolCalls !== undefined ? { parallelToolCalls: request.parallelToolCalls } : {}),
        ...(this.options.grammar !== undefined ? { grammar: this.options.grammar } : {}),
      });
      if (shield.refusal !== undefined)
        return {
          content: null,
          toolCalls: [],
          finishReason: "refused",
          refusal: shield.refusal,
          usage: { promptTokens: 0, completionTokens: 0 },
        };
      ({ tools, toolChoice, grammar } = shield);
    } else if (typeof toolChoice === "object" && toolChoice.type === "allowed_tools") {
      // The upstream may not read allowed_tools: it gets the tools offered and required or auto.
      const turn = turnSets({ tools: tools.map((tool) => tool.function.name), toolChoice });
      tools = tools.filter((tool) => turn.offered.includes(tool.function.name));
      toolChoice = plainToolChoice(toolChoice, turn.callRequired);
    }
    const body = {
      model: this.options.model,
      // The upstream sees plain OpenAI messages: mentor's grounding stays here.
      // An assistant message's null content goes up as "": llama-cpp-python's server (0.3.x)
      // rejects null there, which OpenAI's clients send with every call they echo back.
      messages: request.messages.map(({ mentor: _grounding, ...message }) =>
        message.role === "assistant" && message.content === null ? { ...message, content: "" } : message,
      ) as unknown as OpenAI.ChatCompletionMessageParam[],
      ...(tools.length > 0
        ? {
            tools: tools as OpenAI.ChatCompletionTool[],
            tool_choice: toolChoice as OpenAI.ChatCompletionToolChoiceOption,
            parallel_tool_calls: request.parallelToolCalls,
          }
        : {}),
      // llama.cpp's server and llama-cpp-python read it; others ignore a field they do not know.
      ...(grammar !== undefined ? { grammar } : {}),
      ...(request.responseSchema !== undefined
        ? {
            response_format: {
              type: "json_schema" as const,
              json_schema: { name: "answer", schema: request.responseSchema },
            },
          }
        : {}),
      // Undefined fields are left out of the JSON body.
      seed: request.seed,
      temperature: request.temperature,
      top_p: request.topP,
      max_tokens: request.maxTokens,
      stop: request.stop ? [...request.stop] : undefined,
      stream: false as const,
    };
    let completion: unknown;
    try {
      completion = await this.client.chat.completions.create(
        body,
        request.signal ? { signal: request.signal } : {},
      );
    } catch (error) {
      throw this.upstreamError(error, request.signal);
    }
    const generation = readCompletion(completion, this.endpoint);
    const callsPossible = request.tools.length > 0 && request.toolChoice !== "none";
    if (!callsPossible || generation.toolCalls.length > 0 || generation.content === null) return generation;
    // An upstream that does not parse calls (llama-cpp-python's chat templates; any upstream under
    // a grammar, which goes up with tool_choice none) answers them as text: they are read here in
    // the forms the local engine reads, so the evaluator judges them rather than a client that
    // would read them itself.
    const written = readTextCalls(
      generation.content,
      new Set(request.tools.map((tool) => tool.function.name)),
    );
    if (written.calls.length === 0) return generation;
    // A call cut by max_tokens: a cut answer, as the local engine reports it (OpenAI's `length`).
    if (written.calls.some((call) => call.incomplete))
      return { ...generation, content: written.content, toolCalls: [], finishReason: "length" };
    const toolCalls = written.calls.map(({ incomplete: _incomplete, ...call }) => call);
    return { ...generation, content: written.content, toolCalls, finishReason: "tool_calls" };
  }

  private upstreamError(error: unknown, signal: AbortSignal | undefined): MentorError {
    const failure = requestFailure(error);
    if (signal?.aborted || failure.kind === "cancelled")
      return new MentorError("MNT_ERR_CANCELLED", "the generation was cancelled");
    switch (failure.kind) {
      case "timeout":
        return new MentorError(
          "MNT_ERR_UPSTREAM",
          `${this.endpoint}: no answer within ${this.options.timeoutMs ?? 300_000} ms`,
        );
      case "unreachable":
        return new MentorError("MNT_ERR_UPSTREAM", `${this.endpoint}: ${failure.detail}`);
      case "status":
        return new MentorError(
          "MNT_ERR_UPSTREAM",
          `${this.endpoint} answered ${failure.status}: ${failure.detail.slice(0, 500)}`,
        );
      case "malformed":
        return new MentorError("MNT_ERR_UPSTREAM", `${this.endpoint} answered something that is not JSON`);
    }
  }
}

interface UpstreamCompletion {
  choices?: {
    message?: {
      content?: string | null;
      tool_calls?: { function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** The SDK's parsed answer (a string when the body was not JSON) → a generation. */
function readCompletion(answer: unknown, endpoint: string): Generation {
  if (typeof answer !== "object" || answer === null)
    throw new MentorError("MNT_ERR_UPSTREAM", `${endpoint} answered something that is not JSON`);
  const completion = answer as UpstreamCompletion;
  const choice = completion.choices?.[0];
  if (choice?.message === undefined)
    throw new MentorError("MNT_ERR_UPSTREAM", `${endpoint} answered a completion without choices[0].message`);
  const toolCalls = (choice.message.tool_calls ?? []).map((call): GeneratedCall => {
    const name = call.function?.name ?? "";
    try {
      const parsed = JSON.parse(call.function?.arguments || "{}") as unknown;
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        return { name, arguments: parsed as Record<string, unknown> };
      return { name, arguments: {}, invalid: "the arguments are not a JSON object" };
    } catch {
      return { name, arguments: {}, invalid: "the arguments are not valid JSON" };
    }
  });
  const finish = choice.finish_reason;
  return {
    content: choice.message.content ?? null,
    toolCalls,
    finishReason: toolCalls.length > 0 ? "tool_calls" : finish === "length" ? "length" : "stop",
    usage: {
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0,
    },
  };
}

/** The `/v1` base of an OpenAI-compatible API given with or without it. */
export function apiBase(url: string): string {
  const base = url.replace(/\/+$/, "");
  return base.endsWith("/v1") ? base : `${base}/v1`;
}
