import { type ShieldMode, shieldModes } from "../agent/index.js";
import { type ErrorCode, MentorError } from "../errors/index.js";
import type { ChatMessage, ChatTool, ToolChoice } from "../openai/index.js";
import type { Policy } from "../policy/index.js";

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

const roles = new Set(["system", "developer", "user", "assistant", "tool"]);
const toolName = /^[a-zA-Z0-9_-]{1,64}$/;

/** Reads and checks a request body; every problem names its field. */
export function readChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw new RequestError(null, "the body must be a JSON object");
  if (typeof body.model !== "string" || body.model === "")
    throw new RequestError("model", "must be a non-empty string");
  const request: ChatRequest = {
    model: body.model,
    modelBase: body.model,
    messages: readMessages(body.messages),
    tools: readTools(body.tools),
    stream: optionalBoolean(body.stream, "stream") ?? false,
    includeUsage: false,
  };
  const suffix = body.model.lastIndexOf(":");
  if (suffix > 0 && (shieldModes as readonly string[]).includes(body.model.slice(suffix + 1))) {
    request.mode = body.model.slice(suffix + 1) as ShieldMode;
    request.modeParam = "model";
    request.modelBase = body.model.slice(0, suffix);
  }
  if (body.tool_choice !== undefined && body.tool_choice !== null)
    request.toolChoice = readToolChoice(body.tool_choice, request.tools);
  const parallelToolCalls = optionalBoolean(body.parallel_tool_calls, "parallel_tool_calls");
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!request.stream) throw new RequestError("stream_options", "is only allowed with stream: true");
    if (!isObject(body.stream_options)) throw new RequestError("stream_options", "must be an object");
    request.includeUsage =
      optionalBoolean(body.stream_options.include_usage, "stream_options.include_usage") ?? false;
  }
  const maxTokens =
    optionalNumber(body.max_completion_tokens, "max_completion_tokens", { integer: true, min: 1 }) ??
    optionalNumber(body.max_tokens, "max_tokens", { integer: true, min: 1 });
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  const temperature = optionalNumber(body.temperature, "temperature", { min: 0, max: 2 });
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumber(body.top_p, "top_p", { min: 0, max: 1 });
  if (topP !== undefined) request.topP = topP;
  const seed = optionalNumber(body.seed, "seed", { integer: true });
  if (seed !== undefined) request.seed = seed;
  if (body.stop !== undefined && body.stop !== null) request.stop = readStop(body.stop);
  const n = optionalNumber(body.n, "n", { integer: true, min: 1 });
  if (n !== undefined && n !== 1)
    throw new RequestError("n", "only one choice per request is supported (n: 1)");
  if (body.mentor !== undefined && body.mentor !== null) readMentorField(body.mentor, request);
  return request;
}

function readMentorField(raw: unknown, request: ChatRequest): void {
  if (!isObject(raw)) throw new RequestError("mentor", "must be an object {policy?, shield?, eta?, intent?}");
  if (raw.shield !== undefined) {
    if (typeof raw.shield !== "string" || !(shieldModes as readonly string[]).includes(raw.shield))
      throw new RequestError("mentor.shield", `must be one of ${shieldModes.join(", ")}`);
    request.mode = raw.shield as ShieldMode;
    request.modeParam = "mentor.shield";
  }
  if (raw.policy !== undefined) {
    if (typeof raw.policy !== "string") throw new RequestError("mentor.policy", "must be a policy id");
    request.policy = raw.policy;
  }
  const eta = optionalNumber(raw.eta, "mentor.eta", { min: 0 });
  if (eta !== undefined) request.eta = eta;
  if (raw.intent !== undefined) {
    if (typeof raw.intent !== "boolean") throw new RequestError("mentor.intent", "must be true or false");
    request.intent = raw.intent;
  }
}

function readMessages(raw: unknown): ChatMessage[] {
  if (!Array.isArray(raw) || raw.length === 0)
    throw new RequestError("messages", "must be a non-empty array");
  const answered = new Set<string>();
  const calls: { id: string; where: string }[] = [];
  raw.forEach((message, index) => {
    const where = `messages[${index}]`;
    if (!isObject(message)) throw new RequestError(where, "must be an object");
    if (typeof message.role !== "string" || !roles.has(message.role))
      throw new RequestError(`${where}.role`, `must be one of ${[...roles].join(", ")}`);
    readContent(message.content, `${where}.content`, message.role === "assistant");
    if (message.role === "assistant" && message.tool_calls !== undefined && message.tool_calls !== null) {
      if (!Array.isArray(message.tool_calls))
        throw new RequestError(`${where}.tool_calls`, "must be an array");
      message.tool_calls.forEach((call, callIndex) => {
        const at = `${where}.tool_calls[${callIndex}]`;
        if (!isObject(call)) throw new RequestError(at, "must be an object");
        if (typeof call.id !== "string" || call.id === "")
          throw new RequestError(`${at}.id`, "must be a string");
        if (!isObject(call.function)) throw new RequestError(`${at}.function`, "must be an object");
        if (typeof call.function.name !== "string")
          throw new RequestError(`${at}.function.name`, "must be a string");
        if (typeof call.function.arguments !== "string")
          throw new RequestError(`${at}.function.arguments`, "must be a JSON string");
        try {
          JSON.parse(call.function.arguments || "{}");
        } catch {
          throw new RequestError(`${at}.function.arguments`, "is not valid JSON");
        }
        calls.push({ id: call.id, where: `${at}.id` });
      });
    }
    if (message.role === "tool") {
      if (typeof message.tool_call_id !== "string")
        throw new RequestError(`${where}.tool_call_id`, "must be a string");
      if (!calls.some((call) => call.id === message.tool_call_id))
        throw new RequestError(
          `${where}.tool_call_id`,
          `${JSON.stringify(message.tool_call_id)} answers no earlier assistant tool call`,
        );
      answered.add(message.tool_call_id);
    }
  });
  for (const call of calls)
    if (!answered.has(call.id))
      throw new RequestError(
        call.where,
        `the tool call ${JSON.stringify(call.id)} has no tool message with its result`,
      );
  return raw as ChatMessage[];
}

function readContent(raw: unknown, where: string, mayBeNull: boolean): void {
  if (typeof raw === "string") return;
  if ((raw === null || raw === undefined) && mayBeNull) return;
  if (!Array.isArray(raw)) throw new RequestError(where, "must be a string or an array of text parts");
  raw.forEach((part, index) => {
    if (!isObject(part) || part.type !== "text" || typeof part.text !== "string")
      throw new RequestError(`${where}[${index}]`, 'must be a text part {type: "text", text}');
  });
}

function readTools(raw: unknown): ChatTool[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new RequestError("tools", "must be an array");
  const names = new Set<string>();
  raw.forEach((tool, index) => {
    const where = `tools[${index}]`;
    if (!isObject(tool) || tool.type !== "function")
      throw new RequestError(`${where}.type`, 'must be "function"');
    if (!isObject(tool.function)) throw new RequestError(`${where}.function`, "must be an object");
    const name = tool.function.name;
    if (typeof name !== "string" || !toolName.test(name))
      throw new RequestError(`${where}.function.name`, "must be 1–64 letters, digits, _ or -");
    if (names.has(name)) throw new RequestError(`${where}.function.name`, `${name} is declared twice`);
    names.add(name);
    const parameters = tool.function.parameters;
    if (parameters !== undefined && (!isObject(parameters) || (parameters.type ?? "object") !== "object"))
      throw new RequestError(`${where}.function.parameters`, 'must be a JSON Schema of type "object"');
    if (parameters?.properties !== undefined && !isObject(parameters.properties))
      throw new RequestError(`${where}.function.parameters.properties`, "must be an object");
  });
  return raw as ChatTool[];
}

function readToolChoice(raw: unknown, tools: readonly ChatTool[]): ToolChoice {
  if (raw === "none" || raw === "auto") return raw;
  if (raw === "required") {
    if (tools.length === 0) throw new RequestError("tool_choice", "required needs tools");
    return raw;
  }
  if (
    isObject(raw) &&
    raw.type === "function" &&
    isObject(raw.function) &&
    typeof raw.function.name === "string"
  ) {
    const name = raw.function.name;
    if (!tools.some((tool) => tool.function.name === name))
      throw new RequestError("tool_choice.function.name", `${name} is not among the tools`);
    return { type: "function", function: { name } };
  }
  throw new RequestError(
    "tool_choice",
    'must be "none", "auto", "required" or {type: "function", function: {name}}',
  );
}

function readStop(raw: unknown): string[] {
  const stops = typeof raw === "string" ? [raw] : raw;
  if (!Array.isArray(stops) || stops.length > 4 || stops.some((stop) => typeof stop !== "string"))
    throw new RequestError("stop", "must be a string or an array of at most 4 strings");
  return stops as string[];
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
      if (!isObject(declared))
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

function optionalBoolean(raw: unknown, param: string): boolean | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "boolean") throw new RequestError(param, "must be a boolean");
  return raw;
}

function optionalNumber(
  raw: unknown,
  param: string,
  limits: { integer?: boolean; min?: number; max?: number },
): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "number" || !Number.isFinite(raw)) throw new RequestError(param, "must be a number");
  if (limits.integer && !Number.isInteger(raw)) throw new RequestError(param, "must be an integer");
  if (limits.min !== undefined && raw < limits.min)
    throw new RequestError(param, `must be at least ${limits.min}`);
  if (limits.max !== undefined && raw > limits.max)
    throw new RequestError(param, `must be at most ${limits.max}`);
  return raw;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
