import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../../../src/base/random.js";
import {
  CallDecoder,
  type DecodePlan,
  TextVocabulary,
  VocabularyIndex,
} from "../../../src/shield/token/index.js";
import { JsonPrefix } from "../../../src/shield/token/json-prefix.js";
import { toyTokenizer } from "../../support/toy-tokenizer.js";

/** A random JSON value (nested arrays and objects, escapes, numbers of every form). */
function randomValue(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * (depth > 2 ? 4 : 6));
  if (pick === 0) return random() < 0.5 ? null : random() < 0.5;
  if (pick === 1) return Math.round((random() - 0.5) * 1e6) / (random() < 0.5 ? 1 : 1000);
  if (pick === 2 || pick === 3)
    return ["", "a", 'q"uote', "back\\slash", "new\nline", "\u00e9t\u00e9", "\u0001"][
      Math.floor(random() * 7)
    ];
  if (pick === 4)
    return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  return Object.fromEntries(
    Array.from({ length: Math.floor(random() * 4) }, (_, i) => [`k${i}`, randomValue(random, depth + 1)]),
  );
}

describe("JSON prefix", () => {
  it("takes every prefix of 300 random JSON texts, and each prefix with its completion parses", () => {
    const random = seededRandom(3);
    for (let sample = 0; sample < 300; sample++) {
      const value = randomValue(random);
      const text = JSON.stringify(value, null, sample % 3 === 0 ? 1 : undefined);
      const json = new JsonPrefix();
      for (let end = 0; end <= text.length; end++) {
        const completed = json.text + json.completion();
        assert.doesNotThrow(
          () => JSON.parse(completed),
          `${JSON.stringify(json.text)} + ${JSON.stringify(json.completion())}`,
        );
        if (end === text.length) break;
        assert.ok(json.feed(text[end] as string), `${JSON.stringify(text)} at ${end}`);
      }
      assert.ok(json.whole, text);
      assert.deepEqual(JSON.parse(json.text), value);
    }
  });

  it("refuses what no JSON value continues with, and takes nothing after a complete value", () => {
    for (const [text, refused] of [
      ["[1,", "]"],
      ['{"a"', "}"],
      ['{"a":', "}"],
      ["[tr", "x"],
      ["01", ""],
      ['"\\', "x"],
      ["[]", "]"],
      ["{", ","],
    ] as const) {
      const json = new JsonPrefix();
      let taken = 0;
      while (taken < text.length && json.feed(text[taken] as string)) taken++;
      const next = refused === "" ? text[taken] : refused;
      assert.ok(taken < text.length || !json.feed(next as string), `${text} then ${next}`);
    }
  });

  it("a random character stream: what it takes always completes to valid JSON", () => {
    const random = seededRandom(5);
    const alphabet = '[]{}",:0123456789-.eE+ tfalsenu\\';
    for (let sample = 0; sample < 2000; sample++) {
      const json = new JsonPrefix();
      for (let step = 0; step < 40; step++)
        json.feed(alphabet[Math.floor(random() * alphabet.length)] as string);
      assert.doesNotThrow(() => JSON.parse(json.text + json.completion()), json.text);
    }
  });
});

const pieces = [
  "<call>",
  "<eos>",
  '{"name": "',
  "add",
  '", "arguments": ',
  '{"ids": ',
  '["',
  "a",
  "b",
  '", "',
  '"]',
  "]",
  "}",
  '"]}',
  "[",
  '"',
  ",",
  " ",
  "x",
  "<call2>",
  // Single characters: any forced text can be written.
  ...Array.from({ length: 95 }, (_, code) => String.fromCharCode(32 + code)).filter(
    (char) => !["[", "]", "}", '"', ",", " ", "a", "b", "x"].includes(char),
  ),
];
const specials = ["<call>", "<eos>", "<call2>"];
const index = new VocabularyIndex(new TextVocabulary(pieces));
const endToken = pieces.indexOf("<eos>");

const tokenize = toyTokenizer(pieces, specials);

function plan(): DecodePlan {
  return {
    syntax: { prefix: '<call>{"name": "', paramsPrefix: '", "arguments": ', suffix: "}<eos>" },
    tools: [
      {
        name: "add",
        parameters: { type: "object", properties: { ids: { type: "array", items: { type: "string" } } } },
      },
    ],
    names: ["add"],
    progressingNames: [],
    redirects: new Map(),
    argumentSets: new Map(),
    startInCall: true,
    callsAllowed: true,
    endAllowed: true,
    endProgressing: false,
    maxCalls: 1,
    minCalls: 0,
    eta: 0.5,
    strength: 100,
    boost: false,
    maxStringTokens: 6,
  };
}

/** Feeds the tokens (the decoder's replacements in their place) and returns the call's raw text. */
function decode(tokens: number[]): { decoder: CallDecoder; raw: string; replaced: boolean } {
  const decoder = new CallDecoder(
    plan(),
    index,
    tokenize,
    (token) => token === endToken,
    (token) => specials.includes(pieces[token] as string),
  );
  const written = decoder.initialTokens();
  let replaced = false;
  for (const token of tokens) {
    if (decoder.finished) break;
    decoder.mask();
    const action = decoder.accept(token);
    if (action.replace !== undefined && (action.replace.length !== 1 || action.replace[0] !== token))
      replaced = true;
    written.push(...(action.replace ?? [token]));
    if (action.stop) break;
  }
  return { decoder, raw: written.map((token) => pieces[token]).join(""), replaced };
}

describe("array arguments", () => {
  it("an array the model writes is kept token for token and read as written", () => {
    const model = ["add", '", "arguments": ', '["', "a", '", "', "b", '"]}', "<eos>"].map((piece) =>
      pieces.indexOf(piece),
    );
    const { decoder, raw } = decode(model);
    assert.deepEqual(decoder.calls, [{ name: "add", arguments: { ids: ["a", "b"] } }]);
    assert.equal(raw, '<call>{"name": "add", "arguments": {"ids": ["a", "b"]}}<eos>');
  });

  it("an array broken off (stray text, an end token) is closed where it breaks", () => {
    for (const [tail, ids] of [
      [['["', "a", "x", '"', "x"], ["ax"]],
      [['["', "a", "<eos>"], ["a"]],
      [["[", ",", "x"], []],
      [["x"], []],
    ] as const) {
      const model = ["add", '", "arguments": ', ...tail].map((piece) => pieces.indexOf(piece));
      const { decoder, raw, replaced } = decode([...model, ...Array(8).fill(pieces.indexOf("<eos>"))]);
      assert.ok(replaced, tail.join(""));
      assert.deepEqual(decoder.calls, [{ name: "add", arguments: { ids } }], raw);
      const start = raw.indexOf('", "arguments": ') + '", "arguments": '.length;
      assert.deepEqual(JSON.parse(raw.slice(start, -"}<eos>".length)), { ids }, raw);
    }
  });

  it("random tokens: every call parses, and its raw text holds the arguments read", () => {
    const random = seededRandom(11);
    for (let run = 0; run < 400; run++) {
      const tokens = Array.from({ length: 30 }, () => Math.floor(random() * pieces.length));
      const { decoder, raw } = decode([
        pieces.indexOf("add"),
        ...tokens,
        ...Array(40).fill(pieces.indexOf("]")),
      ]);
      assert.equal(decoder.calls.length, 1, raw);
      const call = decoder.calls[0] as { arguments: Record<string, unknown> };
      assert.ok(Array.isArray(call.arguments.ids), `${raw} ${JSON.stringify(decoder.calls)}`);
      const start = raw.indexOf('", "arguments": ') + '", "arguments": '.length;
      assert.deepEqual(JSON.parse(raw.slice(start, raw.lastIndexOf("}"))), call.arguments, raw);
    }
  });
});
