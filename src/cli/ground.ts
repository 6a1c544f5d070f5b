import type { Command } from "commander";
import { MentorError } from "../errors/index.js";
import { Labeler, type LabelModel, OpenAILabelModel } from "../labeler/index.js";
import { type ChatMessage, systemText } from "../openai/index.js";
import { loadPolicy, policyForSystem } from "../policy/index.js";
import { traceFromMessages } from "../run/index.js";
import { readMessagesFile } from "./input.js";
import { integer } from "./options.js";

interface GroundCommandOptions {
  policy: string;
  messages: string;
  model?: string;
  threads?: string;
  gpu: string;
  labelerUrl?: string;
  labelerModel?: string;
  labelerKey?: string;
}

/**
 * `mentor ground`: what the labeler makes of a conversation — the task calls of its user messages
 * and the labels of its text tool outputs, each with its source (the client's `mentor` field, the
 * policy's rules, the model), and what it could not ground with why. Without a model only the
 * policy's rules ground, as `check` and `verify` do; `--model` or `--labeler-url` adds the LLM
 * labeler where the policy allows it, as the server does.
 */
export function registerGroundCommand(program: Command): void {
  program
    .command("ground")
    .description(
      "Show the task calls and labels the labeler grounds a conversation into, and what it cannot ground",
    )
    .requiredOption("--policy <file>", "policy file (YAML)")
    .requiredOption("--messages <file>", "OpenAI messages (JSON array, or an object with `messages`)")
    .option("--model <name|path>", "also label with this local model where the policy allows the LLM labeler")
    .option("--threads <n>", "threads of the local model (default: one per core)")
    .option("--gpu <backend>", "auto, cpu, cuda, vulkan or metal (with --model)", "auto")
    .option("--labeler-url <url>", "also label with this OpenAI-compatible endpoint")
    .option("--labeler-model <name>", "the endpoint's model (with --labeler-url)")
    .option("--labeler-key <key>", "the endpoint's API key (with --labeler-url)")
    .action(async (options: GroundCommandOptions) => {
      const messages = readMessagesFile(options.messages);
      const policy = policyForSystem(loadPolicy(options.policy), systemText(messages));
      if (options.model !== undefined && options.labelerUrl !== undefined)
        throw new MentorError("MNT_ERR_BAD_INPUT", "give --model or --labeler-url, not both");
      if (options.labelerUrl !== undefined && options.labelerModel === undefined)
        throw new MentorError("MNT_ERR_BAD_INPUT", "--labeler-url needs --labeler-model");
      const model = await labelModelOf(options);
      try {
        const grounding = await new Labeler(policy, model ? { model: model.labelModel } : {}).ground(
          messages,
        );
        // Reading the grounded conversation as the evaluator does checks the client's fields too.
        const trace = traceFromMessages(grounding.messages, policy);
        const toolOf = toolNamesByCallId(messages);
        const notes = grounding.notes.map(({ ms: _, ...note }) => {
          const message = messages[note.message];
          const tool = message?.role === "tool" ? toolOf.get(message.tool_call_id ?? "") : undefined;
          return { ...note, ...(tool !== undefined ? { tool } : {}) };
        });
        const output = {
          policy: policy.name,
          // What the system prompt set (docs/policy.md, "Settings from the system prompt").
          ...(policy.settings.specs.length > 0 ? { settings: policy.settings.values } : {}),
          labeler: model?.name ?? "rules",
          task: trace.task,
          grounded: notes.filter((note) => note.error === undefined),
          ungrounded: notes.filter((note) => note.error !== undefined),
        };
        process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
      } finally {
        await model?.dispose();
      }
    });
}

async function labelModelOf(
  options: GroundCommandOptions,
): Promise<{ labelModel: LabelModel; name: string; dispose: () => Promise<void> } | undefined> {
  if (options.labelerUrl !== undefined) {
    const labelModel = new OpenAILabelModel({
      url: options.labelerUrl,
      model: options.labelerModel as string,
      ...(options.labelerKey !== undefined ? { key: options.labelerKey } : {}),
    });
    return {
      labelModel,
      name: `rules, then ${options.labelerUrl} (${options.labelerModel})`,
      dispose: async () => {},
    };
  }
  if (options.model === undefined) return undefined;
  const { resolveModel } = await import("../models/index.js");
  const { Engine, LocalLabelModel } = await import("../llm/index.js");
  const { defaultThreads, parseGpuChoice } = await import("../llm/gpu.js");
  const modelPath = await resolveModel(options.model, { pull: false });
  const threads = options.threads === undefined ? defaultThreads() : integer(options.threads, "--threads", 1);
  const engine = await Engine.load({ modelPath, gpu: parseGpuChoice(options.gpu), threads });
  const labelModel = await LocalLabelModel.create(engine.model);
  return {
    labelModel,
    name: `rules, then ${modelPath}`,
    dispose: async () => {
      await labelModel.dispose();
      await engine.dispose();
    },
  };
}

function toolNamesByCallId(messages: readonly ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages)
    for (const call of message.role === "assistant" ? (message.tool_calls ?? []) : [])
      if (call.id !== undefined) names.set(call.id, call.function.name);
  return names;
}
