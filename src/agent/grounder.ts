import type { Grounder } from "../labeler/index.js";

export type { Grounder, Grounding, GroundingNote } from "../labeler/index.js";
export { ungroundedError } from "../labeler/index.js";

/**
 * Keeps what the client sent: `mentor` fields the client put on its messages are the grounding.
 * Messages without them stay ungrounded (a text output without a label counts as any label).
 */
export const givenGrounding: Grounder = {
  async ground(messages) {
    return { messages: [...messages], notes: [] };
  },
};
