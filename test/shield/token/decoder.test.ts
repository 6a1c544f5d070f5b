import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../../../src/base/random.js";
import {
  CallDecoder,
  type DecodePlan,
  TextVocabulary,
  VocabularyIndex,
} from "../../../src/shield/token/index.js";
import { decodePlan } from "../../support/decode-plan.js";
import { toyTokenizer } from "../../support/toy-tokenizer.js";

// No model: a toy vocabulary and a sampler that ignores the bias half of the time, so the veto
// alone must keep every call well-formed and free of unsafe names and values.

const specials = ["<eos>", "<call>"];
const pieces = [
  ...Array.from({ length: 95 }, (_, code) => String.fromCharCode(32 + code)),
  '",',
  '", "',
  '"}',
  "check",
  "_distance",
  "book",
  "_train",
  "_flight",
  "Tor",
  "onto",
  'Toronto"',
  'onto"',
  "Chicago",
  'go"',
  "\\",
  "\n",
  "true",
  "12",
  "007",
  ...specials,
];
const index = new VocabularyIndex(new TextVocabulary(pieces));
const endToken = pieces.indexOf("<eos>");

const tokenize = toyTokenizer(pieces, specials);

const names = ["check_distance", "book_train", "book_flight"];
const toySyntax = { prefix: '<call>{"name": "', paramsPrefix: '", "arguments": ', suffix: "}<eos>" };
const tools = names.map((name) => ({
  name,
  parameters: {
    type: "object",
    properties: {
      origin: { type: "string" },
      city: { enum: ["Toronto", "Chicago"] },
      seats: { type: "integer" },
      urgent: { type: "boolean" },
      extra: { type: "object" },
    },
  },
}));
const temptations = [
  "book",
  "_train",
  "Tor",
  "onto",
  'Toronto"',
  'onto"',
  "Chicago",
  'go"',
  "\\",
  "\n",
  "<eos>",
  "<call>",
].map((piece) => pieces.indexOf(piece));

describe("call decoder with an adversarial sampler", () => {
  for (const parallel of [false, true])
    it(`writes only allowed names, never closes on unsafe values, and every call parses (${parallel ? "parallel calls" : "one call per turn"})`, () => {
      const random = seededRandom(9);
      let vetoed = 0;
      let endsRedirected = 0;
      const callCounts = new Map<number, number>();
      for (let run = 0; run < 500; run++) {
        const minCalls = parallel ? run % 3 : 0;
        const plan: DecodePlan = {
          syntax: {
            prefix: '<call>{"name": "',
            paramsPrefix: '", "arguments": ',
            suffix: "}<eos>",
            ...(parallel ? { betweenCalls: "\n" } : {}),
          },
          tools,
          names: ["check_distance", "book_flight"],
          progressingNames: ["check_distance"],
          redirects: new Map(),
          argumentSets: new Map(
            names.map((name) => [
              name,
              new Map([
                ["origin", { unsafe: ["Toronto", "Tor"] }],
                ["city", { unsafe: ["Toronto"] }],
              ]),
            ]),
          ),
          startInCall: run % 2 === 0,
          // Every other free start steers the vetoed end of the turn to an advised call.
          ...(run % 4 === 1
            ? {
                endRedirect: "check_distance",
                redirectArguments: new Map([
                  ["check_distance", new Map([["origin", { allowed: ["Chicago"] }]])],
                ]),
              }
            : {}),
          callsAllowed: true,
          endAllowed: false,
          endProgressing: false,
          maxCalls: parallel ? Number.POSITIVE_INFINITY : 1,
          minCalls,
          eta: 0.5,
          strength: 100,
          boost: true,
          maxStringTokens: 6,
        };
        const decoder = new CallDecoder(plan, index, tokenize, (token) => token === endToken);
        decoder.initialTokens();
        for (let step = 0; step < 1000 && !decoder.finished; step++) {
          const mask = decoder.mask();
          const draw = random();
          const allowed = mask?.allowed !== undefined ? [...mask.allowed] : [];
          const token =
            draw < 0.3
              ? Math.floor(random() * pieces.length)
              : draw < 0.6 || allowed.length === 0
                ? (temptations[Math.floor(random() * temptations.length)] as number)
                : (allowed[Math.floor(random() * allowed.length)] as number);
          const action = decoder.accept(token);
          if (action.stop) break;
        }
        assert.ok(decoder.finished, `run ${run}`);
        assert.ok(decoder.calls.length >= Math.max(1, minCalls), `run ${run}: ${decoder.calls.length} calls`);
        if (!parallel) assert.equal(decoder.calls.length, 1);
        callCounts.set(decoder.calls.length, (callCounts.get(decoder.calls.length) ?? 0) + 1);
        assert.equal(decoder.callTokenLists.length, decoder.calls.length);
        decoder.calls.forEach((call, position) => {
          assert.ok(plan.names.includes(call.name), call.name);
          assert.notEqual(call.arguments.origin, "Toronto");
          assert.notEqual(call.arguments.origin, "Tor");
          assert.equal(call.arguments.city, "Chicago");
          assert.equal(typeof call.arguments.urgent, "boolean");
          assert.ok(Number.isInteger(call.arguments.seats));
          const raw = (decoder.callTokenLists[position] as number[])
            .map((token) => index.text(token))
            .join("");
          assert.ok(raw.startsWith(plan.syntax.prefix), raw);
          assert.ok(raw.endsWith(plan.syntax.suffix), raw);
          const start = raw.indexOf(plan.syntax.paramsPrefix) + plan.syntax.paramsPrefix.length;
          assert.deepEqual(JSON.parse(raw.slice(start, -plan.syntax.suffix.length)), call.arguments, raw);
        });
        // With one call per turn, a redirected end is the turn's call: the advised tool and value.
        if (!parallel && decoder.stats.redirected > 0)
          assert.deepEqual(
            [decoder.calls[0]?.name, decoder.calls[0]?.arguments.origin],
            ["check_distance", "Chicago"],
            `run ${run}`,
          );
        vetoed += decoder.stats.vetoed;
        endsRedirected += decoder.stats.redirected;
      }
      assert.ok(vetoed > 100, `${vetoed} vetoes`);
      assert.ok(endsRedirected > 20, `${endsRedirected} ends redirected`);
      // With parallel calls the sampler also opens calls of its own (more than minCalls).
      if (parallel)
        assert.ok(
          [...callCounts.keys()].some((count) => count > 2),
          JSON.stringify([...callCounts]),
        );
    });
});

describe("ending the turn as the progressing move", () => {
  const syntax = toySyntax;
  const freePlan = (boost: boolean, endProgressing: boolean): DecodePlan =>
    decodePlan({
      syntax,
      tools,
      names,
      startInCall: false,
      endAllowed: true,
      endProgressing,
      eta: 0.75,
      boost,
      maxStringTokens: 6,
    });
  const opener = pieces.indexOf("<call>");
  const isEnd = (token: number) => token === endToken;

  it("puts -eta on the tokens that open a call, and nothing else", () => {
    const mask = new CallDecoder(freePlan(true, true), index, tokenize, isEnd).mask();
    assert.deepEqual([...(mask?.bias ?? [])], [[opener, -0.75]]);
    assert.equal(mask?.allowed, undefined);
    assert.equal(mask?.banned.size, 0);
  });

  it("leaves free text unbiased without the boost or when ending does not progress", () => {
    assert.equal(new CallDecoder(freePlan(false, true), index, tokenize, isEnd).mask(), undefined);
    assert.equal(new CallDecoder(freePlan(true, false), index, tokenize, isEnd).mask(), undefined);
  });

  it("still opens a call when the model writes the prefix anyway", () => {
    const decoder = new CallDecoder(freePlan(true, true), index, tokenize, isEnd);
    decoder.mask();
    assert.deepEqual(decoder.accept(opener).replace, tokenize(syntax.prefix, true));
    assert.ok(decoder.inCall);
  });
});

describe("intent-keeping: a name that can only become an unsafe tool", () => {
  const plan = (redirects: Map<string, string>): DecodePlan =>
    decodePlan({ syntax: toySyntax, tools, names: ["check_distance", "book_train"], redirects });
  const isEnd = (token: number) => token === endToken;
  const piece = (text: string) => pieces.indexOf(text);

  it("is taken back and replaced by the advised tool, whose arguments come next", () => {
    const decoder = new CallDecoder(
      plan(new Map([["book_flight", "check_distance"]])),
      index,
      tokenize,
      isEnd,
    );
    decoder.initialTokens();
    const mask = decoder.mask();
    assert.ok(mask?.allowed?.has(piece("book")), "the model may start the unsafe name");
    assert.deepEqual(decoder.accept(piece("book")), {});
    assert.ok(decoder.mask()?.allowed?.has(piece("_flight")));
    const action = decoder.accept(piece("_flight"));
    assert.equal(action.rewind, 1, "the name's evaluated token is taken back");
    const written = (action.replace ?? []).map((token) => pieces[token]).join("");
    assert.equal(written, 'check_distance", "arguments": {"origin": "');
    assert.equal(decoder.stats.redirected, 1);
    assert.equal(decoder.stats.vetoed, 0);
  });

  it("steers the redirected call to the advised values, and only the redirected one", () => {
    const steered = decodePlan({
      syntax: toySyntax,
      tools,
      names: ["check_distance", "book_train"],
      redirects: new Map([["book_flight", "check_distance"]]),
      redirectArguments: new Map([["check_distance", new Map([["origin", { allowed: ["Chicago"] }]])]]),
    });
    const redirected = new CallDecoder(steered, index, tokenize, isEnd);
    redirected.initialTokens();
    for (const text of ["book", "_flight"]) {
      redirected.mask();
      redirected.accept(piece(text));
    }
    const mask = redirected.mask();
    assert.ok(mask?.allowed?.has(piece("Chicago")));
    assert.ok(!mask?.allowed?.has(piece("Tor")), "the model's own value is not the advised one");
    // The advised tool named by the model itself is shielded as usual: its origin is free.
    const direct = new CallDecoder(steered, index, tokenize, isEnd);
    direct.initialTokens();
    for (const text of ["check", "_distance", '",']) {
      direct.mask();
      direct.accept(piece(text));
    }
    assert.equal(direct.mask()?.allowed, undefined);
  });

  it("is masked when no redirect is known, and the shared prefix still leads to the allowed tool", () => {
    const decoder = new CallDecoder(plan(new Map()), index, tokenize, isEnd);
    decoder.initialTokens();
    decoder.accept(piece("book"));
    const mask = decoder.mask();
    assert.ok(mask?.allowed?.has(piece("_train")));
    assert.ok(!mask?.allowed?.has(piece("_flight")));
  });
});

describe("intent-keeping: the end of a turn that may not end", () => {
  const isEnd = (token: number) => token === endToken;
  const piece = (text: string) => pieces.indexOf(text);
  const plan = (endRedirect?: string): DecodePlan =>
    decodePlan({
      syntax: toySyntax,
      tools,
      names: ["check_distance", "book_train"],
      startInCall: false,
      ...(endRedirect ? { endRedirect } : {}),
      redirectArguments: new Map([["check_distance", new Map([["origin", { allowed: ["Chicago"] }]])]]),
    });
  /** The model writes "Ok", then samples `last` (by default the end token). */
  const endAfterText = (decoder: CallDecoder, last = endToken) => {
    assert.deepEqual(decoder.initialTokens(), [], "the model may write text first");
    for (const text of ["O", "k"]) {
      decoder.mask();
      assert.deepEqual(decoder.accept(piece(text)), {});
    }
    decoder.mask();
    return decoder.accept(last);
  };

  it("becomes the advised call, steered to the advised values, after the model's text", () => {
    const decoder = new CallDecoder(plan("check_distance"), index, tokenize, isEnd);
    const action = endAfterText(decoder);
    const written = (action.replace ?? []).map((token) => pieces[token]).join("");
    assert.equal(written, '<call>{"name": "check_distance", "arguments": {"origin": "');
    assert.equal(action.stop, undefined);
    assert.equal(decoder.stats.vetoed, 1);
    assert.equal(decoder.stats.redirected, 1);
    const mask = decoder.mask();
    assert.ok(mask?.allowed?.has(piece("Chicago")));
    assert.ok(!mask?.allowed?.has(piece("Tor")), "only the advised origin");
    assert.equal(decoder.textTokens.map((token) => pieces[token]).join(""), "Ok");
  });

  it("takes the end as reached once the free text has spent its budget (text cut by max_tokens)", () => {
    const decoder = new CallDecoder({ ...plan("check_distance"), freeTextBudget: 2 }, index, tokenize, isEnd);
    const action = endAfterText(decoder, piece("O"));
    const written = (action.replace ?? []).map((token) => pieces[token]).join("");
    assert.equal(written, '<call>{"name": "check_distance", "arguments": {"origin": "');
    assert.equal(
      decoder.textTokens.map((token) => pieces[token]).join(""),
      "Ok",
      "the third token is not text",
    );
  });

  it("ends the text early enough for the advised call to fit within max_tokens", () => {
    // No room for text besides the call: the first token becomes the call.
    const tight = new CallDecoder(
      { ...plan("check_distance"), freeTextBudget: 100, maxTokens: 8 },
      index,
      tokenize,
      isEnd,
    );
    assert.deepEqual(tight.initialTokens(), []);
    tight.mask();
    const written = (tight.accept(piece("O")).replace ?? []).map((token) => pieces[token]).join("");
    assert.equal(written, '<call>{"name": "check_distance", "arguments": {"origin": "');
    assert.deepEqual(tight.textTokens, []);
    // Room enough: the text keeps its budget.
    const roomy = new CallDecoder(
      { ...plan("check_distance"), freeTextBudget: 100, maxTokens: 1000 },
      index,
      tokenize,
      isEnd,
    );
    assert.equal(endAfterText(roomy, piece("O")).replace, undefined);
  });

  it("opens a call whose name is the model's when no call is advised", () => {
    const decoder = new CallDecoder(plan(), index, tokenize, isEnd);
    const action = endAfterText(decoder);
    assert.deepEqual(action.replace, tokenize(toySyntax.prefix, true));
    assert.equal(decoder.stats.redirected, 0);
    assert.deepEqual(decoder.mask()?.allowed?.has(piece("book")), true);
  });
});

describe("boolean values", () => {
  it("masks an unsafe boolean value, and the veto holds when the sampler ignores the mask", () => {
    const plan = decodePlan({
      syntax: toySyntax,
      tools: [{ name: "book", parameters: { type: "object", properties: { urgent: { type: "boolean" } } } }],
      names: ["book"],
      argumentSets: new Map([["book", new Map([["urgent", { unsafe: ["false"] }]])]]),
    });
    const decoder = new CallDecoder(plan, index, tokenize, (token) => token === endToken);
    decoder.initialTokens();
    for (const text of ["book", '",'] as const) {
      decoder.mask();
      decoder.accept(pieces.indexOf(text));
    }
    const mask = decoder.mask();
    assert.ok(mask?.allowed?.has(pieces.indexOf("t")));
    assert.ok(mask?.allowed?.has(pieces.indexOf("true")));
    assert.ok(!mask?.allowed?.has(pieces.indexOf("f")), "false is masked");
    // The sampler writes "f" anyway: the veto replaces it, and the value is true.
    decoder.accept(pieces.indexOf("f"));
    for (let step = 0; step < 10 && !decoder.finished; step++) {
      const next = decoder.mask();
      const action = decoder.accept(pieces.indexOf("}"));
      if (action.stop) break;
      assert.ok(next !== undefined);
    }
    assert.deepEqual(decoder.calls, [{ name: "book", arguments: { urgent: true } }]);
    assert.equal(decoder.stats.vetoed > 0, true);
  });
});
