import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getLlama, type Llama, type LlamaModel, readGgufFileInfo, resolveChatWrapper } from "node-llama-cpp";
import { seededRandom } from "../../src/base/random.js";
import {
  loadFamilyTokenizer,
  type TinyModelFamily,
  tinyModelFamilies,
} from "../../src/models/family-tokenizer.js";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import { loadHfTokenizer } from "../support/hf-tokenizer.js";

// Tests in this file need a model: they write tiny ones (a few MB of random weights) themselves.

const directory = mkdtempSync(join(tmpdir(), "mentor-tiny-"));
let llama: Llama;
before(async () => {
  llama = await getLlama({ gpu: false, build: "never", maxThreads: 1, logLevel: "error" as never });
});
after(async () => {
  await llama?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

/** What each family must look like once node-llama-cpp has loaded it. */
const expected: Record<
  TinyModelFamily,
  { architecture: string; wrapper: string; userTurn: string; extraTensors: string[]; specialTokens: string[] }
> = {
  qwen3: {
    specialTokens: [
      "<|im_start|>",
      "<|im_end|>",
      "<think>",
      "</think>",
      "<tool_call>",
      "</tool_call>",
      "<|endoftext|>",
    ],
    architecture: "qwen3",
    wrapper: "QwenChatWrapper",
    userTurn: "<|im_start|>user\nHi there<|im_end|>",
    extraTensors: ["attn_q_norm", "attn_k_norm"],
  },
  "llama3.1": {
    specialTokens: [
      "<|begin_of_text|>",
      "<|start_header_id|>",
      "<|end_header_id|>",
      "<|eot_id|>",
      "<|eom_id|>",
      "<|python_tag|>",
    ],
    architecture: "llama",
    wrapper: "Llama3_1ChatWrapper",
    userTurn: "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>",
    extraTensors: [],
  },
  gemma3: {
    specialTokens: ["<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<table>", "<start_of_image>"],
    architecture: "gemma3",
    wrapper: "GemmaChatWrapper",
    userTurn: "<start_of_turn>user\nHi there<end_of_turn>",
    extraTensors: ["attn_q_norm", "attn_k_norm", "post_attention_norm", "post_ffw_norm"],
  },
};

/** Random text: letters, digits, punctuation, whitespace runs, accents, CJK, emoji, common words. */
function randomStrings(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const pieces = [
    ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    ...".,;:!?'\"()[]{}-_/\\@#$%^&*+=~`|",
    " ",
    "  ",
    "   ",
    "\n",
    "\n\n",
    "\t",
    " \n ",
    "é",
    "ü",
    "ß",
    "ñ",
    "Ω",
    "€",
    "中文",
    "日本語",
    "한국어",
    "привет",
    "😀",
    "👍🏽",
    "🇫🇷",
    " the",
    " book_flight",
    "check_distance",
    '{"name": "',
    '"}',
    "'s",
    "'ll",
    " 12345",
    "3.14159",
    "Hello",
    " world",
    "<",
    ">",
    "</",
    "\u00a0",
    "\u200b",
  ];
  return Array.from({ length: count }, () => {
    const length = 1 + Math.floor(random() * 12);
    let text = "";
    for (let index = 0; index < length; index++) text += pieces[Math.floor(random() * pieces.length)];
    return text;
  });
}

for (const family of tinyModelFamilies) {
  describe(`tiny ${family} model`, () => {
    const path = join(directory, `${family}.gguf`);
    let model: LlamaModel;

    before(async () => {
      await makeTinyModel({ family, outputPath: path, layers: 2, seed: 7 });
      const started = performance.now();
      model = await llama.loadModel({ modelPath: path });
      console.log(`# ${family}: loaded in ${(performance.now() - started).toFixed(0)} ms`);
    });
    after(async () => {
      await model?.dispose();
    });

    it("carries the architecture's metadata and tensors", async () => {
      const info = await readGgufFileInfo(path, { readTensorInfo: true });
      const architecture = expected[family].architecture;
      assert.equal(info.metadata.general.architecture, architecture);
      const names = new Set(info.fullTensorInfo?.map((tensor) => tensor.name));
      for (const name of ["token_embd.weight", "output_norm.weight", "output.weight"])
        assert.ok(names.has(name), name);
      for (const part of [
        "attn_norm",
        "attn_q",
        "attn_k",
        "attn_v",
        "attn_output",
        "ffn_norm",
        "ffn_gate",
        "ffn_up",
        "ffn_down",
        ...expected[family].extraTensors,
      ])
        for (const layer of [0, 1])
          assert.ok(names.has(`blk.${layer}.${part}.weight`), `blk.${layer}.${part}.weight`);
      assert.equal(model.fileInfo.metadata.general.architecture, architecture);
      assert.ok(typeof model.fileInfo.metadata.tokenizer.chat_template === "string");
    });

    it("tokenizes like the Hugging Face tokenizer on random text", async () => {
      const source = loadFamilyTokenizer(family);
      const reference = await loadHfTokenizer(source.tokenizer, source.config);
      const differences: string[] = [];
      const samples = randomStrings(300, 11);
      for (const text of samples) {
        const expectedIds = reference.encode(text, { add_special_tokens: false }).ids;
        const actualIds = Array.from(model.tokenize(text, false));
        if (JSON.stringify(expectedIds) !== JSON.stringify(actualIds))
          differences.push(`${JSON.stringify(text)}: hf ${expectedIds} llama.cpp ${actualIds}`);
      }
      assert.deepEqual(
        differences.slice(0, 5),
        [],
        `${differences.length} of ${samples.length} strings differ`,
      );
    });

    it("tokenizes text with special tokens like the Hugging Face tokenizer", async () => {
      const source = loadFamilyTokenizer(family);
      const reference = await loadHfTokenizer(source.tokenizer, source.config);
      const random = seededRandom(5);
      const specials = expected[family].specialTokens;
      const words = ["hello", " ", "\n", "user", "model", " world", "{", "}", "  "];
      const pick = (list: string[]) => list[Math.floor(random() * list.length)] as string;
      const differences: string[] = [];
      for (let sample = 0; sample < 200; sample++) {
        let text = "";
        for (let index = 0; index < 6; index++) text += random() < 0.4 ? pick(specials) : pick(words);
        const expectedIds = reference.encode(text, { add_special_tokens: false }).ids;
        const actualIds = Array.from(model.tokenize(text, true));
        if (JSON.stringify(expectedIds) !== JSON.stringify(actualIds))
          differences.push(`${JSON.stringify(text)}: hf ${expectedIds} llama.cpp ${actualIds}`);
      }
      assert.deepEqual(differences.slice(0, 5), [], `${differences.length} of 200 strings differ`);
      for (const special of specials) assert.equal(model.tokenize(special, true).length, 1, special);
    });

    it(`renders its chat template through node-llama-cpp's wrapper (${expected[family].wrapper})`, () => {
      const wrapper = resolveChatWrapper(model);
      assert.ok(wrapper);
      console.log(
        `# ${family}: node-llama-cpp resolves ${wrapper.constructor.name} (${wrapper.wrapperName})`,
      );
      assert.equal(wrapper.constructor.name, expected[family].wrapper);
      const { contextText } = wrapper.generateContextState({
        chatHistory: [
          { type: "user", text: "Hi there" },
          { type: "model", response: [""] },
        ],
      });
      const rendered = contextText.toString();
      assert.ok(rendered.includes(expected[family].userTurn), rendered);
      // The end-of-turn marker in the rendering is the model's special token, not text.
      const tokens = contextText.tokenize(model.tokenizer);
      const endOfTurn = model.tokenize(loadFamilyTokenizer(family).config.eos_token as string, true);
      assert.equal(endOfTurn.length, 1);
      assert.ok(
        tokens.includes(endOfTurn[0] as (typeof tokens)[number]),
        "end-of-turn token in the rendering",
      );
    });

    it("generates tokens", async () => {
      const context = await model.createContext({ contextSize: 512, threads: 1 });
      try {
        const sequence = context.getSequence();
        const started = performance.now();
        const generated: number[] = [];
        for await (const token of sequence.evaluate(model.tokenize("Hello world, this is a test."), {
          temperature: 0.8,
          seed: 3,
        })) {
          generated.push(token);
          if (generated.length >= 100) break;
        }
        const seconds = (performance.now() - started) / 1000;
        console.log(
          `# ${family}: ${generated.length} tokens at ${(generated.length / seconds).toFixed(0)} tokens/s`,
        );
        assert.ok(generated.length >= 20, `${generated.length} tokens`);
        assert.ok(new Set(generated).size > 5, "random weights give varied tokens");
      } finally {
        await context.dispose();
      }
    });
  });
}
