import { z } from "zod";
import { type ShieldMode, shieldModes } from "../agent/index.js";
import { type ErrorCode, MentorError } from "../errors/index.js";
import {
  type ChatMessage,
  type ChatTool,
  depthProblem,
  expectedText,
  issue,
  messagesSchema,
  type NamedToolChoice,
  schemaProblem,
  type ToolChoice,
} from "../openai/index.js";
import type { Policy } from "../policy/index.js";
import { unknownChoiceTool } from "../shield/token/index.js";

/** A `POST /v1/chat/completions` body, checked field by field. */
export interface ChatRequest {
  /** The model id as the client sent it. */
  model: string;
  /** The model id without a shield mode suffix (`gemma-3-270m:prompt` → `gemma-3-270m`). */
  modelBase: string;
  /** The shield mode from `mentor.shield` (it wins) or the model id suffix, if either says. */
  mode?: ShieldMode;
  /** Where the mode came from. */
  modeParam?: "model" | "mentor.shield";
  /** `mentor.policy`, if given. */
  policy?: string;
  eta?: number;
  /** `mentor.intent`: false turns off the token shield's intent-keeping redirects. */
  intent?: boolean;
  messages: ChatMessage[];
  tools: ChatTool[];
  toolChoice?: ToolChoice;
  /** `parallel_tool_calls`: whether the assistant may write several calls in one message. */
  parallelToolCalls?: boolean;
  stream: boolean;
  includeUsage: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  stop?: string[];
  /**
   * `response_format`: the JSON Schema the answer follows (`json_schema`; `json_object`: any
   * object). The local engine decodes a turn without tools under its grammar.
   */
  responseSchema?: Record<string, unknown>;
}

/** A request error in OpenAI's shape: the offending field in `param`. */
export class RequestError extends MentorError {
  constructor(
    readonly param: string | null,
    message: string,
    code: ErrorCode = "MNT_ERR_BAD_INPUT",
  ) {
    super(code, param === null ? message : `${param}: ${message}`);
  }
}

function number(limits: { integer?: boolean; min?: number; max?: number } = {}) {
  let schema = z.number({ error: "must be a number" });
  if (limits.integer) schema = schema.int({ error: "must be an integer" });
  if (limits.min !== undefined) schema = schema.min(limits.min, { error: `must be at least ${limits.min}` });
  if (limits.max !== undefined) schema = schema.max(limits.max, { error: `must be at most ${limits.max}` });
  return schema.nullish();
}

const boolean = z.boolean({ error: "must be a boolean" }).nullish();

const tool = z.object(
  {
    type: z.literal("function", { error: 'must be "function"' }),
    function: z.looseObject(
      {
        name: z
          .string({ error: "must be 1–64 letters, digits, _ or -" })
          .regex(/^[a-zA-Z0-9_-]{1,64}$/, { error: "must be 1–64 letters, digits, _ or -" }),
        parameters: z
          .looseObject(
            {
              type: z.literal("object", { error: 'must be a JSON Schema of type "object"' }).optional(),
              properties: z.record(z.string(), z.unknown(), { error: "must be an object" }).optional(),
            },
            { error: 'must be a JSON Schema of type "object"' },
          )
          .optional(),
      },
      { error: "must be an object" },
    ),
  },
  { error: 'must be {type: "function", function: {name, parameters}}' },
);

const tools = z
  .array(tool, { error: "must be an array" })
  .nullish()
  .check((context) => {
    const seen = new Set<string>();
    (context.value ?? []).forEach((entry, index) => {
      const name = entry.function.name;
      if (seen.has(name))
        context.issues.push(issue(context.value, [index, "function", "name"], `${name} is declared twice`));
      seen.add(name);
    });
  });

const namedFunction = z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) });

const toolChoice = z
  .union(
    [
      z.enum(["none", "auto", "required"]),
      namedFunction,
      z.object({
        type: z.literal("allowed_tools"),
        allowed_tools: z.object({ mode: z.enum(["auto", "required"]), tools: z.array(namedFunction) }),
      }),
    ],
    {
      error:
        'must be "none", "auto", "required", {type: "function", function: {name}} or {type: "allowed_tools", allowed_tools: {mode: "auto"|"required", tools: [{type: "function", function: {name}}]}}',
    },
  )
  .nullish();

const responseFormat = z
  .discriminatedUnion(
    "type",
    [
      z.looseObject({ type: z.literal("text") }),
      z.looseObject({ type: z.literal("json_object") }),
      z.looseObject({
        type: z.literal("json_schema"),
        json_schema: z.looseObject(
          { schema: z.record(z.string(), z.unknown(), { error: "must be a JSON Schema object" }) },
          { error: "must be an object {name, schema}" },
        ),
      }),
    ],
    { error: "must be {type: text | json_object | json_schema}" },
  )
  .nullish();

const mentorField = z
  .looseObject(
    {
      policy: z.string({ error: "must be a policy id" }).optional(),
      shield: z.enum(shieldModes, { error: `must be one of ${shieldModes.join(", ")}` }).optional(),
      eta: number({ min: 0 }),
      intent: z.boolean({ error: "must be true or false" }).optional(),
    },
    { error: "must be an object {policy?, shield?, eta?, intent?}" },
  )
  .nullish();

const chatBody = z
  .looseObject(
    {
      model: z
        .string({ error: "must be a non-empty string" })
        .min(1, { error: "must be a non-empty string" }),
      messages: messagesSchema,
      tools,
      tool_choice: toolChoice,
      parallel_tool_calls: boolean,
      stream: boolean,
      stream_options: z.looseObject({ include_usage: boolean }, { error: "must be an object" }).nullish(),
      max_completion_tokens: number({ integer: true, min: 1 }),
      max_tokens: number({ integer: true, min: 1 }),
      temperature: number({ min: 0, max: 2 }),
      top_p: number({ min: 0, max: 1 }),
      seed: number({ integer: true }),
      stop: z
        .union([z.string(), z.array(z.string()).max(4)], {
          error: "must be a string or an array of at most 4 strings",
        })
        .nullish(),
      n: number({ integer: true, min: 1 }),
      response_format: responseFormat,
      mentor: mentorField,
    },
    { error: "the body must be a JSON object" },
  )
  .check((context) => {
    const body = context.value;
    if (body.n !== undefined && body.n !== null && body.n !== 1)
      context.issues.push(issue(body, ["n"], "only one choice per request is supported (n: 1)"));
    if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true)
      context.issues.push(issue(body, ["stream_options"], "is only allowed with stream: true"));
    const choice = body.tool_choice;
    if (choice === "required" && (body.tools ?? []).length === 0)
      context.issues.push(issue(body, ["tool_choice"], "required needs tools"));
    if (typeof choice === "object" && choice !== null) {
      const unknown = unknownChoiceTool(
        (body.tools ?? []).map((entry) => entry.function.name),
        toolChoiceOf(choice),
      );
      if (unknown !== undefined)
        context.issues.push(
          issue(body, ["tool_choice", ...unknown.path], `${unknown.name} is not among the tools`),
        );
      else if (
        choice.type === "allowed_tools" &&
        choice.allowed_tools.mode === "required" &&
        choice.allowed_tools.tools.length === 0
      )
        context.issues.push(
          issue(body, ["tool_choice", "allowed_tools", "tools"], "mode required needs tools"),
        );
    }
  });

/**
 * Refuses a body nested deeper than `maxJsonDepth`, naming where it goes too deep: the steps after
 * parsing (the request digest, the labeler's copy, the flight record) recurse.
 */
export function checkBodyDepth(body: unknown): void {
  const deep = depthProblem(body);
  if (deep) throw new RequestError(deep.param, deep.message);
}

/** Reads and checks a request body; the first problem is reported, naming its field. */
export function readChatRequest(body: unknown): ChatRequest {
  const parsed = chatBody.safeParse(body, { error: expectedText });
  if (!parsed.success) {
    const { param, message } = schemaProblem(parsed.error);
    throw new RequestError(param, message);
  }
  const raw = parsed.data;
  const request: ChatRequest = {
    model: raw.model,
    modelBase: raw.model,
    // The client's messages and tools as sent (unknown fields such as `mentor` included).
    messages: (body as { messages: ChatMessage[] }).messages,
    tools: ((body as { tools?: ChatTool[] | null }).tools ?? []) as ChatTool[],
    stream: raw.stream ?? false,
    includeUsage: raw.stream_options?.include_usage ?? false,
  };
  const suffix = raw.model.lastIndexOf(":");
  const named = raw.model.slice(suffix + 1);
  if (suffix > 0 && (shieldModes as readonly string[]).includes(named)) {
    request.mode = named as ShieldMode;
    request.modeParam = "model";
    request.modelBase = raw.model.slice(0, suffix);
  }
  if (raw.tool_choice !== undefined && raw.tool_choice !== null)
    request.toolChoice = toolChoiceOf(raw.tool_choice);
  if (typeof raw.parallel_tool_calls === "boolean") request.parallelToolCalls = raw.parallel_tool_calls;
  const maxTokens = raw.max_completion_tokens ?? raw.max_tokens;
  if (typeof maxTokens === "number") request.maxTokens = maxTokens;
  if (typeof raw.temperature === "number") request.temperature = raw.temperature;
  if (typeof raw.top_p === "number") request.topP = raw.top_p;
  if (typeof raw.seed === "number") request.seed = raw.seed;
  if (raw.stop !== undefined && raw.stop !== null)
    request.stop = typeof raw.stop === "string" ? [raw.stop] : raw.stop;
  const format = raw.response_format;
  if (format?.type === "json_schema") request.responseSchema = format.json_schema.schema;
  if (format?.type === "json_object") request.responseSchema = { type: "object" };
  const mentor = raw.mentor;
  if (mentor) {
    if (mentor.shield !== undefined) {
      request.mode = mentor.shield;
      request.modeParam = "mentor.shield";
    }
    if (mentor.policy !== undefined) request.policy = mentor.policy;
    if (typeof mentor.eta === "number") request.eta = mentor.eta;
    if (mentor.intent !== undefined) request.intent = mentor.intent;
  }
  return request;
}

/** A checked `tool_choice` as the turn reads it (without fields mentor does not read). */
function toolChoiceOf(choice: NonNullable<z.infer<typeof toolChoice>>): ToolChoice {
  const named = (name: string): NamedToolChoice => ({ type: "function", function: { name } });
  if (typeof choice === "string") return choice;
  if (choice.type === "function") return named(choice.function.name);
  const { mode, tools } = choice.allowed_tools;
  return {
    type: "allowed_tools",
    allowed_tools: { mode, tools: tools.map((tool) => named(tool.function.name)) },
  };
}

/**
 * Checks the request's tools against the policy: a tool the policy governs must declare every
 * parameter the policy names, with the same type, and enum values the policy allows.
 */
export function checkToolsAgainstPolicy(tools: readonly ChatTool[], policy: Policy): void {
  tools.forEach((tool, index) => {
    const spec = policy.tools.get(tool.function.name);
    if (!spec) return;
    const properties = ((tool.function.parameters as { properties?: Record<string, unknown> } | undefined)
      ?.properties ?? {}) as Record<string, Record<string, unknown> | undefined>;
    for (const parameter of spec.parameters) {
      const where = `tools[${index}].function.parameters.properties.${parameter.name}`;
      const declared = properties[parameter.name];
      const expected = parameter.jsonSchema;
      if (typeof declared !== "object" || declared === null || Array.isArray(declared))
        throw new RequestError(
          where,
          `policy ${policy.name} declares ${spec.name}(${parameter.name}: ${JSON.stringify(expected)}); the tool lacks it`,
          "MNT_ERR_TOOLS_MISMATCH",
        );
      if (expected.type !== undefined && declared.type !== undefined && declared.type !== expected.type)
        throw new RequestError(
          `${where}.type`,
          `is ${JSON.stringify(declared.type)}, policy ${policy.name} says ${JSON.stringify(expected.type)}`,
          "MNT_ERR_TOOLS_MISMATCH",
        );
      const allowed = expected.enum as unknown[] | undefined;
      const offered = declared.enum;
      if (allowed !== undefined && Array.isArray(offered)) {
        const extra = offered.filter((value) => !allowed.includes(value));
        if (extra.length > 0)
          throw new RequestError(
            `${where}.enum`,
            `${JSON.stringify(extra)} not in policy ${policy.name}'s ${JSON.stringify(allowed)}`,
            "MNT_ERR_TOOLS_MISMATCH",
          );
      }
    }
  });
}
