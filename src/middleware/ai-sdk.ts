import { MentorError } from "../errors/index.js";
import { callOf, type ToolGuard } from "./guard.js";

/** The part of a Vercel AI SDK tool (`tool({…})`, ai 5 and 6) the shield wraps. */
interface AiTool {
  execute?: (input: never, options: never) => unknown;
}

/** The parts of AI SDK language model (v3 specification) calls the done check reads and writes. */
interface ModelCall {
  prompt: unknown[];
  [key: string]: unknown;
}
interface ModelResult {
  content: { type: string; text?: string }[];
}
interface Model {
  doGenerate: (call: never) => PromiseLike<unknown>;
}

/**
 * The prompt shield for an AI SDK `generateText` / `streamText` call: every tool's `execute` is
 * judged first (a refused call is not run: its result is the shield's feedback). A tool without
 * `execute` would be run by the caller, out of the shield's sight, so it is refused here.
 */
export function shieldAiTools<T extends Record<string, AiTool>>(tools: T, guard: ToolGuard): T {
  const wrapped: Record<string, AiTool> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute as ((input: unknown, options: unknown) => unknown) | undefined;
    if (typeof execute !== "function")
      throw new MentorError(
        "MNT_ERR_BAD_INPUT",
        `tool ${name} has no execute: the shield judges tool executions, so every tool must have one`,
      );
    wrapped[name] = {
      ...tool,
      execute: (async (input: unknown, options: unknown) => {
        const guarded = await guard.run(callOf(name, input), () => execute(input, options));
        return guarded.refused ? guarded.feedback : guarded.result;
      }) as AiTool["execute"],
    };
  }
  return wrapped as T;
}

/**
 * A language model middleware (`wrapLanguageModel({model, middleware})`) that refuses to let the
 * run end while duties are open: an answer without a tool call is answered with the shield's
 * feedback as a user message, and the model generates again, up to the policy's
 * `done.max_refusals`. Generation only (`generateText`); `streamText` streams as the model wrote.
 */
export function shieldAiModel(guard: ToolGuard) {
  return {
    specificationVersion: "v3" as const,
    wrapGenerate: async ({
      doGenerate,
      params,
      model,
    }: {
      doGenerate: () => PromiseLike<unknown>;
      params: ModelCall;
      model: Model;
    }): Promise<never> => {
      let result = (await doGenerate()) as ModelResult;
      let prompt = params.prompt;
      while (!result.content.some((part) => part.type === "tool-call")) {
        const feedback = guard.doneRefusal();
        if (feedback === undefined) break;
        const said = result.content.filter((part) => part.type === "text" && part.text);
        prompt = [
          ...prompt,
          ...(said.length > 0
            ? [{ role: "assistant", content: said.map((part) => ({ type: "text", text: part.text })) }]
            : []),
          { role: "user", content: [{ type: "text", text: feedback }] },
        ];
        result = (await model.doGenerate({ ...params, prompt } as never)) as ModelResult;
      }
      return result as never;
    },
  };
}
