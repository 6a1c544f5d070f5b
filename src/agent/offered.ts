import type { ChatTool, ToolChoice } from "../openai/index.js";
import { turnSets } from "../shield/token/index.js";
import type { GeneratedCall } from "./generator.js";

/**
 * The call, marked `invalid` (the turn blocks it without judging: fail closed) where it is not one
 * the request offers: a tool outside its `tools` or its `tool_choice`, or an argument the tool's
 * parameters do not declare (`properties`). The local engine cannot write either (its decoder
 * writes only the offered names and the declared properties); any other generator, an upstream
 * above all, is held to the same.
 */
export function offeredCall(
  call: GeneratedCall,
  tools: readonly ChatTool[],
  toolChoice: ToolChoice,
): GeneratedCall {
  if (call.invalid !== undefined) return call;
  const names = turnSets({ tools: tools.map((tool) => tool.function.name), toolChoice }).offered;
  const tool = names.includes(call.name)
    ? tools.find((entry) => entry.function.name === call.name)?.function
    : undefined;
  if (tool === undefined) {
    return {
      ...call,
      invalid: `${call.name} is not a tool this request offers (${names.length > 0 ? `it offers ${names.join(", ")}` : "it offers none"})`,
    };
  }
  const properties = tool.parameters?.properties ?? {};
  const undeclared = Object.keys(call.arguments).filter((key) => !Object.hasOwn(properties, key));
  if (undeclared.length === 0) return call;
  const declared = Object.keys(properties);
  return {
    ...call,
    invalid: `${call.name} has no parameter ${undeclared.join(", ")} (${declared.length > 0 ? `its parameters: ${declared.join(", ")}` : "it takes none"})`,
  };
}
