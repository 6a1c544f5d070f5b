import type { Command } from "commander";
import { defaultEta, defaultMaxTokens } from "../base/defaults.js";
import { MentorError } from "../errors/index.js";
import { Evaluator } from "../evaluator/index.js";
import type { Grounding, LabelModel } from "../labeler/index.js";
import { defaultThreads, gpuChoices, gpuName, parseGpuChoice } from "../llm/gpu.js";
import type { LocalLabelModel } from "../llm/index.js";
import { loadRegistry, resolveModel } from "../models/index.js";
import type { ChatMessage, ChatTool, ToolChoice } from "../openai/index.js";
import { loadPolicy } from "../policy/index.js";
import { type ShieldSets, shieldSetsFor } from "../shield/token/index.js";
import { readJsonFile, readMessagesFile } from "./input.js";
import { integer } from "./options.js";

interface ChatCommandOptions {
  model: string;
  gpu: string;
  threads?: string;
  messages: string;
  tools?: string;
  toolChoice?: string;
  shield: string;
  shieldSets?: string;
  policy?: string;
  eta?: string;
  seed?: string;
  temperature?: string;
  maxTokens?: string;
  labelerUrl?: string;
  labelerModel?: string;
  labelerKey?: string;
}

export function registerChatCommands(program: Command): void {
  program
    .command("chat")
    .description(
      "Generate one assistant message with a local model (and the token shield) and print it as JSON (OpenAI shape)",
    )
    .option(
      "-m, --model <model>",
      "a registry name, a cached model or a .gguf path (default: the registry's default)",
      loadRegistry().default,
    )
    .option(
      "--gpu <backend>",
      `llama.cpp backend: ${gpuChoices.join(", ")} (auto: a GPU whose prebuilt binary loads, else the CPU)`,
      "auto",
    )
    .option("--threads <n>", "threads of the model (default: one per core)")
    .requiredOption("--messages <file>", "OpenAI chat messages (JSON array, or an object with `messages`)")
    .option("--tools <file>", "OpenAI tools (JSON array, or an object with `tools`)")
    .option("--tool-choice <choice>", "none, auto, required, or a tool name", "auto")
    .option("--shield <mode>", "none or token", "none")
    .option(
      "--shield-sets <file>",
      "token shield sets (JSON: unsafeTools, progressingTools, arguments, doneAllowed, doneProgressing)",
    )
    .option(
      "--policy <file>",
      "ground the messages (task from the user's text, labels of text outputs) and derive the token shield's sets from this policy",
    )
    .option("--labeler-url <url>", "label with this OpenAI-compatible endpoint instead of the local model")
    .option("--labeler-model <name>", "the endpoint's model (with --labeler-url)")
    .option("--labeler-key <key>", "the endpoint's API key (with --labeler-url)")
    .option(
      "--eta <number>",
      "logit boost of progressing names/values (η/T in log-probability)",
      String(defaultEta),
    )
    .option("--seed <number>", "sampling seed", "0")
    .option("--temperature <number>", "sampling temperature", "0.7")
    .option("--max-tokens <number>", "sampled tokens at most", String(defaultMaxTokens))
    .action(async (options: ChatCommandOptions) => {
      let messages = readMessagesFile(options.messages);
      let tools: ChatTool[] = [];
      if (options.tools !== undefined) {
        const toolsFile = readJsonFile(options.tools) as unknown;
        tools = (
          Array.isArray(toolsFile) ? toolsFile : ((toolsFile as { tools?: ChatTool[] }).tools ?? [])
        ) as ChatTool[];
      }
      if (options.shield !== "none" && options.shield !== "token")
        throw new MentorError("MNT_ERR_BAD_INPUT", `--shield must be none or token, not ${options.shield}`);
      let sets: ShieldSets | undefined;
      if (options.shieldSets !== undefined) sets = readJsonFile(options.shieldSets) as ShieldSets;
      const policy = options.policy !== undefined ? loadPolicy(options.policy) : undefined;
      if (options.labelerUrl !== undefined && options.labelerModel === undefined)
        throw new MentorError("MNT_ERR_BAD_INPUT", "--labeler-url needs --labeler-model");
      const toolChoice: ToolChoice = ["none", "auto", "required"].includes(options.toolChoice ?? "auto")
        ? (options.toolChoice as ToolChoice)
        : { type: "function", function: { name: options.toolChoice as string } };
      const gpu = parseGpuChoice(options.gpu);
      const modelPath = await resolveModel(options.model, { pull: false });
      const { Engine, assistantMessage, LocalLabelModel } = await import("../llm/index.js");
      const { Labeler, OpenAILabelModel } = await import("../labeler/index.js");
      const threads =
        options.threads === undefined ? defaultThreads() : integer(options.threads, "--threads", 1);
      const engine = await Engine.load({ modelPath, gpu, threads });
      let labelModel: LocalLabelModel | undefined;
      try {
        let grounding: Grounding | undefined;
        if (policy !== undefined) {
          let model: LabelModel;
          if (options.labelerUrl !== undefined) {
            model = new OpenAILabelModel({
              url: options.labelerUrl,
              model: options.labelerModel as string,
              ...(options.labelerKey !== undefined ? { key: options.labelerKey } : {}),
            });
          } else {
            labelModel = await LocalLabelModel.create(engine.model);
            model = labelModel;
          }
          grounding = await new Labeler(policy, { model }).ground(messages);
          messages = grounding.messages as ChatMessage[];
          sets = { ...shieldSetsFor(new Evaluator(policy), messages), ...sets };
        }
        const result = await engine.generate({
          messages,
          tools,
          toolChoice,
          shield: {
            mode: options.shield,
            ...(sets !== undefined ? { sets } : {}),
            eta: number(options.eta, "--eta"),
          },
          seed: number(options.seed, "--seed"),
          temperature: number(options.temperature, "--temperature"),
          maxTokens: number(options.maxTokens, "--max-tokens"),
        });
        const output = {
          ...assistantMessage(result),
          mentor: {
            finish_reason: result.finishReason,
            ...(result.refusal !== undefined ? { refusal: result.refusal } : {}),
            shield: options.shield,
            gpu: gpuName(engine.gpu),
            ...(sets !== undefined ? { sets } : {}),
            ...(grounding !== undefined ? { grounding: grounding.notes } : {}),
            stats: result.stats,
          },
        };
        process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
        if (result.finishReason === "refused") process.exitCode = 1;
      } finally {
        await labelModel?.dispose();
        await engine.dispose();
      }
    });
}

function number(text: string | undefined, option: string): number {
  const value = Number(text);
  if (text === undefined || !Number.isFinite(value))
    throw new MentorError("MNT_ERR_BAD_INPUT", `${option} must be a number, not ${text}`);
  return value;
}
