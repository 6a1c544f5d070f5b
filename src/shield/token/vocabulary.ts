/**
 * A model's vocabulary as the token shield sees it: token id → raw text. No node-llama-cpp here;
 * the runtime builds the texts once per model (`decodeGgufTokens`) and hands them over.
 */
export interface TokenVocabulary {
  readonly size: number;
  /** The raw text of a token (no clean-up of spaces); "" for tokens without text. */
  text(token: number): string;
}

/** A vocabulary over an array of token texts. */
export class TextVocabulary implements TokenVocabulary {
  constructor(readonly texts: readonly string[]) {}
  get size(): number {
    return this.texts.length;
  }
  text(token: number): string {
    return this.texts[token] ?? "";
  }
}

/** GGUF token types (`tokenizer.ggml.token_type`) whose text is taken literally. */
const literalTypes = new Set([2, 3, 4, 5]);
const byteType = 6;

/** GPT-2 byte-level BPE: the printable stand-in character of each byte, inverted. */
function gpt2CharToByte(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = [...bytes];
  let next = 0;
  for (let b = 0; b < 256; b++)
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + next);
      next++;
    }
  const map = new Map<string, number>();
  bytes.forEach((byte, index) => {
    map.set(String.fromCodePoint(chars[index] as number), byte);
  });
  return map;
}

/**
 * The raw text of every token of a GGUF vocabulary (`tokenizer.ggml.model` `gpt2` — byte-level
 * BPE — or `llama` — SentencePiece with `▁` for spaces and `<0xNN>` byte tokens). A token whose
 * bytes are not valid UTF-8 on their own (a piece of a multi-byte character) gets U+FFFD in place
 * of those bytes: it can never match ASCII text, and shielded strings with non-ASCII values ban it.
 */
export function decodeGgufTokens(options: {
  tokenizerModel: string;
  tokens: readonly string[];
  tokenTypes?: readonly number[];
}): string[] {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const charToByte = options.tokenizerModel === "gpt2" ? gpt2CharToByte() : undefined;
  return options.tokens.map((token, id) => {
    const type = options.tokenTypes?.[id] ?? 1;
    if (literalTypes.has(type)) return token;
    if (charToByte !== undefined) {
      const bytes: number[] = [];
      for (const char of token) {
        const byte = charToByte.get(char);
        if (byte === undefined) return token;
        bytes.push(byte);
      }
      return decoder.decode(new Uint8Array(bytes));
    }
    if (type === byteType) {
      const match = /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
      if (match) {
        const byte = Number.parseInt(match[1] as string, 16);
        return byte < 0x80 ? String.fromCharCode(byte) : "\uFFFD";
      }
    }
    return token.replaceAll("\u2581", " ");
  });
}
