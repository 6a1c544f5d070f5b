import type { ChatMessage } from "../llm/index.js";

/** What grounding did to one message (which message, what it found, from where); free-form. */
export type GroundingNote = Record<string, unknown>;

export interface Grounding {
  /** The messages with `mentor.task` on user messages and `mentor.label` on tool messages. */
  messages: ChatMessage[];
  notes: GroundingNote[];
}

/**
 * Grounds a conversation into the policy's vocabulary: the user's task into pseudo task calls
 * (`mentor.task`), text tool outputs into labels (`mentor.label`).
 */
export interface Grounder {
  ground(messages: readonly ChatMessage[], options?: { signal?: AbortSignal }): Promise<Grounding>;
}

/**
 * Keeps what the client sent: `mentor` fields the client put on its messages are the grounding.
 * Messages without them stay ungrounded (a text output without a label counts as any label).
 */
export const givenGrounding: Grounder = {
  async ground(messages) {
    return { messages: [...messages], notes: [] };
  },
};
