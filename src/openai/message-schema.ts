import { z } from "zod";
import { depthProblem, formatJsonPath, type InputProblem, type JsonPath } from "./json-depth.js";

/**
 * The schema of the `messages` a client sends, shared by the server (the request body) and the CLI
 * (`mentor check`, `mentor verify`), and how a schema's problem is told: the field's path and what
 * was expected there.
 */

const roles = ["system", "developer", "user", "assistant", "tool"] as const;

const textPart = z.object(
  {
    type: z.literal("text", { error: 'must be a text part {type: "text", text}' }),
    text: z.string({ error: "must be a string" }),
  },
  { error: 'must be a text part {type: "text", text}' },
);
const content = z.union([z.string(), z.array(textPart)], {
  error: "must be a string or an array of text parts",
});

const toolCall = z.object(
  {
    id: z.string({ error: "must be a string" }).min(1, { error: "must be a string" }),
    function: z.object(
      {
        name: z.string({ error: "must be a string" }),
        arguments: z.string({ error: "must be a JSON string" }).check((context) => {
          const problem = jsonTextProblem(context.value);
          if (problem) context.issues.push(issue(context.value, [], problem));
        }),
      },
      { error: "must be an object" },
    ),
  },
  { error: "must be an object" },
);

const message = z
  .looseObject(
    {
      role: z.enum(roles, { error: `must be one of ${roles.join(", ")}` }),
      content: content.nullish(),
      tool_calls: z.array(toolCall, { error: "must be an array" }).nullish(),
      tool_call_id: z.string({ error: "must be a string" }).optional(),
    },
    { error: "must be an object" },
  )
  .check((context) => {
    const { role, content: value, tool_call_id: answers } = context.value;
    if (role !== "assistant" && (value === null || value === undefined))
      context.issues.push(issue(context.value, ["content"], "must be a string or an array of text parts"));
    if (role === "tool" && answers === undefined)
      context.issues.push(issue(context.value, ["tool_call_id"], "must be a string"));
  });

/** OpenAI chat messages: every tool message answers an earlier call, and every call has its result. */
export const messagesSchema = z
  .array(message, { error: "must be a non-empty array" })
  .min(1, { error: "must be a non-empty array" })
  .check((context) => {
    const calls: { id: string; at: (string | number)[] }[] = [];
    const called = new Set<string>();
    const answered = new Set<string>();
    context.value.forEach((entry, index) => {
      (entry.tool_calls ?? []).forEach((call, callIndex) => {
        calls.push({ id: call.id, at: [index, "tool_calls", callIndex, "id"] });
        called.add(call.id);
      });
      if (entry.role !== "tool" || entry.tool_call_id === undefined) return;
      if (!called.has(entry.tool_call_id))
        context.issues.push(
          issue(
            context.value,
            [index, "tool_call_id"],
            `${JSON.stringify(entry.tool_call_id)} answers no earlier assistant tool call`,
          ),
        );
      answered.add(entry.tool_call_id);
    });
    for (const call of calls)
      if (!answered.has(call.id))
        context.issues.push(
          issue(
            context.value,
            call.at,
            `the tool call ${JSON.stringify(call.id)} has no tool message with its result`,
          ),
        );
  });

/**
 * Checks `value` against `schema`: the first problem, its field named from `prefix` down
 * (`messages[0].role`), or undefined when the value fits.
 */
export function firstProblem(
  schema: z.ZodType,
  value: unknown,
  prefix: JsonPath = [],
): InputProblem | undefined {
  const parsed = schema.safeParse(value, { error: expectedText });
  return parsed.success ? undefined : schemaProblem(parsed.error, prefix);
}

/** The problem to report of a failed parse (`schema.safeParse(value, { error: expectedText })`). */
export function schemaProblem(error: z.ZodError, prefix: JsonPath = []): InputProblem {
  const { path, message } = firstIssue(error.issues);
  const full = [...prefix, ...(path as (string | number)[])];
  return { param: full.length > 0 ? formatJsonPath(full) : null, message };
}

/** A custom issue at `path`, for the checks of a schema (`context.issues.push(issue(...))`). */
export function issue(input: unknown, path: (string | number)[], message: string): z.core.$ZodRawIssue {
  return { code: "custom", input, path, message };
}

type Issue = z.core.$ZodIssue;

/**
 * The issue to report: the first one, and inside a union the branch that got furthest (a bad text
 * part of an array content is named as such, not as "neither a string nor an array").
 */
function firstIssue(issues: readonly Issue[]): { path: PropertyKey[]; message: string } {
  const first = issues[0] as Issue;
  if (first.code === "invalid_union") {
    const deepest = first.errors
      .map((branch) => branch[0])
      .filter((branchIssue): branchIssue is Issue => branchIssue !== undefined && branchIssue.path.length > 0)
      .sort((a, b) => b.path.length - a.path.length)[0];
    if (deepest) {
      const inner = firstIssue([deepest]);
      return { path: [...first.path, ...inner.path], message: inner.message };
    }
  }
  return { path: first.path, message: first.message };
}

const typeNames: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "an object",
  record: "an object",
  null: "null",
};

/**
 * The error map of every parse of client input: what a field should have been, where a schema gives
 * no message of its own (zod's defaults read "Invalid input: expected string, received number").
 */
export function expectedText(raw: z.core.$ZodRawIssue): string | undefined {
  const found = raw as z.core.$ZodRawIssue & Record<string, unknown>;
  switch (found.code) {
    case "invalid_type": {
      const expected = typeNames[String(found.expected)] ?? String(found.expected);
      return found.input === undefined ? `is required (${expected})` : `must be ${expected}`;
    }
    case "invalid_value": {
      const values = (found.values as unknown[]).map((value) => JSON.stringify(value));
      return values.length === 1 ? `must be ${values[0]}` : `must be one of ${values.join(", ")}`;
    }
    case "too_big":
    case "too_small": {
      const bound = found.code === "too_big" ? `at most ${found.maximum}` : `at least ${found.minimum}`;
      if (found.origin === "array") return `must have ${bound} items`;
      if (found.origin === "string") return `must be ${bound} characters long`;
      return `must be ${bound}`;
    }
    case "unrecognized_keys":
      return `has unknown fields ${(found.keys as string[]).join(", ")}`;
    case "invalid_union":
      return "matches none of the accepted forms";
    default:
      return undefined;
  }
}

/** What is wrong with a JSON text a client wrote inside a string (a call's arguments), if anything. */
function jsonTextProblem(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text || "{}");
  } catch {
    return "is not valid JSON";
  }
  const deep = depthProblem(value);
  return deep ? `${deep.message} (at ${deep.param})` : undefined;
}
