import { stringify } from "yaml";
import { MentorError } from "../errors/index.js";
import type { ChatTool } from "../openai/index.js";
import { type ManualSentence, policyParameter } from "./manual.js";

const name = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The policy skeleton `mentor init` writes: the tools with their parameters, required arguments
 * and descriptions, the manual's sentences under their ids, and no propositions or rules yet.
 * Every name a policy needs as a name (a tool, a parameter) is checked here, so the skeleton loads.
 */
export function policySkeleton(input: {
  policy: string;
  tools: readonly ChatTool[];
  sentences: readonly ManualSentence[];
  /** The tools file, named in every problem. */
  file: string;
}): string {
  const problems: string[] = [];
  const tools: Record<string, Record<string, unknown>> = {};
  input.tools.forEach((tool, index) => {
    const where = `${input.file}: tools[${index}].function`;
    const fn = tool.function;
    if (!name.test(fn.name)) {
      problems.push(`${where}.name ${JSON.stringify(fn.name)} must be a name (letters, digits, _)`);
      return;
    }
    if (fn.name in tools) problems.push(`${where}.name ${fn.name} is declared twice`);
    const schema = (fn.parameters ?? {}) as { type?: unknown; properties?: unknown; required?: unknown };
    if (schema.type !== undefined && schema.type !== "object")
      problems.push(`${where}.parameters.type must be object, not ${JSON.stringify(schema.type)}`);
    const properties = schema.properties ?? {};
    if (typeof properties !== "object" || properties === null || Array.isArray(properties)) {
      problems.push(`${where}.parameters.properties must be an object`);
      return;
    }
    const parameters: Record<string, unknown> = {};
    for (const [parameter, property] of Object.entries(properties as Record<string, unknown>)) {
      const at = `${where}.parameters.properties.${parameter}`;
      if (!name.test(parameter))
        problems.push(`${at}: ${JSON.stringify(parameter)} must be a name (letters, digits, _)`);
      if (typeof property !== "object" || property === null || Array.isArray(property)) {
        problems.push(`${at} must be a JSON Schema object`);
        continue;
      }
      const members = (property as { enum?: unknown }).enum;
      if (
        members !== undefined &&
        (!Array.isArray(members) ||
          members.some((member) => !["string", "number", "boolean"].includes(typeof member)))
      )
        problems.push(`${at}.enum must be a list of strings, numbers and booleans`);
      parameters[parameter] = policyParameter(property as Record<string, unknown>);
    }
    const required = schema.required ?? Object.keys(parameters);
    if (
      !Array.isArray(required) ||
      required.some((entry) => typeof entry !== "string" || !(entry in parameters))
    )
      problems.push(
        `${where}.parameters.required must list parameters (${Object.keys(parameters).join(", ") || "none declared"}), found ${JSON.stringify(required)}`,
      );
    tools[fn.name] = {
      ...(fn.description ? { description: fn.description } : {}),
      parameters,
      ...(Array.isArray(required) && required.length !== Object.keys(parameters).length ? { required } : {}),
    };
  });
  if (input.tools.length === 0) problems.push(`${input.file}: there are no tools`);
  if (problems.length > 0)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      problems.length === 1
        ? (problems[0] as string)
        : `${problems.length} problems:\n${problems.join("\n")}`,
    );
  const policy = {
    policy: input.policy,
    manual: Object.fromEntries(input.sentences.map((sentence) => [sentence.id, sentence.text])),
    tools,
    propositions: {},
    rules: [],
  };
  return [
    "# Written by mentor init: the tools and the manual's sentences. Next: task, entities,",
    "# propositions and one rule or constraint per sentence (docs/policy.md).",
    stringify(policy, { lineWidth: 0 }),
  ].join("\n");
}
