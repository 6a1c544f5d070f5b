import { performance } from "node:perf_hooks";
import { loadFamilyTokenizer, tinyModelFamilies } from "../../src/models/family-tokenizer.js";
import { buildGgufVocabulary } from "../../src/models/tiny-model.js";
import {
  type AllowListSlot,
  computeTokenMask,
  decodeGgufTokens,
  TextVocabulary,
  VocabularyIndex,
} from "../../src/shield/token/index.js";
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
    const gguf = buildGgufVocabulary(loadFamilyTokenizer(family));
    const started = performance.now();
    const texts = decodeGgufTokens({
      tokenizerModel: gguf.model,
      tokens: gguf.tokens,
      tokenTypes: gguf.types,
    });
    const index = new VocabularyIndex(new TextVocabulary(texts));
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
}
