import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { seededRandom } from "../../../src/base/random.js";
import { loadFamilyTokenizer, tinyModelFamilies } from "../../../src/models/family-tokenizer.js";
import { buildGgufVocabulary } from "../../../src/models/tiny-model.js";
import {
  type AllowListSlot,
  computeTokenMask,
  type DenyListSlot,
  decodeGgufTokens,
  fallbackToken,
  isTokenAllowed,
  TextVocabulary,
  VocabularyIndex,
} from "../../../src/shield/token/index.js";
import { type HfTokenizer, loadHfTokenizer } from "../../support/hf-tokenizer.js";

// No model here: the real vocabularies of three families, decoded from their GGUF form.

const names = [
  "check_distance",
  "book_train",
  "book_flight",
  "book",
  "get_reservation_details_for_customer_account",
  "cancel_pending_order",
  "transfer_to_human_agents",
  "x",
];

describe("token shield on a toy vocabulary", () => {
  const index = new VocabularyIndex(new TextVocabulary(["a", "b", "ab", '"', 'b"', "abc", '"}', "\\", ""]));

  it("allows the tokens that keep the text a prefix of an allowed value or close it", () => {
    const slot: AllowListSlot = { kind: "allow", values: ["ab", "b"], terminator: '"' };
    const mask = computeTokenMask(index, slot, "", {});
    assert.deepEqual([...(mask.allowed ?? [])].sort(), [0, 1, 2, 4]);
    const after = computeTokenMask(index, slot, "a", {});
    assert.deepEqual([...(after.allowed ?? [])].sort(), [1, 4]);
    assert.equal(after.bias.get(1), 100);
  });

  it("adds eta on tokens toward progressing values", () => {
    const slot: AllowListSlot = { kind: "allow", values: ["ab", "b"], progressing: ["b"], terminator: '"' };
    const mask = computeTokenMask(index, slot, "", { eta: 2 });
    assert.equal(mask.bias.get(1), 102);
    assert.equal(mask.bias.get(0), 100);
    assert.equal(fallbackToken(index, mask), 4);
  });

  it("reports an empty mask when nothing can follow", () => {
    const mask = computeTokenMask(index, { kind: "allow", values: [], terminator: '"' }, "", {});
    assert.equal(mask.allowed?.size, 0);
    assert.ok(mask.empty);
    assert.ok(computeTokenMask(index, { kind: "allow", values: ["b"], terminator: '"' }, "a").empty);
  });

  it("bans the tokens that close a string on an unsafe value, and escapes", () => {
    const slot: DenyListSlot = { kind: "deny", unsafe: ["ab"], terminator: '"' };
    const mask = computeTokenMask(index, slot, "a", {});
    assert.deepEqual([...mask.banned].sort(), [4]);
    assert.ok(!isTokenAllowed(mask, 7));
    assert.ok(isTokenAllowed(mask, 1));
    assert.ok(!isTokenAllowed(mask, 4));
    assert.deepEqual([...computeTokenMask(index, slot, "ab", {}).banned].sort(), [3, 6]);
    assert.deepEqual([...computeTokenMask(index, slot, "b", {}).banned], []);
  });
});

for (const family of tinyModelFamilies) {
  describe(`token shield on the ${family} vocabulary`, () => {
    let index: VocabularyIndex;
    let hf: HfTokenizer;
    before(async () => {
      const source = loadFamilyTokenizer(family);
      const gguf = buildGgufVocabulary(source);
      const texts = decodeGgufTokens({
        tokenizerModel: gguf.model,
        tokens: gguf.tokens,
        tokenTypes: gguf.types,
      });
      index = new VocabularyIndex(new TextVocabulary(texts));
      hf = await loadHfTokenizer(source.tokenizer, source.config);
    });

    /** One token per character: a spelling in as many pieces as the name has characters. */
    function characterTokens(text: string): number[] {
      return [...text].map((char) => {
        const ids: number[] = [];
        index.forEachPrefixOf(char, (token) => ids.push(token));
        return ids[0] as number;
      });
    }

    it("decodes token texts that concatenate to the encoded text", () => {
      const samples = ["hello world", ' {"name": "check_distance"}', "a  b\n\tc", "é中文😀", " x. y, z!"];
      for (const sample of samples) {
        const ids = hf.encode(sample, { add_special_tokens: false }).ids;
        const text = ids.map((id) => index.text(id)).join("");
        // Gemma's SentencePiece adds no prefix space here; pieces of a character decode to U+FFFD.
        if (!text.includes("\uFFFD")) assert.equal(text, sample, family);
      }
    });

    it("accepts each name as the tokenizer spells it, and spellings in many pieces", () => {
      for (const name of names) {
        const slot: AllowListSlot = { kind: "allow", values: names, terminator: '"' };
        for (const spelling of [
          hf.encode(`${name}"`, { add_special_tokens: false }).ids,
          characterTokens(name),
        ]) {
          let partial = "";
          for (const token of spelling) {
            const mask = computeTokenMask(index, slot, partial);
            assert.ok(isTokenAllowed(mask, token), `${family} ${name}: ${JSON.stringify(index.text(token))}`);
            partial += index.text(token);
            if (partial.endsWith('"')) break;
          }
        }
      }
    });

    it("never spells a name outside the allow-list on random walks", () => {
      const random = seededRandom(3);
      for (let walk = 0; walk < 300; walk++) {
        const allowed = names.filter(() => random() < 0.5);
        if (allowed.length === 0) continue;
        const slot: AllowListSlot = { kind: "allow", values: allowed, terminator: '", "arguments": ' };
        let partial = "";
        for (let step = 0; step < 80; step++) {
          const mask = computeTokenMask(index, slot, partial);
          assert.equal(mask.empty, undefined, partial);
          const choices = [...(mask.allowed ?? [])];
          partial += index.text(choices[Math.floor(random() * choices.length)] as number);
          if (partial.includes('"')) break;
        }
        const value = partial.slice(0, partial.indexOf('"'));
        assert.ok(allowed.includes(value), `${family}: ${value} not in ${allowed}`);
        assert.ok(slot.terminator.startsWith(partial.slice(value.length)));
      }
    });

    it("never closes a free string on an unsafe value on random walks", () => {
      const random = seededRandom(4);
      const unsafe = ["Toronto", "Chicago", "book_train", "Zürich"];
      const slot: DenyListSlot = { kind: "deny", unsafe, terminator: '"' };
      // Candidate tokens: every piece of the unsafe values, quotes, and some others.
      const candidates = new Set<number>();
      for (const value of unsafe) {
        for (const token of hf.encode(`${value}"`, { add_special_tokens: false }).ids) candidates.add(token);
        for (const token of characterTokens(`${value}"`)) candidates.add(token);
        index.forEachPrefixOf(`${value}"}`, (token) => candidates.add(token));
      }
      let closedUnsafe = 0;
      let closed = 0;
      for (let walk = 0; walk < 2000; walk++) {
        let partial = "";
        for (let step = 0; step < 30; step++) {
          const mask = computeTokenMask(index, slot, partial);
          const choices = [...candidates].filter((token) => isTokenAllowed(mask, token));
          const text = index.text(choices[Math.floor(random() * choices.length)] as number);
          const quote = text.indexOf('"');
          if (quote >= 0) {
            closed++;
            if (unsafe.includes(partial + text.slice(0, quote))) closedUnsafe++;
            break;
          }
          partial += text;
        }
      }
      assert.equal(closedUnsafe, 0);
      assert.ok(closed > 500, `${closed} strings closed`);
    });

    // The time per step is a figure of `npm run bench:shield -- --part mask`, not an assertion.
    it("allows exactly the tokens that spell on toward a name or close it, the progressing name's eta higher", () => {
      const slot: AllowListSlot = { kind: "allow", values: names, progressing: ["book"], terminator: '"' };
      for (const partial of ["", "book"]) {
        const mask = computeTokenMask(index, slot, partial, { eta: 2 });
        const targets = names
          .filter((name) => name.startsWith(partial))
          .map((name) => ({ name, rest: `${name.slice(partial.length)}"` }));
        let towardBook = 0;
        for (let token = 0; token < index.size; token++) {
          const text = index.text(token);
          const toward = text === "" ? [] : targets.filter(({ rest }) => rest.startsWith(text));
          const where = `${family} after ${JSON.stringify(partial)}: ${JSON.stringify(text)}`;
          assert.equal(isTokenAllowed(mask, token), toward.length > 0, where);
          if (toward.length === 0) continue;
          const progressing = toward.some(({ name }) => name === "book");
          if (progressing) towardBook++;
          assert.equal(mask.bias.get(token), progressing ? 102 : 100, where);
        }
        assert.ok(towardBook > 0, `${family} after ${JSON.stringify(partial)}: no token toward book`);
      }
    });
  });
}
