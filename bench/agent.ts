import OpenAI, { APIError } from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { Agent as UndiciAgent } from "undici";
import { apiBase } from "../src/agent/index.js";
import { type BenchConversation, manualLeftOut } from "../src/dashboard/bench-runs.js";
import type { BenchTask, Domain, Environment, ExecutedCall } from "./domains/domain.js";

/** Bounds of one run, as in the paper: 40 proposed calls; fixed replies only before call 25. */
export interface RunLimits {
  maxCalls: number;
  /** A question gets the task's fixed reply only while fewer calls than this were proposed. */
  replyUntilCall: number;
  maxReplies: number;
}

export const defaultLimits: RunLimits = { maxCalls: 40, replyUntilCall: 25, maxReplies: 3 };

/** One step of a run as the results keep it. */
export type TraceEvent =
  | ({ kind: "call" } & ExecutedCall)
  | { kind: "blocked"; name: string; arguments: unknown; rules: string[]; feedback?: string }
  | { kind: "answer"; text: string }
  | { kind: "reply"; text: string };

export interface AgentRun {
  calls: ExecutedCall[];
  trace: TraceEvent[];
  /** Calls the model proposed: executed plus blocked. */
  proposed: number;
  blocked: number;
  repaired: number;
  /** Proposed calls the policy's evaluator judged `block` (in condition `none`: what it would have blocked). */
  violations: number;
  doneRefusals: number;
  /** Wall time of the model's turns, and the part of it the server spent grounding and deciding. */
  seconds: number;
  shieldSeconds: number;
  /** Why the run ended; `context`: the conversation outgrew the server's context (a failed run, not an error). */
  /** `stuck`: the run answered after the policy's `done.stuck_after` calls with duties still open. */
  stopped: "answer" | "stuck" | "limit" | "context" | "reference" | "error";
  /** `error`: what the server answered when it refused a turn (the run keeps its trace and conversation). */
  error?: string;
  /** The messages and each answer's `mentor` field: the dashboard opens the run from them (the model agent only). */
  conversation?: BenchConversation;
}

export function emptyRun(stopped: AgentRun["stopped"]): AgentRun {
  return {
    calls: [],
    trace: [],
    proposed: 0,
    blocked: 0,
    repaired: 0,
    violations: 0,
    doneRefusals: 0,
    seconds: 0,
    shieldSeconds: 0,
    stopped,
  };
}

export interface AgentRunOptions {
  domain: Domain;
  task: BenchTask;
  environment: Environment;
  dataDir: string;
  condition: string;
  seed: number;
}

export interface Agent {
  run(options: AgentRunOptions): Promise<AgentRun>;
}

/** Replays the task's reference actions: checks that environments and evaluators agree. */
export const oracleAgent: Agent = {
  async run({ task, environment }) {
    const calls = (task.reference ?? []).map((call) => ({
      ...call,
      ...environment.call(call.name, call.arguments),
    }));
    return {
      ...emptyRun("reference"),
      calls,
      trace: calls.map((call) => ({ kind: "call" as const, ...call })),
      proposed: calls.length,
    };
  },
};

export interface ServerAgentOptions {
  /** The mentor server's base URL, with or without `/v1` (`http://127.0.0.1:8080`). */
  url: string;
  model: string;
  temperature: number;
  limits?: RunLimits;
  /** Token shield boost (`mentor.eta`). */
  eta?: number;
  /** False: the token shield's intent-keeping redirects off (`mentor.intent`). */
  intent?: boolean;
  /** Tokens per generation at most (`max_tokens`). */
  maxTokens: number;
  /**
   * `server`: the server grounds the task and labels text outputs (its labeler); `oracle`: the
   * runner sends the domain's ground truth in `mentor` fields, measuring the shield alone.
   */
  grounding: "server" | "oracle";
  apiKey?: string;
}

const requestTimeoutMs = 15 * 60 * 1000;
const patientDispatcher = new UndiciAgent({
  headersTimeout: requestTimeoutMs,
  bodyTimeout: requestTimeoutMs,
});

/**
 * The agent loop against mentor's OpenAI-compatible server: system = the manual, user = the
 * task's opening; every tool call the server returns is executed on the environment and its
 * output appended as a tool message. An answer without a call ends the run, unless it asks a
 * question (contains "?") while replies remain: then the task's fixed reply is appended.
 */
export function serverAgent(options: ServerAgentOptions): Agent {
  const client = new OpenAI({
    baseURL: apiBase(options.url),
    apiKey: options.apiKey ?? process.env.MENTOR_API_KEY ?? "none",
    maxRetries: 0,
    timeout: requestTimeoutMs,
    // Node's fetch gives up on a response whose headers take over 300 s (undici's default), and the
    // client reports it as "Request timed out.": a long turn on a slow machine is not an error.
    fetchOptions: { dispatcher: patientDispatcher },
  });
  const limits = options.limits ?? defaultLimits;
  return {
    async run({ domain, task, environment, dataDir, condition, seed }) {
      const oracle = options.grounding === "oracle";
      const grounding = oracle && domain.grounding ? { mentor: { task: domain.grounding(task) } } : {};
      const messages: ChatCompletionMessageParam[] = [
        { role: "system", content: domain.manual(dataDir) },
        { role: "user", content: task.opening, ...grounding },
      ];
      const tools = domain.tools(dataDir) as unknown as ChatCompletionCreateParamsNonStreaming["tools"];
      const run = emptyRun("limit");
      const requests: BenchConversation["requests"] = [];
      let replies = 0;
      let turn = 0;
      while (run.proposed < limits.maxCalls) {
        const body = {
          model: options.model,
          messages,
          tools,
          seed: seed * 1000 + turn,
          max_tokens: options.maxTokens,
          temperature: options.temperature,
          // The server loads policies at start (`mentor serve --policy travel --policy tau2-mock`) by id.
          mentor: {
            policy: domain.name,
            shield: condition,
            ...(options.eta !== undefined ? { eta: options.eta } : {}),
            ...(options.intent === false ? { intent: false } : {}),
          },
        };
        turn += 1;
        const started = performance.now();
        const response = await client.chat.completions
          .create(body as ChatCompletionCreateParamsNonStreaming)
          .catch((error: unknown) => {
            if (outgrewContext(error) || refusedTurn(error)) return error as APIError;
            throw error;
          });
        run.seconds += (performance.now() - started) / 1000;
        if (response instanceof APIError) {
          if (outgrewContext(response)) run.stopped = "context";
          else {
            run.stopped = "error";
            run.error = response.message;
          }
          break;
        }
        const message = response.choices[0]?.message;
        const mentor = (response as unknown as { mentor?: unknown }).mentor ?? null;
        requests.push({ time: new Date().toISOString(), messages: messages.length, mentor });
        const record = readTurnRecord(mentor);
        run.blocked += record.blocked.length;
        run.repaired += record.repaired;
        run.violations += record.violations;
        run.doneRefusals += record.doneRefusals;
        run.shieldSeconds += record.shieldSeconds;
        run.proposed += record.blocked.length;
        for (const blocked of record.blocked) run.trace.push({ kind: "blocked", ...blocked });
        const toolCalls = (message?.tool_calls ?? []).filter((call) => call.type === "function");
        messages.push({
          role: "assistant",
          content: message?.content ?? null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        });
        if (toolCalls.length === 0) {
          const text = message?.content ?? "";
          run.trace.push({ kind: "answer", text });
          const asks = text.includes("?") && task.reply !== undefined;
          if (asks && replies < limits.maxReplies && run.proposed < limits.replyUntilCall) {
            replies += 1;
            messages.push({ role: "user", content: task.reply as string });
            run.trace.push({ kind: "reply", text: task.reply as string });
            continue;
          }
          run.stopped = record.stuck ? "stuck" : "answer";
          break;
        }
        for (const call of toolCalls) {
          run.proposed += 1;
          const args = parseArguments(call.function.arguments);
          const result = args
            ? environment.call(call.function.name, args)
            : { output: "Error: the arguments are not a JSON object.", error: true };
          const executed = { name: call.function.name, arguments: args ?? {}, ...result };
          run.calls.push(executed);
          run.trace.push({ kind: "call", ...executed });
          const label = oracle ? domain.label?.(executed) : undefined;
          messages.push({
            role: "tool",
            tool_call_id: call.id,
            content: result.output,
            ...(label !== undefined ? { mentor: { label } } : {}),
          });
        }
      }
      run.conversation = { messages: manualLeftOut(messages, domain.name), requests };
      return run;
    },
  };
}

/**
 * The server refused the conversation as longer than its context. The seeds make a rerun end the
 * same way, so this is where the run ends (it fails), with the trace so far.
 */
function outgrewContext(error: unknown): boolean {
  return error instanceof APIError && error.status === 400 && error.code === "MNT_ERR_CONTEXT_LENGTH";
}

/** The server refused the turn (422: it cannot be served as it stands, e.g. the policy allows nothing). */
function refusedTurn(error: unknown): boolean {
  return error instanceof APIError && error.status === 422;
}

function parseArguments(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text === "" ? "{}" : text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

interface TurnFigures {
  blocked: { name: string; arguments: unknown; rules: string[]; feedback?: string }[];
  repaired: number;
  violations: number;
  doneRefusals: number;
  shieldSeconds: number;
  /** The turn could end with duties open because the run had made `done.stuck_after` calls. */
  stuck: boolean;
}

/**
 * The parts of the server's `mentor` response field the benchmark counts: per attempt, the
 * proposed calls with their verdicts (blocked ones never reach the client), the repairs, the
 * refused answers and the time spent grounding and deciding. Without the field nothing is counted.
 */
export function readTurnRecord(mentor: unknown): TurnFigures {
  const figures: TurnFigures = {
    blocked: [],
    repaired: 0,
    violations: 0,
    doneRefusals: 0,
    shieldSeconds: 0,
    stuck: false,
  };
  if (typeof mentor !== "object" || mentor === null) return figures;
  const record = mentor as {
    mode?: unknown;
    attempts?: {
      calls?: {
        call?: { name?: unknown; arguments?: unknown };
        verdict?: unknown;
        rules?: unknown;
        feedback?: unknown;
      }[];
      decideMs?: unknown;
    }[];
    repairs?: unknown;
    doneRefusals?: unknown;
    stuck?: unknown;
    timings?: { groundMs?: unknown; prepareMs?: unknown };
  };
  const shielded = record.mode !== "none";
  let milliseconds = 0;
  for (const part of [record.timings?.groundMs, record.timings?.prepareMs])
    if (typeof part === "number") milliseconds += part;
  for (const attempt of Array.isArray(record.attempts) ? record.attempts : []) {
    if (typeof attempt.decideMs === "number") milliseconds += attempt.decideMs;
    for (const judged of Array.isArray(attempt.calls) ? attempt.calls : []) {
      if (judged.verdict !== "block") continue;
      figures.violations += 1;
      if (shielded) {
        figures.blocked.push({
          name: String(judged.call?.name),
          arguments: judged.call?.arguments,
          rules: Array.isArray(judged.rules) ? judged.rules.map(String) : [],
          ...(typeof judged.feedback === "string" ? { feedback: judged.feedback } : {}),
        });
      }
    }
  }
  figures.repaired = Array.isArray(record.repairs) ? record.repairs.length : 0;
  figures.doneRefusals = typeof record.doneRefusals === "number" ? record.doneRefusals : 0;
  figures.shieldSeconds = milliseconds / 1000;
  figures.stuck = typeof record.stuck === "string";
  return figures;
}
