import { MentorError } from "../errors/index.js";
import { callOf, type ToolGuard } from "./guard.js";

/** How LangChain runs a tool (`StructuredTool._call`, protected: reached at run time, not typed). */
type Run = (args: unknown, runManager?: unknown, config?: unknown) => Promise<unknown>;

/**
 * LangChain JS tools (`StructuredTool`, `tool(…)`) whose every run is judged first: a refused
 * call is not run, and its result is the shield's feedback (a string, so not for tools with
 * `responseFormat: "content_and_artifact"`). Each wrapped tool is the original underneath (its
 * name, schema and methods; `instanceof` holds); only `_call`, which `invoke` runs after parsing
 * the arguments, is replaced.
 */
export function shieldLangChainTools<T extends { name: string }>(tools: readonly T[], guard: ToolGuard): T[] {
  return tools.map((tool) => {
    const run = (tool as unknown as { _call?: Run })._call;
    if (typeof run !== "function")
      throw new MentorError(
        "MNT_ERR_BAD_INPUT",
        `tool ${tool.name} is not a LangChain StructuredTool (it has no _call to guard)`,
      );
    const wrapped = Object.create(tool) as T & { _call: Run };
    wrapped._call = async (args, runManager, config) => {
      const guarded = await guard.run(callOf(tool.name, args), () =>
        run.call(tool, args, runManager, config),
      );
      return guarded.refused ? guarded.feedback : guarded.result;
    };
    return wrapped;
  });
}
