import { randomBytes } from "node:crypto";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { z } from "zod";
import { givenGrounding, shieldModes } from "../../agent/index.js";
import { MentorError } from "../../errors/index.js";
import {
  type Decision,
  type DoneCheck,
  monitorRecord,
  needsSolver,
  type ProposedCall,
} from "../../evaluator/index.js";
import { ungroundedError } from "../../labeler/index.js";
import { type ChatMessage, expectedText, messagesSchema, schemaProblem } from "../../openai/index.js";
import { parseArguments } from "../../run/index.js";
import { blockedText, doneRefusedText, reminderText } from "../../shield/index.js";
import type { ServerContext } from "../context.js";
import type { PolicyEntry } from "../policies.js";
import { RequestError } from "../request.js";
import { recorderFailed, selectPolicy, withoutClientGrounding } from "./common.js";

const call = z.looseObject(
  {
    name: z.string({ error: "must be a tool name" }).min(1, { error: "must be a tool name" }),
    arguments: z
      .union([z.record(z.string(), z.unknown()), z.string()], {
        error: "must be an object or a JSON string of one",
      })
      .optional(),
    id: z.string({ error: "must be a string" }).optional(),
  },
  { error: "must be {name, arguments}" },
);

const monitorBody = z.looseObject(
  {
    model: z
      .string({ error: "must be a non-empty string" })
      .min(1, { error: "must be a non-empty string" })
      .optional(),
    messages: messagesSchema,
    mentor: z
      .looseObject(
        { policy: z.string({ error: "must be a policy id" }).optional() },
        { error: "must be an object {policy?}" },
      )
      .nullish(),
  },
  { error: "the body must be a JSON object" },
);

const withCall = monitorBody.extend({ call });
const withOutput = withCall.extend({
  output: z.unknown().refine((value) => value !== undefined, { error: "is missing: the tool's result" }),
});

/** A monitor request, checked: its policy, and its messages as the server trusts them. */
interface MonitorRequest {
  entry: PolicyEntry;
  messages: ChatMessage[];
}

/** A call as the client sent it (`id`: the tool call id to write in the messages, if it has one). */
type SentCall = ProposedCall & { id?: string };

/**
 * The monitor over HTTP, for agents in any language that run their own tools (docs/server.md,
 * "The monitor over HTTP"): `check` a proposed call, `record` a made one with its result, ask whether
 * the run may `done`. Stateless like the chat route: every request carries the conversation
 * (`messages`), grounded as the chat route grounds it; each answer says what to append to it.
 */
export const monitorRoutes: FastifyPluginAsync<{ context: ServerContext }> = async (app, { context }) => {
  const { settings, recorder, metrics } = context;

  app.post("/v1/monitor/check", async (request) => {
    const started = performance.now();
    const { entry, messages } = read(withCall, request.body);
    const proposed = sentCall(request.body);
    const { grounded, ungrounded } = await ground(entry, messages);
    const { evaluator } = entry;
    const call = { name: proposed.name, arguments: proposed.arguments };
    const decided = evaluator.decide(grounded, call);
    const decision = needsSolver(decided)
      ? await evaluator.decideWithRepair(grounded, call, context.solver())
      : decided;
    write(request, entry, grounded, { decisions: [decision] }, started);
    const blocked = decision.verdict === "block";
    const feedback = blocked ? blockedText(decision) : undefined;
    return {
      decide: decision,
      next: evaluator.next(grounded),
      ungrounded,
      ...(feedback !== undefined ? { feedback } : {}),
      append: feedback !== undefined ? callAndResult(proposed, feedback) : [],
    };
  });

  app.post("/v1/monitor/record", async (request) => {
    const { entry, messages } = read(withOutput, request.body);
    const made = sentCall(request.body);
    const output = (request.body as { output: unknown }).output;
    const append = callAndResult(made, output);
    const { grounded, ungrounded } = await ground(entry, [...messages, ...append]);
    const monitor = entry.evaluator.monitorOf(grounded);
    const done = monitor.checkDone();
    const reminder = reminderText({ warnings: [], openDuties: done.openDuties });
    return {
      outcome: monitor.run.calls.at(-1)?.outcome,
      append,
      done,
      ...(reminder !== undefined ? { reminder } : {}),
      ungrounded,
    };
  });

  app.post("/v1/monitor/done", async (request) => {
    const started = performance.now();
    const { entry, messages } = read(monitorBody, request.body);
    const { grounded, ungrounded } = await ground(entry, messages);
    const done = entry.evaluator.monitorOf(grounded).checkDone();
    write(request, entry, grounded, { done }, started);
    return {
      ...done,
      ...(done.allowed ? {} : { feedback: doneRefusedText(done.openDuties) }),
      ungrounded,
    };
  });

  /** The body read by its schema, the policy it selects; the first problem names its field. */
  function read(
    schema: typeof monitorBody | typeof withCall | typeof withOutput,
    body: unknown,
  ): MonitorRequest {
    if (settings.recorderRequired && recorder?.health().failing) throw recorderFailed(recorder);
    if (!context.serving) throw new MentorError("MNT_ERR_NOT_READY", "the model is still loading");
    const parsed = schema.safeParse(body, { error: expectedText });
    if (!parsed.success) {
      const { param, message } = schemaProblem(parsed.error);
      throw new RequestError(param, message);
    }
    const raw = parsed.data;
    const model = raw.model;
    const sent = (body as { messages: ChatMessage[] }).messages;
    const entry = selectPolicy(context, {
      ...(model !== undefined ? { model, modelBase: withoutModeSuffix(model) } : {}),
      ...(raw.mentor?.policy !== undefined ? { policy: raw.mentor.policy } : {}),
      messages: sent,
    });
    if (!entry)
      throw new RequestError("mentor.policy", "this server loaded no policy", "MNT_ERR_POLICY_UNKNOWN");
    const messages = settings.trustClientGrounding ? sent : withoutClientGrounding(sent);
    return { entry, messages };
  }

  /** The messages grounded as the chat route grounds them, and each message that could not be. */
  async function ground(entry: PolicyEntry, messages: readonly ChatMessage[]) {
    const grounder = context.serving?.grounderOf(entry.policy) ?? givenGrounding;
    const signal = AbortSignal.timeout(settings.requestTimeoutMs);
    let grounding: Awaited<ReturnType<typeof grounder.ground>>;
    try {
      grounding = await grounder.ground(messages, signal);
    } catch (error) {
      if (!signal.aborted) throw error;
      throw new MentorError("MNT_ERR_TIMEOUT", `no answer within ${settings.requestTimeoutMs} ms`);
    }
    const refused = settings.strictGrounding
      ? ungroundedError(grounding.notes, entry.policy.name)
      : undefined;
    if (refused) throw refused;
    const ungrounded = grounding.notes.flatMap((note) =>
      note.error === undefined ? [] : [{ message: note.message, kind: note.kind, error: note.error }],
    );
    return { grounded: grounding.messages, ungrounded };
  }

  /** The question's flight record (`--recorder`), in the embedded monitor's shape. */
  function write(
    request: FastifyRequest,
    entry: PolicyEntry,
    messages: readonly unknown[],
    question: { decisions: Decision[] } | { done: DoneCheck },
    started: number,
  ): void {
    if (!recorder) return;
    const failure = recorder.write(
      monitorRecord({
        id: `monitor-${randomBytes(12).toString("base64url")}`,
        policy: entry.policy.name,
        messages,
        ...question,
        ms: performance.now() - started,
      }),
    );
    if (!failure) return;
    metrics.recorderFailed();
    request.log.error({ err: failure, file: recorder.file }, "flight record not written");
    if (settings.recorderRequired) throw recorderFailed(recorder);
  }
};

/** The `call` of a body its schema has checked. */
function sentCall(body: unknown): SentCall {
  const sent = (body as { call: { name: string; arguments?: unknown; id?: string } }).call;
  let args: ProposedCall["arguments"];
  try {
    args = parseArguments(sent.arguments ?? {}, "call.arguments");
  } catch (error) {
    throw new RequestError("call.arguments", (error as Error).message.replace(/^call\.arguments /, ""));
  }
  return { name: sent.name, arguments: args, ...(sent.id !== undefined ? { id: sent.id } : {}) };
}

/** `gemma-3-270m:prompt` → `gemma-3-270m`, as the chat route reads a model id. */
function withoutModeSuffix(model: string): string {
  const suffix = model.lastIndexOf(":");
  return suffix > 0 && (shieldModes as readonly string[]).includes(model.slice(suffix + 1))
    ? model.slice(0, suffix)
    : model;
}

/**
 * The call as an assistant message and its result as the tool message answering it: what the
 * client appends to its conversation (a refused call's result is the shield's feedback, which
 * reads back as a refusal).
 */
function callAndResult(call: SentCall, output: unknown): ChatMessage[] {
  const id = call.id ?? `call_${randomBytes(9).toString("base64url")}`;
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } },
      ],
    },
    { role: "tool", tool_call_id: id, content: typeof output === "string" ? output : JSON.stringify(output) },
  ];
}
