/**
 * @huggingface/tokenizers, loaded without its type declarations: they use extensionless
 * relative imports, which `moduleResolution: NodeNext` rejects. This is the part tests use.
 */
export interface HfTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): { ids: number[] };
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
}

export async function loadHfTokenizer(tokenizerJson: object, tokenizerConfig: object): Promise<HfTokenizer> {
  const specifier: string = "@huggingface/tokenizers";
  const module = (await import(specifier)) as {
    Tokenizer: new (tokenizer: object, config: object) => HfTokenizer;
  };
  return new module.Tokenizer(tokenizerJson, tokenizerConfig);
}
