import { MentorError } from "../../errors/index.js";
import type { FlightRecorder } from "../../evaluator/index.js";
import { type ChatMessage, systemText } from "../../openai/index.js";
import type { ServerContext } from "../context.js";
import type { PolicyEntry } from "../policies.js";
import { RequestError } from "../request.js";

// What the chat and monitor routes read alike: the served model, the policy, the messages as trusted.

/**
 * The policy a request selects (`mentor.policy`, else the server's first) as its system prompt sets
 * it, after checking that `model`, if the request names one, is the served model (with or without a
 * `:mode` suffix).
 */
export function selectPolicy(
  context: ServerContext,
  request: { model?: string; modelBase?: string; policy?: string; messages: readonly ChatMessage[] },
): PolicyEntry | undefined {
  const modelId = context.serving?.backend.modelId;
  if (request.model !== undefined && request.modelBase !== modelId && request.model !== modelId)
    throw new RequestError(
      "model",
      `this server serves ${modelId} (see GET /v1/models)`,
      "MNT_ERR_MODEL_UNKNOWN",
    );
  return context.policies.select(request.policy, systemText(request.messages));
}

/** The messages without the grounding fields a client may write (`mentor.task`, `mentor.label`). */
export function withoutClientGrounding(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => {
    if (typeof message.mentor !== "object" || message.mentor === null) return message;
    const { task: _task, label: _label, ...rest } = message.mentor as Record<string, unknown>;
    const { mentor: _mentor, ...copy } = message;
    return Object.keys(rest).length > 0 ? { ...copy, mentor: rest } : copy;
  });
}

/** Why a server that requires its flight recorder refuses work. */
export function recorderFailed(recorder: FlightRecorder): MentorError {
  const { lastError } = recorder.health();
  return new MentorError(
    "MNT_ERR_RECORDER_FAILED",
    `the flight recorder cannot write to ${recorder.file} (${lastError?.message ?? "unknown error"}) and this server requires it (--recorder-required)`,
  );
}
