import assert from "node:assert/strict";

/**
 * Greedy longest-match tokenization over a toy vocabulary (`pieces`, by id); `specials` are
 * used only when `special` is true, as a model's tokenizer does with control tokens.
 */
export function toyTokenizer(
  pieces: readonly string[],
  specials: readonly string[],
): (text: string, special: boolean) => number[] {
  return (text, special) => {
    const tokens: number[] = [];
    let position = 0;
    while (position < text.length) {
      let best = -1;
      pieces.forEach((piece, id) => {
        if (!special && specials.includes(piece)) return;
        if (text.startsWith(piece, position) && (best < 0 || piece.length > (pieces[best] as string).length))
          best = id;
      });
      assert.ok(best >= 0, text.slice(position));
      tokens.push(best);
      position += (pieces[best] as string).length;
    }
    return tokens;
  };
}
