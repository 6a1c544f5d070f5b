import { performance } from "node:perf_hooks";
import { loadFamilyTokenizer, tinyModelFamilies } from "../../src/models/family-tokenizer.js";
import { buildGgufVocabulary } from "../../src/models/tiny-model.js";
import {
  type AllowListSlot,
  type ArgumentSets,
  CallDecoder,
  computeTokenMask,
  decodeGgufTokens,
  TextVocabulary,
  VocabularyIndex,
} from "../../src/shield/token/index.js";
import { decodePlan } from "../../test/support/decode-plan.js";
import { percentile } from "./long-session.js";

/** Tool names of the shipped policies, short and long, one a prefix of others. */
const NAMES = [
  "check_distance",
  "book_train",
  "book_flight",
  "book",
  "get_reservation_details_for_customer_account",
  "cancel_pending_order",
  "transfer_to_human_agents",
  "x",
];
const STEPS = 1000;
const RUNS = 15;

/**
 * The token mask of one step of a tool-name slot (an allow-list with a progressing name, after
 * "" and after "book" in turn), on the real vocabularies of the three tiny-model families: µs per
 * step, p50 and p95 over runs of 1,000 steps. This figure was a test's assertion (< 1 ms).
 */
export function maskSteps(): void {
  console.log("| family | vocabulary | index build ms | allow-list mask µs/step p50 | p95 |");
  console.log("| --- | --- | --- | --- | --- |");
  const slot: AllowListSlot = { kind: "allow", values: NAMES, progressing: ["book"], terminator: '"' };
  for (const family of tinyModelFamilies) {
    const started = performance.now();
    const index = familyIndex(family);
    const buildMs = performance.now() - started;
    const perStep: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const start = performance.now();
      for (let step = 0; step < STEPS; step++) computeTokenMask(index, slot, step % 2 ? "" : "book");
      perStep.push(((performance.now() - start) / STEPS) * 1000);
    }
    console.log(
      `| ${family} | ${index.size} | ${buildMs.toFixed(0)} | ${percentile(perStep, 0.5).toFixed(1)} | ${percentile(perStep, 0.95).toFixed(1)} |`,
    );
  }
  listMaskSteps();
}

function familyIndex(family: (typeof tinyModelFamilies)[number]): VocabularyIndex {
  const gguf = buildGgufVocabulary(loadFamilyTokenizer(family));
  const texts = decodeGgufTokens({ tokenizerModel: gguf.model, tokens: gguf.tokens, tokenTypes: gguf.types });
  return new VocabularyIndex(new TextVocabulary(texts));
}

/** tau2-retail task 0's exchange, written one character per token (a digit a token, as Qwen writes ids). */
const ITEMS = ["1151293680", "4983901480"];
const NEW_ITEMS = ["7706410293", "7747408585"];
const EXCHANGE = `exchange"${JSON.stringify(ITEMS)}${JSON.stringify(NEW_ITEMS)}`;

/**
 * The token mask of the list slots of an exchange (two item lists of 10-digit ids), on the real
 * vocabularies: ms per step over the call's list steps, for items among the order's (the
 * baseline, measured in the same run), counted as the order holds them, and paired with the
 * products' variants (tau2-retail R17, R20).
 */
function listMaskSteps(): void {
  const order = [...ITEMS, "4202497723", "4602305039", "9408160950"];
  const variants = [...NEW_ITEMS, "1421289881", "2299424241", "3616838507", "4953074738"];
  const groups = [
    [ITEMS[0], "7706410293", "1421289881", "2299424241", "3616838507"],
    [ITEMS[1], "7747408585", "4953074738"],
  ] as string[][];
  const kinds: [string, Record<string, ArgumentSets>][] = [
    ["items among the pool", { item_ids: { itemsAllowed: order }, new_item_ids: { itemsAllowed: variants } }],
    [
      "counted and paired",
      {
        item_ids: { itemsAllowed: order, itemsAtMost: Object.fromEntries(order.map((item) => [item, 1])) },
        new_item_ids: { itemsAllowed: variants, itemsPaired: { argument: "item_ids", groups } },
      },
    ],
  ];
  console.log("\n| family | list slots | ms/step p50 | p95 | ratio to items among the pool (p50) |");
  console.log("| --- | --- | --- | --- | --- |");
  for (const family of tinyModelFamilies) {
    // A vocabulary index per kind: the masks it caches would serve the next kind's steps. Once
    // untimed first, so that the baseline does not pay the warm-up.
    const written = (sets: Record<string, ArgumentSets>) => {
      const index = familyIndex(family);
      const single = new Map<string, number>();
      index.texts.forEach((text, token) => {
        if (text.length === 1 && !single.has(text)) single.set(text, token);
      });
      return exchangeSteps(index, single, sets);
    };
    written(kinds[0]?.[1] ?? {});
    let baseline = 0;
    for (const [kind, sets] of kinds) {
      const perStep = written(sets);
      const p50 = percentile(perStep, 0.5);
      if (baseline === 0) baseline = p50;
      console.log(
        `| ${family} | ${kind} | ${p50.toFixed(1)} | ${percentile(perStep, 0.95).toFixed(1)} | ${(p50 / baseline).toFixed(2)} |`,
      );
    }
  }
}

/** Writes `EXCHANGE` through a decoder with `sets`, timing each list step's mask. */
function exchangeSteps(
  index: VocabularyIndex,
  single: Map<string, number>,
  sets: Record<string, ArgumentSets>,
): number[] {
  const tokenOf = (char: string) => single.get(char) ?? 0;
  const decoder = new CallDecoder(
    decodePlan({
      syntax: { prefix: '<call>{"name": "', paramsPrefix: '", "arguments": ', suffix: "}" },
      tools: [
        {
          name: "exchange",
          parameters: {
            type: "object",
            properties: { item_ids: { type: "array" }, new_item_ids: { type: "array" } },
          },
        },
      ],
      names: ["exchange"],
      argumentSets: new Map([["exchange", new Map(Object.entries(sets))]]),
    }),
    index,
    (text) => [...text].map(tokenOf),
    () => false,
  );
  decoder.initialTokens();
  const perStep: number[] = [];
  for (const [at, char] of [...EXCHANGE].entries()) {
    const start = performance.now();
    decoder.mask();
    if (at > "exchange".length) perStep.push(performance.now() - start);
    decoder.accept(tokenOf(char));
  }
  const written = decoder.calls[0]?.arguments;
  if (JSON.stringify(written) !== JSON.stringify({ item_ids: ITEMS, new_item_ids: NEW_ITEMS }))
    throw new Error(`the exchange was written as ${JSON.stringify(written)}`);
  return perStep;
}
