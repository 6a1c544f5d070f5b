import {
  type ChatWrapper,
  getLlama,
  type Llama,
  LlamaCompletion,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaGpuType,
  type LlamaGrammar,
  type LlamaModel,
  LlamaText,
  resolveChatWrapper,
  type Token,
  TokenBias,
} from "node-llama-cpp";
import PQueue from "p-queue";
import { defaultContextSize, defaultMaxTokens, defaultSequences } from "../base/defaults.js";
import { jsonSchemaGrammar } from "../base/json-grammar.js";
import { MentorError } from "../errors/index.js";
import { type ChatMessage, type ChatTool, messageText } from "../openai/index.js";
import {
  CallDecoder,
  type CallSyntax,
  type DecodedCall,
  type DecodeStats,
  decodeGgufTokens,
  type GenerateOptions,
  planGeneration,
  TextVocabulary,
  type TokenMask,
  VocabularyIndex,
} from "../shield/token/index.js";
import { withoutCallWrappers } from "../shield/upstream/index.js";
import { chatFunctions, chatHistoryFromMessages } from "./chat.js";
import type { GpuChoice } from "./gpu.js";

export interface EngineOptions {
  /** Path of a GGUF file. */
  modelPath: string;
  /** Context size in tokens. Default 4096. */
  contextSize?: number;
  /** Threads per context. Default 1 (on a 2-core machine more threads are far slower). */
  threads?: number;
  /**
   * Which llama.cpp backend to use: `auto` (default) picks the best prebuilt GPU binary that loads
   * on this machine (CUDA, Vulkan, Metal) and falls back to the CPU; `cpu` never uses a GPU; the
   * others insist on that backend and fail if it cannot load. Only prebuilt binaries are used (no
   * compile). With a GPU, the model's layers are offloaded to it as far as its memory allows.
   */
  gpu?: GpuChoice;
  /**
   * Sequences in the context: generations that run at once (each with its own KV cache of
   * `contextSize` tokens). Default 2.
   */
  sequences?: number;
}

export interface GenerationStats extends DecodeStats {
  /** The conversation's tokens as the model reads them (the forced opening of a call not counted). */
  promptTokens: number;
  /**
   * The answer's tokens: the call opening a turn that must call starts in, then every token kept
   * after it, sampled and forced (`tokens`). Never above `maxTokens`.
   */
  completionTokens: number;
  /** Prompt tokens found already evaluated in the sequence's cache (not evaluated again). */
  reusedTokens: number;
  /** Wall time of the generation (prompt evaluation included). */
  ms: number;
}

export interface GenerationResult {
  content: string | null;
  toolCalls: DecodedCall[];
  finishReason: "stop" | "tool_calls" | "length" | "refused";
  /** Why nothing was generated (`refused`): nothing is allowed. */
  refusal?: string;
  /** The raw text of each call as the model wrote it (prefix to suffix), in `toolCalls` order. */
  rawCalls: string[];
  /**
   * The tokens of the answer after the prompt, sampled and forced, as the model's context holds
   * them (a structure the last call's suffix ends is recorded, not evaluated).
   */
  tokens: number[];
  stats: GenerationStats;
}

/** One llama.cpp binding per backend choice, loaded once per process. */
const sharedLlamas = new Map<GpuChoice, Promise<Llama>>();

function loadLlama(threads: number, gpu: GpuChoice = "auto"): Promise<Llama> {
  let llama = sharedLlamas.get(gpu);
  if (!llama) {
    // build "never": only the prebuilt binaries installed with node-llama-cpp (CPU, and the
    // optional CUDA and Vulkan packages) are tried, never a download of llama.cpp or a compile.
    llama = getLlama({
      gpu: gpu === "cpu" ? false : gpu,
      build: "never",
      skipDownload: true,
      maxThreads: threads,
      logLevel: "error" as never,
    })
      .then(async (loaded) => {
        // node-llama-cpp quietly falls back to the CPU for a backend its platform lacks (metal on Linux).
        if (gpu !== "auto" && gpu !== "cpu" && loaded.gpu !== gpu) {
          const got = loaded.gpu === false ? "the CPU" : loaded.gpu;
          await loaded.dispose();
          throw new Error(`node-llama-cpp loaded ${got} instead`);
        }
        return loaded;
      })
      .catch((error: unknown) => {
        sharedLlamas.delete(gpu);
        const { name, message } = error as Error;
        const reason = name === "Error" || message === name ? message : `${name}: ${message}`;
        throw new MentorError(
          "MNT_ERR_ENGINE_GPU",
          `--gpu ${gpu}: no prebuilt llama.cpp binary for it loads on this machine (${reason}); use --gpu auto or --gpu cpu`,
        );
      });
    sharedLlamas.set(gpu, llama);
  }
  // The binding caps every context's threads at its maxThreads, set by the first load: a later
  // engine that asks for more threads raises the cap.
  return llama.then((loaded) => {
    if (loaded.maxThreads !== 0 && loaded.maxThreads < threads) loaded.maxThreads = threads;
    return loaded;
  });
}

/**
 * A local model with one context of several sequences, and the token shield's generation loop on
 * `LlamaContextSequence.evaluate()`. Generations run at once on free sequences (llama.cpp
 * batches them); when every sequence is busy they wait in arrival order.
 */
export class Engine {
  /** Sequences not generating now. */
  private readonly idle: LlamaContextSequence[];
  /** Generations in arrival order, as many at once as there are sequences. */
  private readonly queue: PQueue;

  private constructor(
    readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly wrapper: ChatWrapper,
    readonly syntax: CallSyntax,
    readonly vocabulary: VocabularyIndex,
  ) {
    this.idle = Array.from({ length: context.totalSequences }, () => context.getSequence());
    this.queue = new PQueue({ concurrency: context.totalSequences });
  }

  /** Sequences in the context (generations that can run at once). */
  get sequences(): number {
    return this.context.totalSequences;
  }

  /** The backend llama.cpp runs on: false (CPU) or `cuda`, `vulkan`, `metal`. */
  get gpu(): LlamaGpuType {
    return this.model.llama.gpu;
  }

  static async load(options: EngineOptions): Promise<Engine> {
    const threads = options.threads ?? 1;
    try {
      const llama = await loadLlama(threads, options.gpu ?? "auto");
      const model = await llama.loadModel({ modelPath: options.modelPath });
      const context = await model.createContext({
        contextSize: options.contextSize ?? defaultContextSize,
        threads,
        sequences: options.sequences ?? defaultSequences,
      });
      const wrapper = resolveChatWrapper(model) as ChatWrapper;
      const call = wrapper.settings.functions.call;
      const syntax: CallSyntax = {
        prefix: LlamaText(call.prefix).toString(),
        paramsPrefix: LlamaText(call.paramsPrefix).toString(),
        suffix: LlamaText(call.suffix).toString(),
      };
      const parallel = wrapper.settings.functions.parallelism?.call;
      if (parallel !== undefined) syntax.betweenCalls = LlamaText(parallel.betweenCalls ?? "").toString();
      const metadata = model.fileInfo.metadata.tokenizer.ggml as unknown as {
        model: string;
        tokens: string[];
        token_type?: number[];
      };
      const texts = decodeGgufTokens({
        tokenizerModel: metadata.model,
        tokens: metadata.tokens,
        ...(metadata.token_type ? { tokenTypes: metadata.token_type } : {}),
      });
      const vocabulary = new VocabularyIndex(new TextVocabulary(texts));
      return new Engine(model, context, wrapper, syntax, vocabulary);
    } catch (error) {
      if (error instanceof MentorError) throw error;
      throw new MentorError(
        "MNT_ERR_ENGINE_MODEL",
        `cannot load ${options.modelPath}: ${(error as Error).message}`,
      );
    }
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }

  /** Renders the prompt with the model's chat wrapper (messages and tool descriptions). */
  renderPrompt(messages: readonly ChatMessage[], tools: readonly ChatTool[] = []): Token[] {
    const definitions = tools.map((tool) => tool.function);
    const { contextText } = this.wrapper.generateContextState({
      chatHistory: chatHistoryFromMessages(messages),
      ...(definitions.length > 0 ? { availableFunctions: chatFunctions(definitions) } : {}),
    });
    return contextText.tokenize(this.model.tokenizer);
  }

  /**
   * Throws `MNT_ERR_CONTEXT_LENGTH` when the conversation and twice `maxTokens` cannot fit the
   * context, the check `generate` makes on its prompt (which adds the shield's text to these
   * messages), here before anything else reads them: first a bound from the characters of the
   * messages' text (no token is longer than the vocabulary's longest text), then their tokens.
   */
  checkContext(
    messages: readonly ChatMessage[],
    tools: readonly ChatTool[] = [],
    maxTokens = defaultMaxTokens,
  ): void {
    const room = this.context.contextSize - maxTokens * 2;
    const characters = messages.reduce((sum, message) => sum + messageText(message.content).length, 0);
    const atLeast = Math.ceil(characters / Math.max(1, this.vocabulary.maxTextLength));
    if (atLeast > room) throw contextLengthError(`at least ${atLeast}`, maxTokens, this.context.contextSize);
    const tokens = this.renderPrompt(messages, tools).length;
    if (tokens > room) throw contextLengthError(`${tokens}`, maxTokens, this.context.contextSize);
  }

  async generate(options: GenerateOptions): Promise<GenerationResult> {
    const started = performance.now();
    const tools = (options.tools ?? []).map((tool) => tool.function);
    if (options.responseSchema !== undefined && (tools.length === 0 || options.toolChoice === "none"))
      return this.generateUnder(options.responseSchema, options, started);
    const planned = planGeneration(options, tools, this.syntax);
    if (typeof planned === "string") {
      const stats = {
        sampled: 0,
        forced: 0,
        vetoed: 0,
        redirected: 0,
        maskSteps: 0,
        maskMs: 0,
        promptTokens: 0,
        completionTokens: 0,
        reusedTokens: 0,
        ms: 0,
      };
      return {
        content: null,
        toolCalls: [],
        finishReason: "refused",
        refusal: planned,
        rawCalls: [],
        tokens: [],
        stats,
      };
    }
    const model = this.model;
    const decoder = new CallDecoder(
      planned,
      this.vocabulary,
      (text, special) => Array.from(model.tokenize(text, special)) as number[],
      (token) => model.isEogToken(token as Token),
      (token) => model.isSpecialToken(token as Token),
    );
    const conversation = this.renderPrompt(options.messages, options.tools);
    const prompt = [...conversation, ...(decoder.initialTokens() as Token[])];
    const maxTokens = options.maxTokens ?? defaultMaxTokens;
    if (prompt.length + maxTokens * 2 > this.context.contextSize)
      throw contextLengthError(`${prompt.length}`, maxTokens, this.context.contextSize);
    // p-queue gets no signal: it would free the slot of an aborted generation at once, while
    // the sequence is still busy until the loop sees the abort.
    return (await this.queue.add(async () => {
      if (options.signal?.aborted) throw cancelled();
      const sequence = this.takeIdle(prompt);
      try {
        return await this.run(sequence, prompt, conversation.length, decoder, options, started);
      } finally {
        this.idle.push(sequence);
      }
    })) as GenerationResult;
  }

  /** Grammars of `response_format` schemas, by the schema's JSON (a formalize run asks with one schema). */
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  /**
   * An answer without calls decoded under the grammar of a JSON Schema (`response_format`):
   * every answer that ends within `maxTokens` is a JSON value the schema's shape admits.
   */
  private async generateUnder(
    schema: Record<string, unknown>,
    options: GenerateOptions,
    started: number,
  ): Promise<GenerationResult> {
    const key = JSON.stringify(schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = this.model.llama.createGrammar({ grammar: jsonSchemaGrammar(schema) });
      if (this.grammars.size >= 16) this.grammars.delete(this.grammars.keys().next().value as string);
      this.grammars.set(key, grammar);
    }
    const prompt = this.renderPrompt(options.messages);
    const maxTokens = options.maxTokens ?? defaultMaxTokens;
    if (prompt.length + maxTokens * 2 > this.context.contextSize)
      throw contextLengthError(`${prompt.length}`, maxTokens, this.context.contextSize);
    const decoding = await grammar;
    return (await this.queue.add(async () => {
      if (options.signal?.aborted) throw cancelled();
      const sequence = this.takeIdle(prompt);
      const completion = new LlamaCompletion({ contextSequence: sequence });
      try {
        const { response, metadata } = await completion.generateCompletionWithMeta(prompt, {
          grammar: decoding,
          maxTokens,
          temperature: options.temperature ?? 0.7,
          seed: options.seed ?? 0,
          ...(options.topP !== undefined ? { topP: options.topP } : {}),
          // Stop at the next token, not mid-batch: a completion disposed while its sequence still
          // decodes crashes the process (DisposedError from node-llama-cpp's sampler).
          ...(options.signal ? { signal: options.signal, stopOnAbortSignal: true } : {}),
        });
        if (metadata.stopReason === "abort") throw cancelled();
        const tokens = Array.from(this.model.tokenize(response)) as number[];
        return {
          content: response,
          toolCalls: [],
          finishReason: metadata.stopReason === "maxTokens" ? "length" : "stop",
          rawCalls: [],
          tokens,
          stats: {
            sampled: tokens.length,
            forced: 0,
            vetoed: 0,
            redirected: 0,
            maskSteps: 0,
            maskMs: 0,
            promptTokens: prompt.length,
            completionTokens: tokens.length,
            reusedTokens: 0,
            ms: performance.now() - started,
          },
        } satisfies GenerationResult;
      } finally {
        completion.dispose();
        this.idle.push(sequence);
      }
    })) as GenerationResult;
  }

  /**
   * The free sequence whose cached tokens share the longest prefix with the prompt (a follow-up
   * turn of a conversation finds its earlier turns still evaluated). The queue runs at most as
   * many generations as there are sequences, so one is free.
   */
  private takeIdle(prompt: readonly Token[]): LlamaContextSequence {
    let best = 0;
    let bestLength = -1;
    this.idle.forEach((sequence, index) => {
      const length = commonPrefixLength(sequence.contextTokens, prompt);
      if (length > bestLength) {
        best = index;
        bestLength = length;
      }
    });
    return this.idle.splice(best, 1)[0] as LlamaContextSequence;
  }

  /** `answerStart`: where the answer begins in the prompt (a forced call opening is the answer's). */
  private async run(
    sequence: LlamaContextSequence,
    prompt: Token[],
    answerStart: number,
    decoder: CallDecoder,
    options: GenerateOptions,
    started: number,
  ): Promise<GenerationResult> {
    const model = this.model;
    const maxTokens = options.maxTokens ?? defaultMaxTokens;
    // Reuse the evaluated prefix shared with the sequence's previous generation (at least one
    // token is evaluated, so that there is something to sample from).
    const common = Math.min(commonPrefixLength(sequence.contextTokens, prompt), prompt.length - 1);
    if (common < sequence.nextTokenIndex)
      await sequence.eraseContextTokenRanges([{ start: common, end: sequence.nextTokenIndex }]);
    const empty = new TokenBias(model.tokenizer);
    const biasFor = (mask: TokenMask | undefined): TokenBias => {
      if (mask === undefined) return empty;
      const bias = new TokenBias(model.tokenizer);
      for (const [token, logit] of mask.bias) bias.set(token as Token, { logit });
      for (const token of mask.banned) bias.set(token as Token, "never");
      return bias;
    };
    const sampling = {
      temperature: options.temperature ?? 0.7,
      ...(options.topP !== undefined ? { topP: options.topP } : {}),
      seed: options.seed ?? 0,
      yieldEogToken: true,
      tokenBias: () => biasFor(decoder.mask()),
    };
    let iterator = sequence.evaluate(prompt.slice(common), sampling);
    let cut = false;
    /** The cut fell on a step that completed a call: that call is not whole within max_tokens. */
    let cutCall = false;
    const opening = prompt.length - answerStart;
    const written: number[] = [];
    const stops = options.stop?.filter((stop) => stop !== "") ?? [];
    let freeText = "";
    let stopAt: number | undefined;
    try {
      let step = await iterator.next();
      while (!step.done) {
        if (options.signal?.aborted) throw cancelled();
        const inCall = decoder.inCall;
        const calls = decoder.calls.length;
        const action = decoder.accept(step.value as number);
        const taken = action.replace ?? [step.value as number];
        // max_tokens counts every token of the answer, forced ones too: a step (a sampled token
        // and the structure it forces) that would go past it is not taken, and ends the answer.
        if (opening + written.length - (action.rewind ?? 0) + taken.length > maxTokens) {
          cut = true;
          cutCall = decoder.calls.length > calls;
          break;
        }
        if (action.rewind !== undefined) written.splice(written.length - action.rewind, action.rewind);
        written.push(...taken);
        if (stops.length > 0 && !inCall && !decoder.inCall && decoder.calls.length === 0) {
          freeText += this.vocabulary.text(step.value as number);
          stopAt = firstStop(freeText, stops);
          if (stopAt !== undefined) break;
        }
        if (action.stop) break;
        if (decoder.stats.sampled >= maxTokens || opening + written.length >= maxTokens) {
          cut = true;
          break;
        }
        if (action.rewind !== undefined) {
          // A redirected name: its evaluated tokens are taken back and the advised name evaluated
          // in a new evaluation (the sampler starts again from the seed).
          await iterator.return();
          const end = sequence.nextTokenIndex;
          if (action.rewind > 0)
            await sequence.eraseContextTokenRanges([{ start: end - action.rewind, end }]);
          iterator = sequence.evaluate((action.replace ?? []) as Token[], sampling);
          step = await iterator.next();
        } else step = await iterator.next(action.replace as Token[] | undefined);
      }
    } finally {
      await iterator.return();
    }
    if (decoder.inCall || cutCall)
      throw new MentorError(
        "MNT_ERR_ENGINE_CALL_INCOMPLETE",
        cut
          ? `the call could not be completed within ${maxTokens} tokens`
          : "the generation ended inside a call",
      );
    const detokenized = model.detokenize(decoder.textTokens as Token[]);
    const free = stopAt !== undefined ? freeText.slice(0, stopAt) : detokenized;
    const text = (decoder.textCalls > 0 ? withoutCallWrappers(free) : free).trim();
    const stats: GenerationStats = {
      ...decoder.stats,
      promptTokens: answerStart,
      completionTokens: opening + written.length,
      reusedTokens: common,
      ms: performance.now() - started,
    };
    const result: GenerationResult = {
      content: text === "" ? null : text,
      toolCalls: decoder.calls,
      finishReason: decoder.calls.length > 0 ? "tool_calls" : cut ? "length" : "stop",
      // From the raw token texts: llama.cpp's detokenize drops spaces before punctuation (Llama 3).
      tokens: written,
      rawCalls: decoder.callTokenLists.map((tokens) =>
        tokens.map((token) => this.vocabulary.text(token)).join(""),
      ),
      stats,
    };
    return result;
  }
}

function commonPrefixLength(cached: readonly Token[], prompt: readonly Token[]): number {
  let length = 0;
  while (length < cached.length && length < prompt.length && cached[length] === prompt[length]) length++;
  return length;
}

/** Where the first stop string begins in the text, if one occurs. */
function firstStop(text: string, stops: readonly string[]): number | undefined {
  let first: number | undefined;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (first === undefined || at < first)) first = at;
  }
  return first;
}

function cancelled(): MentorError {
  return new MentorError("MNT_ERR_CANCELLED", "the generation was cancelled");
}

/** A result as an OpenAI assistant message (`arguments` a JSON string). */
export function assistantMessage(result: GenerationResult): Record<string, unknown> {
  return {
    role: "assistant",
    content: result.content,
    ...(result.toolCalls.length > 0
      ? {
          tool_calls: result.toolCalls.map((call, position) => ({
            id: `call_${position}`,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.arguments) },
          })),
        }
      : {}),
  };
}

function contextLengthError(promptTokens: string, maxTokens: number, contextSize: number): MentorError {
  return new MentorError(
    "MNT_ERR_CONTEXT_LENGTH",
    `the prompt (${promptTokens} tokens) and max_tokens (${maxTokens}) do not fit the context (${contextSize})`,
  );
}
