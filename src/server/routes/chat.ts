import { createHash, randomBytes } from "node:crypto";
import type { FastifyPluginAsync } from "fastify";
import { givenGrounding, runTurn, type TurnResult, turnRecordOf } from "../../agent/index.js";
import { MentorError } from "../../errors/index.js";
import type { ServerContext } from "../context.js";
import { errorResponse } from "../errors.js";
import { checkToolsAgainstPolicy, RequestError, readChatRequest } from "../request.js";
import { EventStream, usageBody } from "../stream.js";
import { recorderFailed, selectPolicy, withoutClientGrounding } from "./common.js";

/** `POST /v1/chat/completions`: one shielded turn, streamed or not, recorded in the flight recorder. */
export const chatRoutes: FastifyPluginAsync<{ context: ServerContext }> = async (app, { context }) => {
  const { settings, metrics, recorder } = context;

  app.post("/v1/chat/completions", async (request, reply) => {
    const serving = context.serving;
    if (!serving) throw new MentorError("MNT_ERR_NOT_READY", "the model is still loading");
    const { backend, admission } = serving;
    const started = performance.now();
    const deadline = Date.now() + settings.requestTimeoutMs;
    const id = `chatcmpl-${randomBytes(12).toString("base64url")}`;
    // The digest hashes the whole body: only for a record that will be written.
    const flight: Record<string, unknown> = {
      time: new Date().toISOString(),
      id,
      ...(recorder
        ? {
            digest: createHash("sha256")
              .update(JSON.stringify(request.body ?? null))
              .digest("hex"),
          }
        : {}),
    };
    const controller = new AbortController();
    const onClose = (): void => {
      if (!reply.raw.writableFinished)
        controller.abort(new MentorError("MNT_ERR_CANCELLED", "the client closed the connection"));
    };
    reply.raw.on("close", onClose);
    const timer = setTimeout(
      () =>
        controller.abort(
          new MentorError("MNT_ERR_TIMEOUT", `no answer within ${settings.requestTimeoutMs} ms`),
        ),
      settings.requestTimeoutMs,
    );
    let stream: EventStream | undefined;
    // The record is written before the answer goes out (with --recorder-fsync, on disk by then).
    // A failure to write it is logged and counted, and answered only with --recorder-required.
    let recorded = false;
    const record = (): Error | undefined => {
      if (recorded || !recorder) return undefined;
      recorded = true;
      flight.ms = performance.now() - started;
      const failure = recorder.write(flight);
      if (failure) {
        metrics.recorderFailed();
        request.log.error({ err: failure, file: recorder.file }, "flight record not written");
      }
      return failure;
    };
    try {
      if (settings.recorderRequired && recorder?.health().failing) throw recorderFailed(recorder);
      const chat = readChatRequest(request.body);
      const mode = chat.mode ?? settings.shield;
      const entry = selectPolicy(context, chat);
      Object.assign(flight, {
        model: chat.model,
        mode,
        policy: entry?.policy.name ?? null,
        stream: chat.stream,
      });
      if (mode === "token" && !backend.generator.tokenShield)
        throw new RequestError(
          chat.modeParam ?? null,
          "this server's generator cannot apply the token shield (use prompt)",
          "MNT_ERR_TOKEN_SHIELD_UNAVAILABLE",
        );
      if (entry) checkToolsAgainstPolicy(chat.tools, entry.policy);
      const messages = settings.trustClientGrounding ? chat.messages : withoutClientGrounding(chat.messages);
      // The conversation as the turn judged it (the dashboard rebuilds the run from it and the grounding).
      flight.messages = messages;
      if (chat.stream)
        stream = new EventStream(reply, { id, model: chat.model, includeUsage: chat.includeUsage });
      const result = await admission.run(controller.signal, () =>
        runTurn({
          messages,
          tools: chat.tools,
          ...(chat.toolChoice !== undefined ? { toolChoice: chat.toolChoice } : {}),
          parallelToolCalls: chat.parallelToolCalls,
          mode,
          eta: chat.eta ?? settings.eta,
          ...(chat.intent !== undefined ? { intent: chat.intent } : {}),
          ...(settings.strictGrounding ? { strictGrounding: true } : {}),
          solver: context.solver,
          ...(entry ? { evaluator: entry.evaluator } : {}),
          grounder: entry ? serving.grounderOf(entry.policy) : givenGrounding,
          generator: backend.generator,
          seed: chat.seed,
          temperature: chat.temperature,
          topP: chat.topP,
          maxTokens: chat.maxTokens,
          stop: chat.stop,
          ...(chat.responseSchema !== undefined ? { responseSchema: chat.responseSchema } : {}),
          signal: controller.signal,
          deadline,
          maxRegenerations: settings.maxRegenerations,
          onGenerating: () => stream?.open(),
        }),
      );
      metrics.turnDone(result, mode);
      Object.assign(flight, {
        status: 200,
        returned: { message: result.message, finish_reason: result.finishReason },
        usage: result.usage,
        mentor: result.mentor,
      });
      request.log.info(
        {
          mode,
          policy: entry?.policy.name,
          attempts: result.mentor.attempts.length,
          blocked: result.mentor.blocked,
          finish: result.finishReason,
        },
        "turn",
      );
      const body = stream ? undefined : completionBody(id, chat.model, result);
      if (record() && settings.recorderRequired && recorder) throw recorderFailed(recorder);
      if (stream) {
        stream.finish(result);
        return reply;
      }
      return body;
    } catch (caught) {
      // An abort surfaces as a cancelled generation: report why it was aborted.
      const reason = controller.signal.reason;
      const error = controller.signal.aborted && reason instanceof MentorError ? reason : caught;
      const { status, body } = errorResponse(error);
      Object.assign(flight, { status, error: body.error });
      // A refused turn (nothing allowed, the run stopped, a call held for a person): what it had judged.
      const refused = turnRecordOf(caught);
      if (refused) flight.mentor = refused;
      record();
      if (stream?.opened) {
        stream.fail(body);
        return reply;
      }
      throw error;
    } finally {
      clearTimeout(timer);
      reply.raw.off("close", onClose);
      // A streamed reply is hijacked from fastify, whose onResponse hook then does not run.
      if (stream?.opened) metrics.request("/v1/chat/completions", flight.status as number);
      record();
    }
  });
};

function completionBody(id: string, model: string, result: TurnResult): Record<string, unknown> {
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: { ...result.message, refusal: null },
        logprobs: null,
        finish_reason: result.finishReason,
      },
    ],
    usage: usageBody(result),
    mentor: result.mentor,
  };
}
