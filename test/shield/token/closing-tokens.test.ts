import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadFamilyTokenizer, tinyModelFamilies } from "../../../src/models/family-tokenizer.js";
import { findModel, loadRegistry, modelsDirectory } from "../../../src/models/index.js";
import { buildGgufVocabulary } from "../../../src/models/tiny-model.js";
import type { ParameterSchema, ToolDefinition } from "../../../src/openai/index.js";
import {
  CallDecoder,
  type CallSyntax,
  type DecodePlan,
  decodeGgufTokens,
  isTokenAllowed,
  TextVocabulary,
  VocabularyIndex,
} from "../../../src/shield/token/index.js";
import { decodePlan } from "../../support/decode-plan.js";
import { readGguf } from "../../support/gguf-reader.js";

// A model's own token may close a slot and go on with the structure that follows (`"}}\n` on
// Qwen 2.5 after the last string argument). The decoder must keep such a token as the model wrote
// it, hold only its part inside the slot to the slot's rules, and force only what it did not
// write. Checked on every vocabulary token of that form, for names, free strings, enums, integers
// and booleans, as the first of two arguments and as the last, on four real vocabularies.

const controlType = 3;

interface Vocabulary {
  name: string;
  index: VocabularyIndex;
  control: Set<number>;
  syntax: CallSyntax;
}

const qwenSyntax: CallSyntax = {
  prefix: '<tool_call>\n{"name": "',
  paramsPrefix: '", "arguments": ',
  suffix: "}\n</tool_call>",
};
const syntaxes: Record<string, CallSyntax> = {
  qwen3: qwenSyntax,
  "llama3.1": { prefix: "<function=", paramsPrefix: ">", suffix: "</function><|eom_id|>" },
  gemma3: { prefix: "||call: ", paramsPrefix: "(", suffix: ")" },
};

function vocabulary(
  name: string,
  tokens: string[],
  types: number[],
  model: string,
  syntax: CallSyntax,
): Vocabulary {
  const texts = decodeGgufTokens({ tokenizerModel: model, tokens, tokenTypes: types });
  const control = new Set<number>();
  types.forEach((type, id) => {
    if (type === controlType) control.add(id);
  });
  return { name, index: new VocabularyIndex(new TextVocabulary(texts)), control, syntax };
}

function familyVocabularies(): Vocabulary[] {
  return tinyModelFamilies.map((family) => {
    const gguf = buildGgufVocabulary(loadFamilyTokenizer(family));
    return vocabulary(family, gguf.tokens, gguf.types, gguf.model, syntaxes[family] as CallSyntax);
  });
}

/** Qwen 2.5's vocabulary, from the real model where it is in the cache (`.ci/run` pulls it). */
function qwen25Vocabulary(): Vocabulary | undefined {
  const entry = findModel(loadRegistry(), "qwen2.5-coder-1.5b-instruct");
  const path = entry && join(modelsDirectory(), entry.file);
  if (path === undefined || !existsSync(path)) return undefined;
  const gguf = readGguf(path, 32 * 1024 * 1024);
  const value = (key: string) => gguf.metadata.find((entry) => entry.key === key)?.value;
  return vocabulary(
    "qwen2.5",
    value("tokenizer.ggml.tokens") as string[],
    value("tokenizer.ggml.token_type") as number[],
    value("tokenizer.ggml.model") as string,
    qwenSyntax,
  );
}

/** Greedy longest-match tokenization over the vocabulary (the decoder's forced text). */
function tokenizer(vocab: Vocabulary) {
  return (text: string, special: boolean): number[] => {
    const tokens: number[] = [];
    let position = 0;
    while (position < text.length) {
      let best = -1;
      let bestLength = 0;
      vocab.index.forEachPrefixOf(text.slice(position), (token, length) => {
        if ((special || !vocab.control.has(token)) && length > bestLength) {
          best = token;
          bestLength = length;
        }
      });
      assert.ok(best >= 0, `cannot tokenize ${JSON.stringify(text.slice(position))}`);
      tokens.push(best);
      position += bestLength;
    }
    return tokens;
  };
}

type Kind = "name" | "string" | "enum" | "integer" | "boolean";

const schemas: Record<Exclude<Kind, "name">, ParameterSchema> = {
  string: { type: "string" },
  enum: { type: "string", enum: ["economy", "business"] },
  integer: { type: "integer" },
  boolean: { type: "boolean" },
};
const values: Record<Kind, string> = {
  name: "check_distance",
  string: "Chicago",
  enum: "business",
  integer: "250",
  boolean: "false",
};

/** The text the skeleton expects right after the slot's value. */
function closingText(kind: Kind, last: boolean, syntax: CallSyntax): string {
  if (kind === "name") return `${syntax.paramsPrefix}{"a": "`;
  const quote = kind === "string" || kind === "enum" ? '"' : "";
  return last ? `${quote}}${syntax.suffix}` : `${quote}, "b": "`;
}

function plan(kind: Kind, last: boolean, syntax: CallSyntax): DecodePlan {
  const first = kind === "name" ? { type: "string" } : schemas[kind];
  const properties: Record<string, ParameterSchema> =
    last && kind !== "name" ? { a: first } : { a: first, b: { type: "string" } };
  const tool: ToolDefinition = { name: "check_distance", parameters: { type: "object", properties } };
  return decodePlan({
    syntax,
    tools: [tool, { name: "check_seats" }],
    names: ["check_distance", "check_seats"],
    argumentSets: new Map([["check_distance", new Map([["a", { unsafe: ["Toronto"] }]])]]),
  });
}

/** The model writes `text`: the longest allowed token that continues it, until it is written. */
function write(decoder: CallDecoder, vocab: Vocabulary, text: string): void {
  let position = 0;
  while (position < text.length) {
    const mask = decoder.mask();
    let best = -1;
    let bestLength = 0;
    vocab.index.forEachPrefixOf(text.slice(position), (token, length) => {
      if (vocab.control.has(token) || (mask !== undefined && !isTokenAllowed(mask, token))) return;
      if (length > bestLength) {
        best = token;
        bestLength = length;
      }
    });
    assert.ok(best >= 0, `${vocab.name}: nothing allowed continues ${JSON.stringify(text.slice(position))}`);
    const action = decoder.accept(best);
    assert.equal(decoder.stats.vetoed, 0);
    const written = (action.replace ?? [best]).map((token) => vocab.index.text(token)).join("");
    const rest = text.slice(position);
    // Forced structure may run past the text written (the slot after it is then entered).
    assert.ok(
      rest.startsWith(written) || written.startsWith(rest),
      `${vocab.name}: forced ${JSON.stringify(written)}`,
    );
    position += written.length;
  }
}

/**
 * The tokens that finish `value` from some point and go on into `closing`: the end of the value
 * (possibly nothing), then at least one character of what follows.
 */
function closingTokens(
  vocab: Vocabulary,
  value: string,
  closing: string,
): { token: number; split: number; carried: number }[] {
  const found: { token: number; split: number; carried: number }[] = [];
  vocab.index.texts.forEach((text, token) => {
    if (text === "" || vocab.control.has(token)) return;
    for (let split = 0; split <= value.length; split++) {
      const end = value.slice(split);
      if (!text.startsWith(end) || text.length === end.length) continue;
      if (closing.startsWith(text.slice(end.length)))
        found.push({ token, split, carried: text.length - end.length });
    }
  });
  return found;
}

describe("tokens that close a slot and go on with the structure after it", () => {
  const vocabularies = familyVocabularies();
  const qwen25 = qwen25Vocabulary();
  if (qwen25 === undefined)
    console.log("# qwen2.5: the real model is not in the cache (mentor pull); its vocabulary is skipped");
  else vocabularies.push(qwen25);

  for (const vocab of vocabularies)
    it(`keeps each such token as written, on the ${vocab.name} vocabulary`, () => {
      const tokenize = tokenizer(vocab);
      const counts: string[] = [];
      for (const kind of Object.keys(values) as Kind[])
        for (const last of kind === "name" ? [false] : [true, false]) {
          const value = values[kind];
          const closing = closingText(kind, last, vocab.syntax);
          const candidates = closingTokens(vocab, value, closing);
          counts.push(`${kind}${last ? " (last)" : ""} ${candidates.length}`);
          for (const { token, split, carried } of candidates) {
            const decoder = new CallDecoder(
              plan(kind, last, vocab.syntax),
              vocab.index,
              tokenize,
              () => false,
              (id) => vocab.control.has(id),
            );
            decoder.initialTokens();
            const quote = kind === "string" || kind === "enum" ? '"' : "";
            if (kind !== "name")
              write(decoder, vocab, `check_distance${vocab.syntax.paramsPrefix}{"a": ${quote}`);
            write(decoder, vocab, value.slice(0, split));
            const mask = decoder.mask();
            const label = `${vocab.name} ${kind}${last ? " last" : ""}: ${JSON.stringify(vocab.index.text(token))} after ${JSON.stringify(value.slice(0, split))}`;
            assert.ok(mask === undefined || isTokenAllowed(mask, token), `${label} is masked`);
            const action = decoder.accept(token);
            assert.equal(decoder.stats.vetoed, 0, label);
            const replaced = action.replace ?? [token];
            assert.equal(replaced[0], token, `${label} was replaced`);
            const forced = replaced
              .slice(1)
              .map((id) => vocab.index.text(id))
              .join("");
            assert.equal(forced, closing.slice(carried), `${label}: forced text`);
            assert.equal(action.stop === true, last, label);
            // The string arguments left: one character each.
            for (let left = 0; left < 2 && !decoder.finished; left++) write(decoder, vocab, 'x"');
            assert.ok(decoder.finished, label);
            const call = decoder.calls[0];
            assert.ok(call !== undefined, `${label}: no call`);
            assert.equal(call.name, "check_distance", label);
            if (kind !== "name")
              assert.deepEqual(
                call.arguments.a,
                kind === "integer" ? 250 : kind === "boolean" ? false : value,
                label,
              );
          }
        }
      console.log(`# ${vocab.name}: closing tokens tried: ${counts.join(", ")}`);
      if (vocab.name.startsWith("qwen")) {
        const stringClose = closingTokens(vocab, "Chicago", closingText("string", true, vocab.syntax));
        assert.ok(
          stringClose.some(({ token }) => vocab.index.text(token) === '"}}\n'),
          `${vocab.name} has the token "}}\\n`,
        );
      }
    });
});
