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
interface StreamPart {
  type: string;
  delta?: string;
}
interface StreamResult {
  stream: ReadableStream<StreamPart>;
}
interface StreamingModel {
  doStream: (call: never) => PromiseLike<unknown>;
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

/** The text parts of a generation, as an assistant message of the prompt (none if it said nothing). */
function said(texts: readonly string[]): unknown[] {
  const text = texts.join("");
  return text === "" ? [] : [{ role: "assistant", content: [{ type: "text", text }] }];
}

function refusal(feedback: string): unknown {
  return { role: "user", content: [{ type: "text", text: feedback }] };
}

/**
 * A language model middleware (`wrapLanguageModel({model, middleware})`) that refuses to let the
 * run end while duties are open: an answer without a tool call is answered with the shield's
 * feedback as a user message, and the model generates again, up to the policy's
 * `done.max_refusals`. In `streamText` each generation is read whole before any of it is passed
 * on (whether it ends the run is known only at its end), so the stream arrives at once.
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
        const texts = result.content.filter((part) => part.type === "text").map((part) => part.text ?? "");
        prompt = [...prompt, ...said(texts), refusal(feedback)];
        result = (await model.doGenerate({ ...params, prompt } as never)) as ModelResult;
      }
      return result as never;
    },
    wrapStream: async ({
      doStream,
      params,
      model,
    }: {
      doStream: () => PromiseLike<unknown>;
      params: ModelCall;
      model: StreamingModel;
    }): Promise<never> => {
      let result = (await doStream()) as StreamResult;
      let parts = await readAll(result.stream);
      let prompt = params.prompt;
      while (!parts.some((part) => part.type === "tool-call")) {
        const feedback = guard.doneRefusal();
        if (feedback === undefined) break;
        const texts = parts.filter((part) => part.type === "text-delta").map((part) => part.delta ?? "");
        prompt = [...prompt, ...said(texts), refusal(feedback)];
        result = (await model.doStream({ ...params, prompt } as never)) as StreamResult;
        parts = await readAll(result.stream);
      }
      const replay = parts;
      return {
        ...result,
        stream: new ReadableStream({
          start(controller) {
            for (const part of replay) controller.enqueue(part);
            controller.close();
          },
        }),
      } as never;
    },
  };
}

async function readAll(stream: ReadableStream<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}
