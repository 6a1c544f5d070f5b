import {
  type ChatWrapper,
  LlamaCompletion,
  type LlamaContext,
  type LlamaGrammar,
  type LlamaModel,
  resolveChatWrapper,
} from "node-llama-cpp";
import { type LabelModel, labelSchema, type ModelRequest, taskGrammar } from "../labeler/index.js";
import { chatHistoryFromMessages } from "./chat.js";

export interface LocalLabelModelOptions {
  /** Default 2048 tokens. */
  contextSize?: number;
  /** Default 0 (greedy): the same text always gets the same answer. */
  temperature?: number;
  seed?: number;
  /** Tokens an answer may take at most. Default 600 (enough for the longest answer the task grammar admits). */
  maxTokens?: number;
}

/**
 * The labeler's model (`LabelModel`) on a loaded local model: its own one-sequence context, the model's chat
 * template, and decoding constrained by a grammar that admits only the declared labels (or none)
 * as a JSON string / only JSON arrays of the policy's task calls. Requests run one at a time.
 */
export class LocalLabelModel implements LabelModel {
  readonly name: string;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private readonly completion: LlamaCompletion;
  private readonly wrapper: ChatWrapper;

  private constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly options: LocalLabelModelOptions,
  ) {
    this.name = `local:${model.filename ?? "model"}`;
    this.completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    this.wrapper = resolveChatWrapper(model) as ChatWrapper;
  }

  static async create(model: LlamaModel, options: LocalLabelModelOptions = {}): Promise<LocalLabelModel> {
    const context = await model.createContext({
      sequences: 1,
      threads: 1,
      contextSize: options.contextSize ?? 2048,
    });
    return new LocalLabelModel(model, context, options);
  }

  complete(request: ModelRequest, signal?: AbortSignal): Promise<string> {
    const run = this.queue.then(() => this.completeNow(request, signal));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async dispose(): Promise<void> {
    this.completion.dispose();
    await this.context.dispose();
  }

  /**
   * The grammar a request is decoded with: a label answer through node-llama-cpp's JSON-schema
   * grammar (one of the labels or none, as a JSON string), task calls through grammars/task.gbnf.
   */
  private grammarFor(request: ModelRequest): Promise<LlamaGrammar> {
    const output = request.output;
    const key =
      output.kind === "label" ? JSON.stringify(labelSchema(output.labels)) : taskGrammar(output.calls);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar =
        output.kind === "label"
          ? this.model.llama.createGrammarForJsonSchema(labelSchema(output.labels))
          : this.model.llama.createGrammar({ grammar: key });
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  private async completeNow(request: ModelRequest, signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    const grammar = this.grammarFor(request);
    const { contextText } = this.wrapper.generateContextState({
      chatHistory: chatHistoryFromMessages([
        { role: "system", content: request.system },
        { role: "user", content: request.user },
      ]),
    });
    const prompt = contextText.tokenize(this.model.tokenizer);
    const temperature = this.options.temperature ?? 0;
    return this.completion.generateCompletion(prompt, {
      grammar: await grammar,
      maxTokens: this.options.maxTokens ?? 600,
      temperature,
      ...(temperature > 0 ? { seed: this.options.seed ?? 0 } : {}),
      ...(signal ? { signal } : {}),
    });
  }
}
