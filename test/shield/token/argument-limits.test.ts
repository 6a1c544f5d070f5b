import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../../../src/base/random.js";
import { Evaluator } from "../../../src/evaluator/index.js";
import type { ChatMessage, ToolDefinition } from "../../../src/openai/index.js";
import { loadPolicy, type Policy } from "../../../src/policy/index.js";
import {
  type ArgumentSets,
  CallDecoder,
  type DecodePlan,
  planGeneration,
  shieldSetsFor,
  TextVocabulary,
  VocabularyIndex,
} from "../../../src/shield/token/index.js";
import { canEndInRange, inRange, numberRange } from "../../../src/shield/token/number-range.js";
import { Conversation } from "../../support/conversation.js";
import { decodePlan } from "../../support/decode-plan.js";
import { pharmacyPolicy, refillRequest } from "../../support/pharmacy.js";
import { retailPolicy, tshirtLookedUp } from "../../support/retail-orders.js";
import { toyTokenizer } from "../../support/toy-tokenizer.js";

// The limits a constraint puts on one argument, masked in its slot: a number within its bounds, a
// list that may not close empty. A toy vocabulary and an adversarial sampler (it ignores the mask
// half of the time): the veto alone must keep every value within the limits.

const specials = ["<eos>", "<call>"];
const pieces = [
  ...Array.from({ length: 95 }, (_, code) => String.fromCharCode(32 + code)),
  "30",
  "31",
  "12",
  "45",
  "007",
  "-2",
  "2.",
  ".5",
  "0}",
  "[]",
  "[]}",
  "]}",
  '["',
  '"]',
  '"]}',
  "[1",
  "[1]}",
  "[ ",
  "\n",
  "dispense",
  "exchange",
  "swap",
  "move",
  ...specials,
];
const index = new VocabularyIndex(new TextVocabulary(pieces));
const endToken = pieces.indexOf("<eos>");
const isEnd = (token: number) => token === endToken;
const tokenize = toyTokenizer(pieces, specials);
const piece = (text: string) => {
  const id = pieces.indexOf(text);
  assert.ok(id >= 0, text);
  return id;
};
const syntax = { prefix: '<call>{"name": "', paramsPrefix: '", "arguments": ', suffix: "}<eos>" };
const tools: ToolDefinition[] = [
  {
    name: "dispense",
    parameters: {
      type: "object",
      properties: { days: { type: "integer" }, dose: { type: "number" }, rx: { type: "string" } },
    },
  },
  { name: "exchange", parameters: { type: "object", properties: { items: { type: "array" } } } },
  {
    name: "swap",
    parameters: { type: "object", properties: { old: { type: "array" }, new: { type: "array" } } },
  },
  {
    name: "move",
    parameters: { type: "object", properties: { order: { type: "string" }, items: { type: "array" } } },
  },
];

function plan(name: string, sets: Record<string, ArgumentSets>, extra: Partial<DecodePlan> = {}): DecodePlan {
  return decodePlan({
    syntax,
    tools,
    names: [name],
    argumentSets: new Map([[name, new Map(Object.entries(sets))]]),
    maxStringTokens: 6,
    ...extra,
  });
}

/** A decoder that has written the name and `texts` (each a token the mask allows). */
function decoderAfter(planned: DecodePlan, texts: string[]): CallDecoder {
  const decoder = new CallDecoder(planned, index, tokenize, isEnd);
  decoder.initialTokens();
  for (const text of [planned.names[0] as string, '"', ...texts]) {
    const mask = decoder.mask();
    assert.ok(mask?.allowed === undefined || mask.allowed.has(piece(text)), `${text} is allowed`);
    decoder.accept(piece(text));
  }
  return decoder;
}

const allowedTexts = (decoder: CallDecoder, candidates: string[]) =>
  candidates.filter((text) => decoder.mask()?.allowed?.has(piece(text)));

describe("a number bounded by a constraint", () => {
  const digits = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
  const atMost30 = plan("dispense", { days: { maximum: 30 } });

  it("lets through only digits that can still end at 30 or less", () => {
    // 4 itself is within the bound; 45 and 31 never are; 007 is no JSON number.
    assert.deepEqual(
      allowedTexts(decoderAfter(atMost30, []), [...digits, "30", "31", "12", "45", "007", "-", "-2"]),
      [...digits, "30", "12", "-", "-2"],
    );
    // After 3: only 0, or the end of the number (the comma before the next argument).
    assert.deepEqual(allowedTexts(decoderAfter(atMost30, ["3"]), [...digits, ",", "}"]), ["0", ","]);
    // After 4: nothing but the end.
    assert.deepEqual(allowedTexts(decoderAfter(atMost30, ["4"]), [...digits, ",", "."]), [","]);
    // 0 takes no digit after it (a JSON number has no leading zero).
    assert.deepEqual(allowedTexts(decoderAfter(atMost30, ["0"]), [...digits, ",", "."]), [","]);
  });

  it("handles negative bounds, open ends and decimals", () => {
    const between = plan("dispense", { dose: { minimum: -2.5, exclusiveMaximum: 1 } });
    // The dose slot comes after the days slot (written as 1 here): is the last text allowed after the others?
    const dose = (texts: string[]) =>
      allowedTexts(decoderAfter(between, ["1", ",", ...texts.slice(0, -1)]), texts.slice(-1));
    assert.deepEqual(dose(["1"]), [], "1 is not below 1, and neither is 1.x");
    assert.deepEqual(dose(["0"]), ["0"]);
    assert.deepEqual(dose(["-", "2"]), ["2"]);
    assert.deepEqual(dose(["-", "3"]), [], "-3 is below -2.5");
    assert.deepEqual(dose(["-", "2", "."]), ["."]);
    assert.deepEqual(dose(["-", "2", ".", "5"]), ["5"]);
    assert.deepEqual(dose(["-", "2", ".", "6"]), [], "-2.6 is below -2.5");
    assert.deepEqual(dose(["-", "2", ","]), [","]);
    assert.deepEqual(dose(["0", ".", "9"]), ["9"]);
  });

  it("is decided for every prefix as the numbers it can end as say", () => {
    // Brute force over short numbers: a prefix can end in range iff one of its completions is.
    const random = seededRandom(3);
    const written = [shortNumbers(false, 4), shortNumbers(true, 4)];
    for (let trial = 0; trial < 200; trial++) {
      const integer = random() < 0.5;
      const low = Math.round((random() * 60 - 30) * 4) / 4;
      const high = low + Math.round(random() * 40) / 4;
      const range = { low, lowOpen: random() < 0.5, high, highOpen: random() < 0.5 };
      const numbers = written[Number(integer)] as string[];
      for (const prefix of ["", "-", "1", "2", "-1", "-0", "0", "0.", "1.", "-2.", "12", "-12.5"]) {
        if (integer && prefix.includes(".")) continue;
        const expected = numbers.some((text) => text.startsWith(prefix) && inRange(Number(text), range));
        assert.equal(
          canEndInRange(prefix, range, integer, 4),
          expected,
          `${prefix} in ${JSON.stringify(range)}`,
        );
      }
    }
  });

  it("never ends out of its bounds, whatever the sampler does", () => {
    const random = seededRandom(11);
    let vetoed = 0;
    let checked = 0;
    for (let run = 0; run < 400; run++) {
      const integer = run % 2 === 0;
      const low = Math.floor(random() * 80 - 40);
      const bounds: ArgumentSets =
        run % 3 === 0
          ? { maximum: low + random() * 20 }
          : run % 3 === 1
            ? { exclusiveMinimum: low, exclusiveMaximum: low + 1 + random() * 30 }
            : { minimum: low / 4, maximum: low / 4 + 0.5 };
      const planned = plan("dispense", integer ? { days: bounds } : { dose: bounds });
      const decoder = sample(planned, random, ["3", "4", "9", "-", ".", "}", "007", "45", "31", "<eos>"]);
      const call = decoder.calls[0];
      assert.ok(call, `run ${run}`);
      const value = call.arguments[integer ? "days" : "dose"] as number;
      const range = numberRange(bounds);
      assert.ok(range);
      if (canEndInRange("", range, integer, 16)) {
        assert.ok(inRange(value, range), `run ${run}: ${value} not within ${JSON.stringify(bounds)}`);
        checked++;
      }
      vetoed += decoder.stats.vetoed;
    }
    assert.ok(checked > 300, `${checked} runs with a number the bounds allow`);
    assert.ok(vetoed > 200, `${vetoed} vetoes`);
  });
});

describe("a list that may not close empty", () => {
  const nonEmpty = plan("exchange", { items: { minItems: 1 } });

  it("cannot close right after its opening", () => {
    const start = allowedTexts(decoderAfter(nonEmpty, []), ["[", "[]", "[]}", '["', "[1", "[1]}", "[ ", "{"]);
    assert.deepEqual(start, ["[", '["', "[1", "[1]}", "[ "]);
    const opened = allowedTexts(decoderAfter(nonEmpty, ["["]), ["]", "]}", '"', '"]', "1", " ", "\n", "t"]);
    assert.deepEqual(opened, ['"', '"]', "1", " ", "\n", "t"]);
    // Once an item has begun, the model writes the list freely.
    assert.equal(decoderAfter(nonEmpty, ["[", "1"]).mask(), undefined);
  });

  it("never closes empty, whatever the sampler does", () => {
    const random = seededRandom(5);
    let vetoed = 0;
    for (let run = 0; run < 300; run++) {
      const decoder = sample(nonEmpty, random, ["[]", "[]}", "]}", "]", "[", " ", "\n", "<eos>", "}"]);
      const items = decoder.calls[0]?.arguments.items;
      assert.ok(Array.isArray(items) && items.length > 0, `run ${run}: ${JSON.stringify(items)}`);
      vetoed += decoder.stats.vetoed;
    }
    assert.ok(vetoed > 100, `${vetoed} vetoes`);
  });
});

describe("a list whose items must be among some strings", () => {
  const among = plan("exchange", { items: { itemsAllowed: ["30", "45"], minItems: 1 } });

  it("writes only those strings, at least one, and may close after each", () => {
    assert.deepEqual(allowedTexts(decoderAfter(among, []), ["[", "[]", '["', "[1", "[ ", "{"]), [
      "[",
      '["',
      "[ ",
    ]);
    assert.deepEqual(allowedTexts(decoderAfter(among, ["["]), ["]", '"', '"]', "1", " ", "30"]), ['"', " "]);
    assert.deepEqual(allowedTexts(decoderAfter(among, ['["']), ["3", "30", "4", "45", "1", "12", '"']), [
      "3",
      "30",
      "4",
      "45",
    ]);
    assert.deepEqual(allowedTexts(decoderAfter(among, ['["', "3"]), ["0", "1", '"', "0}"]), ["0"]);
    assert.deepEqual(allowedTexts(decoderAfter(among, ['["', "30"]), ['"', '"]', '"]}', "0"]), [
      '"',
      '"]',
      '"]}',
    ]);
    assert.deepEqual(allowedTexts(decoderAfter(among, ['["', "30", '"']), [",", "]", "]}", '"', " "]), [
      ",",
      "]",
      "]}",
      " ",
    ]);
    assert.deepEqual(allowedTexts(decoderAfter(among, ['["', "30", '"', ","]), ["]", '"', " ", "4"]), [
      '"',
      " ",
    ]);
  });

  it("never writes another item or closes empty, whatever the sampler does", () => {
    const random = seededRandom(9);
    let vetoed = 0;
    for (let run = 0; run < 300; run++) {
      const decoder = sample(among, random, [
        "[]",
        "[1",
        "12",
        "31",
        "]}",
        "[",
        '["',
        "30",
        '"',
        ",",
        "<eos>",
      ]);
      const items = decoder.calls[0]?.arguments.items;
      assert.ok(Array.isArray(items) && items.length > 0, `run ${run}: ${JSON.stringify(items)}`);
      assert.ok(
        items.every((item) => item === "30" || item === "45"),
        `run ${run}: ${JSON.stringify(items)}`,
      );
      vetoed += decoder.stats.vetoed;
    }
    assert.ok(vetoed > 100, `${vetoed} vetoes`);
  });
});

describe("a list whose items are counted (submultiset)", () => {
  const counted = plan("exchange", {
    items: { itemsAllowed: ["30", "45"], itemsAtMost: { "30": 1, "45": 2 }, minItems: 1 },
  });

  it("writes an item no more often than allowed, then only the others or the end", () => {
    const afterThirty = ['["', "30", '"', ",", '"'];
    assert.deepEqual(allowedTexts(decoderAfter(counted, afterThirty), ["3", "30", "4", "45"]), ["4", "45"]);
    const afterAll = ['["', "30", '"', ",", '"', "45", '"', ",", '"', "45", '"'];
    assert.deepEqual(allowedTexts(decoderAfter(counted, afterAll), [",", "]", "]}"]), ["]", "]}"]);
  });

  it("never writes an item more often, whatever the sampler does", () => {
    const random = seededRandom(11);
    for (let run = 0; run < 300; run++) {
      const decoder = sample(counted, random, ["[", '["', "30", "45", '"', ",", "]}", '"]}', "<eos>"]);
      const items = decoder.calls[0]?.arguments.items as string[];
      assert.ok(items.length > 0, `run ${run}: ${JSON.stringify(items)}`);
      const count = (item: string) => items.filter((written) => written === item).length;
      assert.ok(
        count("30") <= 1 && count("45") <= 2 && count("30") + count("45") === items.length,
        `run ${run}: ${JSON.stringify(items)}`,
      );
    }
  });
});

describe("a list paired with one written before it (same_group)", () => {
  // Each new item shares a group with the old item at its position: 12 → 30 or 31, 007 and 45 → 45.
  const groups = [
    ["12", "30", "31"],
    ["007", "45"],
  ];
  const paired = plan(
    "swap",
    {
      old: { itemsAllowed: ["12", "007", "45"], minItems: 1 },
      new: { itemsAllowed: ["30", "31", "45"], itemsPaired: { argument: "old", groups } },
    },
    { maxStringTokens: 20 },
  );
  const oldTwelveAndSeven = ['["', "12", '"', ",", '"', "007", '"]'];

  it("writes at each position an item of its partner's group, and closes at the partner's length", () => {
    assert.deepEqual(
      allowedTexts(decoderAfter(paired, [...oldTwelveAndSeven, '["']), ["3", "30", "31", "4", "45"]),
      ["3", "30", "31"],
    );
    const first = [...oldTwelveAndSeven, '["', "30", '"'];
    assert.deepEqual(allowedTexts(decoderAfter(paired, first), [",", "]", "]}"]), [","]);
    assert.deepEqual(allowedTexts(decoderAfter(paired, [...first, ",", '"']), ["3", "30", "4", "45"]), [
      "4",
      "45",
    ]);
    const both = [...first, ",", '"', "45", '"'];
    assert.deepEqual(allowedTexts(decoderAfter(paired, both), [",", "]", "]}"]), ["]", "]}"]);
  });

  it("never writes an item outside its partner's group or a list of another length, whatever the sampler does", () => {
    const random = seededRandom(13);
    for (let run = 0; run < 300; run++) {
      const decoder = sample(paired, random, [
        "[",
        '["',
        "12",
        "007",
        "30",
        "31",
        "45",
        '"',
        '"]',
        ",",
        "]}",
        "<eos>",
      ]);
      const written = decoder.calls[0]?.arguments ?? {};
      const old = written.old as string[];
      const renewed = written.new as string[];
      const seen = `run ${run}: ${JSON.stringify([old, renewed])}`;
      assert.equal(renewed.length, old.length, seen);
      assert.ok(
        old.every((item, at) =>
          groups.some((group) => group.includes(item) && group.includes(renewed[at] as string)),
        ),
        seen,
      );
    }
  });
});

describe("a list whose limits depend on an argument written before it (given)", () => {
  // The items of every order together, and of order 45 alone (the evaluator's per-binding case).
  const perOrder = plan("move", {
    items: {
      itemsAllowed: ["12", "30", "45"],
      minItems: 1,
      given: { argument: "order", cases: [{ value: "45", sets: { itemsAllowed: ["30"], minItems: 1 } }] },
    },
  });

  it("keeps to the case of the value written, and to the limits over every case for another", () => {
    const candidates = ["1", "12", "3", "30", "4", "45"];
    assert.deepEqual(allowedTexts(decoderAfter(perOrder, ["45", '"', '["']), candidates), ["3", "30"]);
    assert.deepEqual(allowedTexts(decoderAfter(perOrder, ["12", '"', '["']), candidates), candidates);
  });

  it("never writes an item outside the case of the order written, whatever the sampler does", () => {
    const random = seededRandom(17);
    for (let run = 0; run < 300; run++) {
      const decoder = sample(perOrder, random, [
        "45",
        "12",
        '"',
        '["',
        "12",
        "30",
        "45",
        '"',
        ",",
        '"]}',
        "<eos>",
      ]);
      const written = decoder.calls[0]?.arguments ?? {};
      const items = written.items as string[];
      const allowed = written.order === "45" ? ["30"] : ["12", "30", "45"];
      assert.ok(
        items.length > 0 && items.every((item) => allowed.includes(item)),
        `run ${run}: ${JSON.stringify(written)}`,
      );
    }
  });
});

describe("a string limited to some values", () => {
  const enumTool: ToolDefinition = {
    name: "dispense",
    parameters: { type: "object", properties: { rx: { enum: ["12", "30", "45"] } } },
  };
  const firstValues = (sets: ArgumentSets) => {
    const decoder = new CallDecoder(
      decodePlan({
        syntax,
        tools: [enumTool],
        names: ["dispense"],
        argumentSets: new Map([["dispense", new Map([["rx", sets]])]]),
      }),
      index,
      tokenize,
      isEnd,
    );
    decoder.initialTokens();
    for (const text of ["dispense", '"']) {
      decoder.mask();
      decoder.accept(piece(text));
    }
    return allowedTexts(decoder, ["1", "3", "4", "7"]);
  };

  it("keeps an enum's values: the allowed ones among them, all of them where none is", () => {
    assert.deepEqual(firstValues({}), ["1", "3", "4"]);
    assert.deepEqual(firstValues({ allowed: ["30", "77"] }), ["3"]);
    assert.deepEqual(firstValues({ allowed: ["77"] }), ["1", "3", "4"], "77 is no value of the enum");
  });
});

describe("slots without limits", () => {
  it("mask nothing more: the generation is token for token the one without the limits' sets", () => {
    const random = seededRandom(17);
    for (let run = 0; run < 200; run++) {
      const name = run % 2 === 0 ? "dispense" : "exchange";
      // Limits on the other tool only, and list and number sets without limits.
      const other = name === "dispense" ? "exchange" : "dispense";
      const withSets = decodePlan({
        syntax,
        tools,
        names: [name],
        maxStringTokens: 6,
        argumentSets: new Map([
          [
            name,
            new Map<string, ArgumentSets>([
              ["items", { minItems: 0 }],
              ["days", {}],
              ["dose", {}],
            ]),
          ],
          [
            other,
            new Map<string, ArgumentSets>([
              ["items", { minItems: 2 }],
              ["days", { maximum: 3 }],
            ]),
          ],
        ]),
      });
      const without = decodePlan({ syntax, tools, names: [name], maxStringTokens: 6 });
      const seed = Math.floor(random() * 1e9);
      const masks: string[][] = [[], []];
      const tokens = [withSets, without].map((planned, which) => {
        const decoder = sample(planned, seededRandom(seed), ["[]", "]", "4", "5", "}", "<eos>"], (mask) =>
          (masks[which] as string[]).push(mask === undefined ? "none" : [...(mask.allowed ?? [])].join(",")),
        );
        return decoder.callTokenLists.flat();
      });
      assert.deepEqual(tokens[0], tokens[1], `run ${run}`);
      assert.deepEqual(masks[0], masks[1], `run ${run}`);
    }
  });
});

/**
 * One call, sampled adversarially: a random token, a temptation, or one the mask allows (a third
 * each); `seen` gets each step's mask.
 */
function sample(
  planned: DecodePlan,
  random: () => number,
  temptations: string[],
  seen: (mask: ReturnType<CallDecoder["mask"]>) => void = () => {},
): CallDecoder {
  const decoder = new CallDecoder(planned, index, tokenize, isEnd);
  decoder.initialTokens();
  for (let step = 0; step < 400 && !decoder.finished; step++) {
    const mask = decoder.mask();
    seen(mask);
    const allowed = mask?.allowed !== undefined ? [...mask.allowed].sort((a, b) => a - b) : [];
    const draw = random();
    const token =
      draw < 0.3
        ? Math.floor(random() * pieces.length)
        : draw < 0.6 || allowed.length === 0
          ? piece(temptations[Math.floor(random() * temptations.length)] as string)
          : (allowed[Math.floor(random() * allowed.length)] as number);
    if (decoder.accept(token).stop) break;
  }
  assert.ok(decoder.finished);
  return decoder;
}

/** Every JSON number of at most `length` characters (no exponent; integers only where asked). */
function shortNumbers(integer: boolean, length: number): string[] {
  const found: string[] = [];
  const grow = (text: string) => {
    if (text.length > length) return;
    if (/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(text)) found.push(text);
    const next = integer ? "0123456789" : "0123456789.";
    for (const char of next) {
      const longer = text + char;
      if ((integer ? /^-?(0|[1-9][0-9]*)?$/ : /^-?((0|[1-9][0-9]*)(\.[0-9]*)?)?$/).test(longer)) grow(longer);
    }
  };
  grow("");
  grow("-");
  return found;
}

describe("limits from a real policy, through the shield's sets and the plan", () => {
  const toolsOf = (policy: Policy): ToolDefinition[] =>
    [...policy.tools.values()].map((tool) => ({
      name: tool.name,
      parameters: {
        type: "object",
        properties: Object.fromEntries(
          tool.parameters.map((parameter) => [parameter.name, parameter.jsonSchema]),
        ),
      },
    }));
  /** The plan of a turn that must call `tool`, from the evaluator's sets on `conversation`. */
  const planFor = (policy: Policy, conversation: Conversation, tool: string): DecodePlan => {
    const sets = shieldSetsFor(new Evaluator(policy), conversation.messages);
    const planned = planGeneration(
      {
        messages: conversation.messages as ChatMessage[],
        toolChoice: { type: "function", function: { name: tool } },
        shield: { mode: "token", sets },
      },
      toolsOf(policy),
      syntax,
    );
    assert.equal(typeof planned, "object", `${tool} is not allowed: ${String(planned)}`);
    return planned as DecodePlan;
  };
  /** The decoder of that turn, after the tool's name. */
  const decoderFor = (policy: Policy, conversation: Conversation, tool: string): CallDecoder => {
    const decoder = new CallDecoder(planFor(policy, conversation, tool), index, tokenize, isEnd);
    decoder.initialTokens();
    write(decoder, [...tool.split(""), '"']);
    return decoder;
  };
  /** Writes each text as a token the mask allows (a string value: its characters, then its quote). */
  const write = (decoder: CallDecoder, texts: string[]) => {
    for (const text of texts) {
      const mask = decoder.mask();
      assert.ok(mask?.allowed === undefined || mask.allowed.has(piece(text)), `${text} is allowed`);
      decoder.accept(piece(text));
    }
  };
  const value = (text: string) => [...text.split(""), '"'];

  it("tau2-retail's R12: an exchange's item ids cannot close empty", () => {
    const policy = loadPolicy(
      fileURLToPath(new URL("../../../../policies/tau2-retail/policy.yaml", import.meta.url)),
    );
    const conversation = new Conversation(
      [{ name: "request_item_change", arguments: { order_id: "#W1111111" } }],
      "Exchange my lamp.",
    )
      .call("find_user_id_by_email", { email: "a@example.com" }, { json: "a_1" })
      .call(
        "get_order_details",
        { order_id: "#W1111111" },
        {
          json: {
            order_id: "#W1111111",
            status: "delivered",
            items: [{ item_id: "L1", product_id: "P1" }],
            payment_history: [],
          },
        },
      )
      .call(
        "get_product_details",
        { product_id: "P1" },
        { json: { product_id: "P1", variants: { L2: { item_id: "L2", available: true } } } },
      );
    const decoder = decoderFor(policy, conversation, "exchange_delivered_order_items");
    write(decoder, value("#W1111111"));
    assert.deepEqual(allowedTexts(decoder, ["[", "[]", "[]}", '["']), ["[", '["']);
    write(decoder, ["["]);
    assert.deepEqual(allowedTexts(decoder, ["]", "]}", '"', '"]']), ['"']);
  });

  it("tau2-retail's R5: an item change's order id is the order seen pending, not one made up", () => {
    // Task 4: the model wrote an item id as the order id.
    const policy = retailPolicy();
    const conversation = tshirtLookedUp();
    const decoder = decoderFor(policy, conversation, "modify_pending_order_items");
    assert.deepEqual(allowedTexts(decoder, ["#", "3", "W", '"']), ["#"]);
    write(decoder, ["#", "W"]);
    // Not #W4776164 (not seen pending), not another id.
    assert.deepEqual(allowedTexts(decoder, ["4", "6", "0", '"']), ["6"]);
    write(decoder, value("6247578"));
    // Whatever the sampler does, the order id is that one.
    const planned = planFor(policy, conversation, "modify_pending_order_items");
    const random = seededRandom(23);
    for (let run = 0; run < 40; run++) {
      const sampled = sample(planned, random, ["3", "7", "9", "#", "W", "4", '"', "]}", "<eos>"]);
      assert.equal(sampled.calls[0]?.arguments.order_id, "#W6247578", `run ${run}`);
    }
  });

  it("tau2-retail's R17m and R20m: each item as often as the order holds it, each new item of its product", () => {
    // Tasks 3 and 4 wrote the order's one item five times, and five new items to match.
    const decoder = decoderFor(retailPolicy(), tshirtLookedUp(), "modify_pending_order_items");
    write(decoder, value("#W6247578"));
    write(decoder, ["[", '"', ...value("3799046073")]);
    // The order holds the T-shirt once: no second item.
    assert.deepEqual(allowedTexts(decoder, [",", "]", " "]), ["]", " "]);
    write(decoder, ["]"]);
    // Its one available variant that is no item of the order, and no second position.
    write(decoder, ["[", '"']);
    assert.deepEqual(allowedTexts(decoder, ["3", "8", "9"]), ["9"]);
    write(decoder, value("9647292434"));
    assert.deepEqual(allowedTexts(decoder, [",", "]"]), ["]"]);
  });

  it("a refund's payment method: the one the order's lookup returned", () => {
    const policy = loadPolicy(
      fileURLToPath(new URL("../../../../docs/examples/earlier-output/policy.yaml", import.meta.url)),
    );
    const conversation = new Conversation([{ name: "request_refund", arguments: { order_id: "A1" } }]).call(
      "get_order",
      { order_id: "A1" },
      { json: { status: "delivered", payment_method: "card_7" } },
    );
    const decoder = decoderFor(policy, conversation, "refund");
    write(decoder, value("A1"));
    assert.deepEqual(allowedTexts(decoder, ["c", "d", "p", '"']), ["c"]);
    write(decoder, "card_".split(""));
    assert.deepEqual(allowedTexts(decoder, ["7", "8", '"']), ["7"]);
  });

  it("the pharmacy's M3: at most 30 days of supply", () => {
    const conversation = new Conversation([refillRequest], "Refill, please.")
      .call(
        "lookup_patient",
        { name: "Ada Byron", date_of_birth: "1990-04-01" },
        { json: { found: true, patient_id: "P100" } },
      )
      .call("check_refill_count", { rx_id: "RX1003" }, { json: { refills: 2, schedule: "IV" } });
    const decoder = decoderFor(pharmacyPolicy, conversation, "dispense");
    write(decoder, [...value("RX1003"), ...value("P100")]);
    assert.deepEqual(allowedTexts(decoder, ["3", "4", "9", "30", "31", "45"]), ["3", "4", "9", "30"]);
    write(decoder, ["4"]);
    assert.deepEqual(allowedTexts(decoder, ["0", "5", "}"]), ["}"]);
  });
});
