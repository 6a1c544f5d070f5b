import { seededRandom } from "../base/random.js";
import { type FamilyTokenizer, loadFamilyTokenizer, type TinyModelFamily } from "./family-tokenizer.js";
import { type GgmlType, GgufWriter } from "./gguf-writer.js";

/** llama.cpp token types (`tokenizer.ggml.token_type`). */
export const tokenTypes = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

export interface TinyModelOptions {
  family: TinyModelFamily;
  /** Where to write the GGUF file. */
  outputPath: string;
  /** Transformer blocks. Default 2. */
  layers?: number;
  /** Seed of the random weights. Default 1. */
  seed?: number;
  /** Hidden size. Default 64. */
  embeddingLength?: number;
  /** Attention heads (query). Default 4; key/value heads are half of them. */
  heads?: number;
  /** Feed-forward size. Default 4 × the hidden size. */
  feedForwardLength?: number;
  /** Trained context length written into the file. Default 8192. */
  contextLength?: number;
  /** Element type of the matrices (norm weights are always f32). Default `f16`. */
  matrixType?: GgmlType;
  /**
   * Reuse the embedding as output projection (no `output.weight`). Default false: with random
   * weights a tied output mostly repeats the input token, a separate one gives varied text.
   */
  tieOutput?: boolean;
  /** Replaces the family's chat template (Jinja), e.g. to test another template. */
  chatTemplate?: string;
}

/** What a tiny model is made of; the numbers a test may want to check. */
export interface TinyModelSummary {
  family: TinyModelFamily;
  architecture: string;
  outputPath: string;
  vocabularySize: number;
  layers: number;
  embeddingLength: number;
  tensorCount: number;
  metadataKeys: string[];
}

/** GGUF architecture name per family. */
export const familyArchitectures: Record<TinyModelFamily, string> = {
  qwen3: "qwen3",
  "llama3.1": "llama",
  gemma3: "gemma3",
};

/**
 * Writes a model with a few layers of random weights and the family's real tokenizer and chat
 * template. It loads in about 2 s and generates random text at 130–270 tokens/s on one thread: a
 * stand-in for real weights in tests of everything around the model.
 *
 * What llama.cpp (in node-llama-cpp 3.21.1) needs, found by leaving out one key or tensor at a
 * time from these files (ARCH = `qwen3`, `llama` or `gemma3`):
 * - required keys: `general.architecture`, `tokenizer.ggml.model`, `ARCH.context_length`,
 *   `ARCH.embedding_length`, `ARCH.block_count`, `ARCH.attention.layer_norm_rms_epsilon`,
 *   `ARCH.feed_forward_length` and `ARCH.attention.head_count` (without these two the loader
 *   aborts the process on a zero-sized tensor), `ARCH.attention.head_count_kv` (it defaults to
 *   head_count, which does not fit grouped-query tensors);
 * - optional keys (defaults fit): `ARCH.attention.key_length`/`value_length` (hidden / heads),
 *   `ARCH.rope.freq_base`, `ARCH.vocab_size`, `llama.rope.dimension_count`,
 *   `gemma3.attention.sliding_window`, the special token ids, `add_bos/eos_token`,
 *   `add_space_prefix` and the chat template; `tokenizer.ggml.pre` is optional for loading but
 *   without it a BPE vocabulary falls back to the default pre-tokenizer and tokenizes differently;
 * - tensors: `token_embd`, `output_norm`, and per block `attn_norm`, `attn_q`, `attn_k`, `attn_v`,
 *   `attn_output`, `ffn_norm`, `ffn_gate`, `ffn_up`, `ffn_down`; Qwen 3 and Gemma 3 also
 *   `attn_q_norm`, `attn_k_norm` (per head, length = head size); Gemma 3 also
 *   `post_attention_norm` and `post_ffw_norm`. `output` is optional (tied to `token_embd`).
 */
export async function makeTinyModel(options: TinyModelOptions): Promise<TinyModelSummary> {
  const family = options.family;
  const architecture = familyArchitectures[family];
  const layers = options.layers ?? 2;
  const embeddingLength = options.embeddingLength ?? 64;
  const heads = options.heads ?? 4;
  const keyValueHeads = Math.max(1, Math.floor(heads / 2));
  const headLength = embeddingLength / heads;
  const feedForwardLength = options.feedForwardLength ?? 4 * embeddingLength;
  const matrixType = options.matrixType ?? "f16";
  if (!Number.isInteger(layers) || layers < 1) throw new RangeError("layers must be a positive integer");
  if (!Number.isInteger(headLength) || headLength % 2 !== 0)
    throw new RangeError("the hidden size must split into heads of an even length");

  const source = loadFamilyTokenizer(family);
  const vocabulary = buildGgufVocabulary(source);
  const random = seededRandom(options.seed ?? 1);
  const writer = new GgufWriter();

  writer.setString("general.architecture", architecture);
  writer.setString("general.name", `mentor tiny ${family}`);
  writer.setString(
    "general.description",
    `random weights with the real ${family} tokenizer (${source.packageName})`,
  );
  writer.setUint32("general.file_type", matrixType === "f16" ? 1 : 0);
  writer.setUint32("general.alignment", 32);
  writer.setUint32(`${architecture}.context_length`, options.contextLength ?? 8192);
  writer.setUint32(`${architecture}.embedding_length`, embeddingLength);
  writer.setUint32(`${architecture}.block_count`, layers);
  writer.setUint32(`${architecture}.feed_forward_length`, feedForwardLength);
  writer.setUint32(`${architecture}.attention.head_count`, heads);
  writer.setUint32(`${architecture}.attention.head_count_kv`, keyValueHeads);
  writer.setUint32(`${architecture}.attention.key_length`, headLength);
  writer.setUint32(`${architecture}.attention.value_length`, headLength);
  writer.setFloat32(`${architecture}.attention.layer_norm_rms_epsilon`, family === "gemma3" ? 1e-6 : 1e-5);
  writer.setFloat32(`${architecture}.rope.freq_base`, family === "llama3.1" ? 500000 : 1000000);
  writer.setUint32(`${architecture}.vocab_size`, vocabulary.tokens.length);
  if (family === "llama3.1") writer.setUint32(`${architecture}.rope.dimension_count`, headLength);
  if (family === "gemma3") writer.setUint32(`${architecture}.attention.sliding_window`, 512);

  writer.setString("tokenizer.ggml.model", vocabulary.model);
  if (vocabulary.pre !== undefined) writer.setString("tokenizer.ggml.pre", vocabulary.pre);
  writer.setArray("tokenizer.ggml.tokens", "string", vocabulary.tokens);
  writer.setArray("tokenizer.ggml.token_type", "int32", Int32Array.from(vocabulary.types));
  if (vocabulary.scores) writer.setArray("tokenizer.ggml.scores", "float32", vocabulary.scores);
  if (vocabulary.merges) writer.setArray("tokenizer.ggml.merges", "string", vocabulary.merges);
  for (const [key, id] of Object.entries(vocabulary.specialIds))
    if (id !== undefined) writer.setUint32(`tokenizer.ggml.${key}_token_id`, id);
  writer.setBool("tokenizer.ggml.add_bos_token", vocabulary.addBos);
  writer.setBool("tokenizer.ggml.add_eos_token", vocabulary.addEos);
  if (vocabulary.addSpacePrefix !== undefined)
    writer.setBool("tokenizer.ggml.add_space_prefix", vocabulary.addSpacePrefix);
  const chatTemplate = options.chatTemplate ?? source.config.chat_template;
  if (chatTemplate) writer.setString("tokenizer.chat_template", chatTemplate);

  const matrix = (name: string, columns: number, rows: number, scale = 1 / Math.sqrt(columns)) =>
    writer.addTensor({
      name,
      dimensions: [columns, rows],
      type: matrixType,
      data: randomValues(columns * rows, scale, random),
    });
  const norm = (name: string, length: number) =>
    writer.addTensor({ name, dimensions: [length], type: "f32", data: new Float32Array(length).fill(1) });

  matrix("token_embd.weight", embeddingLength, vocabulary.tokens.length, 0.5);
  norm("output_norm.weight", embeddingLength);
  if (!options.tieOutput) matrix("output.weight", embeddingLength, vocabulary.tokens.length, 0.5);
  for (let layer = 0; layer < layers; layer++) {
    const block = `blk.${layer}`;
    norm(`${block}.attn_norm.weight`, embeddingLength);
    matrix(`${block}.attn_q.weight`, embeddingLength, heads * headLength);
    matrix(`${block}.attn_k.weight`, embeddingLength, keyValueHeads * headLength);
    matrix(`${block}.attn_v.weight`, embeddingLength, keyValueHeads * headLength);
    matrix(`${block}.attn_output.weight`, heads * headLength, embeddingLength);
    if (family !== "llama3.1") {
      norm(`${block}.attn_q_norm.weight`, headLength);
      norm(`${block}.attn_k_norm.weight`, headLength);
    }
    if (family === "gemma3") norm(`${block}.post_attention_norm.weight`, embeddingLength);
    norm(`${block}.ffn_norm.weight`, embeddingLength);
    matrix(`${block}.ffn_gate.weight`, embeddingLength, feedForwardLength);
    matrix(`${block}.ffn_up.weight`, embeddingLength, feedForwardLength);
    matrix(`${block}.ffn_down.weight`, feedForwardLength, embeddingLength);
    if (family === "gemma3") norm(`${block}.post_ffw_norm.weight`, embeddingLength);
  }

  await writer.write(options.outputPath);
  return {
    family,
    architecture,
    outputPath: options.outputPath,
    vocabularySize: vocabulary.tokens.length,
    layers,
    embeddingLength,
    tensorCount: writer.tensorCount,
    metadataKeys: writer.metadataKeys,
  };
}

/** A tokenizer in the shape of llama.cpp's `tokenizer.ggml.*` metadata. */
export interface GgufVocabulary {
  /** `gpt2` (byte-level BPE) or `llama` (SentencePiece). */
  model: "gpt2" | "llama";
  /** Pre-tokenizer name llama.cpp knows (`qwen2`, `llama-bpe`, `default`). */
  pre?: string;
  tokens: string[];
  types: number[];
  scores?: Float32Array;
  merges?: string[];
  specialIds: { bos?: number; eos?: number; padding?: number; unknown?: number };
  addBos: boolean;
  addEos: boolean;
  addSpacePrefix?: boolean;
}

/**
 * Converts a Hugging Face tokenizer into llama.cpp's vocabulary metadata the way llama.cpp's
 * converter does: byte-level BPE for Qwen 3 and Llama 3.1, SentencePiece for Gemma 3.
 */
export function buildGgufVocabulary(source: FamilyTokenizer): GgufVocabulary {
  const { tokenizer, config } = source;
  const added = new Map(tokenizer.added_tokens.map((token) => [token.id, token]));
  const idOf = (text: string | null | undefined): number | undefined => {
    if (text === null || text === undefined) return undefined;
    for (const token of tokenizer.added_tokens) if (token.content === text) return token.id;
    return tokenizer.model.vocab[text];
  };
  // Gemma's tokenizer.json also lists <image_soft_token> (id 262144), which its GGUF files leave out.
  const size = source.family === "gemma3" ? 262144 : tokenizerSize(source);
  const tokens: string[] = new Array(size);
  for (const [text, id] of Object.entries(tokenizer.model.vocab)) if (id < size) tokens[id] = text;
  const types: number[] = new Array(size).fill(tokenTypes.normal);
  for (const [id, token] of added) {
    if (id >= size) continue;
    tokens[id] = token.content;
    types[id] = token.special ? tokenTypes.control : tokenTypes.userDefined;
  }
  for (let id = 0; id < size; id++) {
    if (tokens[id] === undefined) {
      tokens[id] = `[PAD${id}]`;
      types[id] = tokenTypes.unused;
    }
  }
  const eos = idOf(config.eos_token);
  const padding = idOf(config.pad_token);
  const unknown = idOf(config.unk_token);

  if (source.family === "gemma3") {
    const scores = new Float32Array(size);
    let normalRank = 0;
    for (let id = 0; id < size; id++) {
      const token = added.get(id);
      if (token && !token.special && /^<(unused\d+|mask)>$/.test(token.content))
        types[id] = tokenTypes.control;
      if (types[id] === tokenTypes.userDefined) tokens[id] = (tokens[id] as string).replaceAll("▁", " ");
      if (!token && /^<0x[0-9A-F]{2}>$/.test(tokens[id] as string)) types[id] = tokenTypes.byte;
      const type = types[id];
      // SentencePiece merges the pair whose result scores highest; pieces are ordered by score.
      scores[id] = type === tokenTypes.normal ? -normalRank++ : type === tokenTypes.byte ? 0 : -1000;
    }
    return {
      model: "llama",
      pre: "default",
      tokens,
      types,
      scores,
      specialIds: { bos: idOf(config.bos_token), eos, padding, unknown },
      addBos: config.add_bos_token ?? true,
      addEos: config.add_eos_token ?? false,
      addSpacePrefix: false,
    };
  }

  const merges = (tokenizer.model.merges ?? []).map((merge) =>
    Array.isArray(merge) ? merge.join(" ") : merge,
  );
  const addBos =
    config.add_bos_token ?? JSON.stringify(tokenizer.post_processor ?? null).includes(`"SpecialToken"`);
  return {
    model: "gpt2",
    pre: source.family === "qwen3" ? "qwen2" : "llama-bpe",
    tokens,
    types,
    merges,
    // Qwen has no BOS token; its GGUF files name <|endoftext|> (never added: add_bos_token is false).
    specialIds: { bos: idOf(config.bos_token) ?? padding, eos, padding, unknown },
    addBos,
    addEos: config.add_eos_token ?? false,
  };
}

function tokenizerSize(source: FamilyTokenizer): number {
  let size = 0;
  for (const id of Object.values(source.tokenizer.model.vocab)) size = Math.max(size, id + 1);
  for (const token of source.tokenizer.added_tokens) size = Math.max(size, token.id + 1);
  return size;
}

function randomValues(count: number, scale: number, random: () => number): Float32Array {
  const values = new Float32Array(count);
  for (let index = 0; index < count; index++) values[index] = (random() * 2 - 1) * scale;
  return values;
}
