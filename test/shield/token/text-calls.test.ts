import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { loadFamilyTokenizer } from "../../../src/models/family-tokenizer.js";
import { buildGgufVocabulary } from "../../../src/models/tiny-model.js";
import {
  CallDecoder,
  type DecodePlan,
  decodeGgufTokens,
  isTokenAllowed,
  TextVocabulary,
  VocabularyIndex,
} from "../../../src/shield/token/index.js";
import { readTextCalls, withoutCallWrappers } from "../../../src/shield/upstream/index.js";
import { decodePlan } from "../../support/decode-plan.js";

// Under tool_choice "auto", Qwen2.5-Coder-1.5B-Instruct writes most of its calls as text: in
// ``` fences (with or without "json", pretty-printed), in a <tools> block (several calls), as a bare
// object, and sometimes in its format's <tool_call> tags. The fixture holds texts the real model
// wrote for the travel tasks (recorded with temperature 0.7, no shield) and the calls they mean.
// A scripted model writes each text through the decoder over Qwen's real vocabulary (the one of
// Qwen 2.5 but for added tokens): the decoder must read the same calls, in none mode as in token mode.

interface Recorded {
  task: string;
  seed: number;
  text: string;
  calls: { name: string; arguments: Record<string, unknown> }[];
}

const recorded = JSON.parse(
  readFileSync(new URL("../../../../test/llm/fixtures/qwen2.5-coder-texts.json", import.meta.url), "utf8"),
) as Recorded[];

const source = loadFamilyTokenizer("qwen3");
const gguf = buildGgufVocabulary(source);
const index = new VocabularyIndex(
  new TextVocabulary(
    decodeGgufTokens({ tokenizerModel: gguf.model, tokens: gguf.tokens, tokenTypes: gguf.types }),
  ),
);
const control = new Set(gguf.types.flatMap((type, id) => (type === 3 ? [id] : [])));
const endToken = gguf.tokens.indexOf("<|im_end|>");

function longestToken(text: string, accept: (token: number) => boolean): number {
  let best = -1;
  let bestLength = 0;
  index.forEachPrefixOf(text, (token, length) => {
    if (length > bestLength && accept(token)) {
      best = token;
      bestLength = length;
    }
  });
  return best;
}

function tokenize(text: string, special: boolean): number[] {
  const tokens: number[] = [];
  for (let position = 0; position < text.length; ) {
    const token = longestToken(text.slice(position), (id) => special || !control.has(id));
    assert.ok(token >= 0, text.slice(position));
    tokens.push(token);
    position += index.text(token).length;
  }
  return tokens;
}

/**
 * Where the model's text stands after the decoder wrote `written` for it: the decoder's compact
 * JSON matches the model's pretty-printed text up to whitespace. Where the model wrote more than
 * the schema holds (an argument the tool does not have), it reads on to where its text meets the
 * forced structure again.
 */
function consume(desired: string, position: number, written: string): number {
  let at = position;
  for (const char of written) {
    while (at < desired.length && desired[at] !== char && /\s/.test(desired[at] as string)) at++;
    if (desired[at] === char) at++;
    else if (!/\s/.test(char)) return resync(desired, position, written);
  }
  return at;
}

function resync(desired: string, position: number, written: string): number {
  const pattern = [...written.replace(/\s/g, "")]
    .map((char) => char.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("\\s*");
  const match = new RegExp(pattern).exec(desired.slice(position));
  assert.ok(
    match !== null,
    `the decoder wrote ${JSON.stringify(written)} at ${JSON.stringify(desired.slice(position))}`,
  );
  return position + match.index + match[0].length;
}

const route = { origin: { type: "string" }, destination: { type: "string" } };
const tools = [
  { name: "check_distance", parameters: { type: "object", properties: route } },
  { name: "check_seats", parameters: { type: "object", properties: route } },
  { name: "book_train", parameters: { type: "object", properties: route } },
  {
    name: "book_flight",
    parameters: {
      type: "object",
      properties: { ...route, travel_class: { type: "string", enum: ["economy", "business"] } },
    },
  },
];

function plan(mode: "none" | "token", maxCalls: number): DecodePlan {
  return decodePlan({
    syntax: {
      prefix: '<tool_call>\n{"name": "',
      paramsPrefix: '", "arguments": ',
      suffix: "}\n</tool_call>",
      betweenCalls: "\n",
    },
    tools,
    names: tools.map((tool) => tool.name),
    progressingNames: mode === "token" ? ["check_distance"] : [],
    startInCall: false,
    endAllowed: true,
    maxCalls,
    boost: mode === "token",
  });
}

/** The scripted model writes `text` (then ends the turn, unless `end` is false) through a decoder; returns what the decoder read. */
function writeThrough(decoder: CallDecoder, text: string, end = true): { content: string } {
  let position = 0;
  for (let step = 0; step < 2000 && !decoder.finished; step++) {
    if (!end && position >= text.length) break;
    const mask = decoder.mask();
    const token =
      position >= text.length
        ? endToken
        : longestToken(
            text.slice(position),
            (id) => !control.has(id) && (mask === undefined || isTokenAllowed(mask, id)),
          );
    assert.ok(token >= 0, `nothing allowed continues ${JSON.stringify(text.slice(position))}`);
    const action = decoder.accept(token);
    if (token !== endToken)
      position = consume(text, position, (action.replace ?? [token]).map((id) => index.text(id)).join(""));
    if (action.stop) break;
  }
  const content = decoder.textTokens.map((id) => index.text(id)).join("");
  return { content: (decoder.textCalls > 0 ? withoutCallWrappers(content) : content).trim() };
}

describe("calls the real model wrote as text", () => {
  it("has recorded texts of every form", () => {
    const forms = ["```json", "```\n", "<tools>", '{"name"'];
    for (const form of forms)
      assert.ok(
        recorded.some((entry) => entry.text.includes(form) || entry.text.startsWith(form.trim())),
        `a recorded text with ${JSON.stringify(form)}`,
      );
    assert.ok(
      recorded.some((entry) => entry.calls.length === 0),
      "a recorded text without a call",
    );
  });

  for (const mode of ["none", "token"] as const)
    it(`reads each recorded text's calls as calls (${mode} mode)`, () => {
      let calls = 0;
      for (const entry of recorded) {
        const label = `${entry.task} seed ${entry.seed}`;
        const decoder = new CallDecoder(
          plan(mode, Number.POSITIVE_INFINITY),
          index,
          tokenize,
          (id) => id === endToken,
        );
        const { content } = writeThrough(decoder, entry.text);
        assert.deepEqual(decoder.calls, entry.calls, label);
        assert.equal(decoder.stats.vetoed, 0, label);
        calls += decoder.calls.length;
        if (entry.calls.length > 0)
          assert.ok(!/```|<\/?tools>|"name"/.test(content), `${label}: content ${content}`);
        else assert.equal(content, entry.text.trim(), label);
        // One call per turn: the first call is read and the turn ends there.
        const single = new CallDecoder(plan(mode, 1), index, tokenize, (id) => id === endToken);
        writeThrough(single, entry.text);
        assert.deepEqual(single.calls, entry.calls.slice(0, 1), `${label} (one call)`);
      }
      assert.ok(calls >= recorded.length, `${calls} calls`);
    });
});

describe("the same texts from an upstream that does not parse calls (mentor --upstream)", () => {
  // llama-cpp-python's server answers the model's calls as content: mentor reads them there in the
  // same forms, so the baseline over an upstream is the one over the local engine.
  const names = new Set(tools.map((tool) => tool.name));
  it("reads each recorded text's calls, and leaves the text without their wrappers", () => {
    for (const entry of recorded) {
      const label = `${entry.task} seed ${entry.seed}`;
      const read = readTextCalls(entry.text, names);
      // An argument the tool does not declare is read as written; the decoder has no slot for it.
      const declared = read.calls.map((call) => {
        const properties = tools.find((tool) => tool.name === call.name)?.parameters.properties ?? {};
        return {
          name: call.name,
          arguments: Object.fromEntries(Object.entries(call.arguments).filter(([key]) => key in properties)),
        };
      });
      assert.deepEqual(declared, entry.calls, label);
      if (entry.calls.length > 0)
        assert.ok(!/```|<\/?tools>|"name"/.test(read.content ?? ""), `${label}: content ${read.content}`);
      else assert.equal(read.content, entry.text, label);
    }
  });

  it("reads a JSON array of calls, a call in an xml fence, and Llama's `parameters`", () => {
    const route = { origin: "Toronto", destination: "Chicago" };
    const both = `<tools>\n[{"name": "check_distance", "arguments": ${JSON.stringify(route)}}, {"name": "check_seats", "arguments": ${JSON.stringify(route)}}]\n</tools>`;
    assert.deepEqual(readTextCalls(both, names), {
      content: null,
      calls: [
        { name: "check_distance", arguments: route },
        { name: "check_seats", arguments: route },
      ],
    });
    const xml = `Checking.\n\`\`\`xml\n<function_call>\n  {"name": "check_distance", "arguments": ${JSON.stringify(route)}}\n</function_call>\n\`\`\``;
    assert.deepEqual(readTextCalls(xml, names), {
      content: "Checking.",
      calls: [{ name: "check_distance", arguments: route }],
    });
    assert.deepEqual(
      readTextCalls(`{"name": "check_seats", "parameters": ${JSON.stringify(route)}}`, names).calls,
      [{ name: "check_seats", arguments: route }],
    );
  });

  it("leaves JSON that names no declared tool as text, and marks a call the text ends inside", () => {
    const data = 'The passenger:\n{"name": "Ada Lovelace", "age": 36}';
    assert.deepEqual(readTextCalls(data, names), { content: data, calls: [] });
    assert.deepEqual(readTextCalls('```json\n{"name": "check_se', names).calls, [
      { name: "check_se", arguments: {}, incomplete: true },
    ]);
    assert.deepEqual(
      readTextCalls('```json\n{"name": "check_seats", "arguments": {"origin": "To', names).calls,
      [{ name: "check_seats", arguments: {}, incomplete: true }],
    );
  });
});

describe("forms other servers' users report for Qwen2.5-Coder (larger models)", () => {
  // Not recorded here: reported for Qwen2.5-Coder-7B/32B in vLLM's issues #32926 and #17821 and
  // its pull request #33083 (a JSON array of calls in <tools>, <function_call> in an xml fence).
  const route = { origin: "Toronto", destination: "Chicago" };
  const cases = [
    {
      text: `<tools>\n[{"name": "check_distance", "arguments": ${JSON.stringify(route)}}, {"name": "check_seats", "arguments": ${JSON.stringify(route)}}]\n</tools>`,
      calls: [
        { name: "check_distance", arguments: route },
        { name: "check_seats", arguments: route },
      ],
    },
    {
      text: `\`\`\`xml\n<function_call>\n  {"name": "check_distance", "arguments": ${JSON.stringify(route)}}\n</function_call>\n\`\`\``,
      calls: [{ name: "check_distance", arguments: route }],
    },
  ];
  for (const { text, calls } of cases)
    it(`reads ${JSON.stringify(text.slice(0, 24))}…`, () => {
      const decoder = new CallDecoder(
        plan("none", Number.POSITIVE_INFINITY),
        index,
        tokenize,
        (id) => id === endToken,
      );
      const { content } = writeThrough(decoder, text);
      assert.deepEqual(decoder.calls, calls);
      assert.equal(content, "");
    });
});

describe("a call written as text meets the shield from its name slot on", () => {
  it("cannot name an unsafe tool in a ```json block, and a redirect keeps the wish's step", () => {
    for (const redirect of [false, true]) {
      const shielded = {
        ...plan("token", 1),
        names: ["check_distance", "check_seats", "book_train"],
        redirects: new Map(redirect ? [["book_flight", "check_seats"]] : []),
      };
      const decoder = new CallDecoder(shielded, index, tokenize, (id) => id === endToken);
      // The model writes the opening of its usual fenced call itself.
      writeThrough(decoder, '```json\n{\n  "name": "', false);
      assert.ok(decoder.inCall, "the opening starts a call");
      const mask = decoder.mask();
      assert.ok(mask?.allowed !== undefined);
      for (const token of mask.allowed) {
        const text = index.text(token);
        const toward = ["check_distance", "check_seats", "book_train", ...(redirect ? ["book_flight"] : [])];
        assert.ok(
          toward.some((name) => name.startsWith(text) || text.startsWith(name)),
          `${JSON.stringify(text)} leads to no allowed name`,
        );
      }
      // The model goes on with the unsafe name it wanted: masked, or replaced by the advised step.
      const flight = longestToken("book_flight", () => true);
      const rest = longestToken(index.text(flight) === "book" ? "_flight" : "flight", () => true);
      decoder.accept(flight);
      decoder.mask();
      const action = decoder.accept(rest);
      if (redirect) {
        assert.equal(decoder.stats.redirected, 1);
        assert.ok(
          (action.replace ?? [])
            .map((id) => index.text(id))
            .join("")
            .startsWith("check_seats"),
          "the advised tool is written",
        );
      } else assert.ok(decoder.stats.vetoed > 0, "the unsafe name is vetoed");
    }
  });
});
