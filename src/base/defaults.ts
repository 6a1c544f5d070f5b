/**
 * The defaults that more than one part of mentor applies (the library, the server's options, the
 * command line's flags, the docs), written once. A part with a default of its own keeps it there.
 */

/** The token shield's logit boost of progressing names and values: η/T in log-probability. */
export const defaultEta = 0.5;

/** Context tokens per sequence of the local engine. */
export const defaultContextSize = 4096;

/** Generations at once on the local engine (its context sequences). */
export const defaultSequences = 2;

/** Tokens one generation writes at most (a longer answer ends with `finishReason: "length"`). */
export const defaultMaxTokens = 256;

/** Regenerations of a turn after its calls were blocked, before the shield answers in their place. */
export const defaultMaxRegenerations = 4;

/** The server: where it listens, how many requests wait beyond those running, how long one may take. */
export const defaultHost = "127.0.0.1";
export const defaultPort = 8080;
export const defaultMaxQueue = 16;
export const defaultRequestTimeoutMs = 300_000;

/** Bounds of each search for advice: hypothetical decisions (they shape answers) and a time backstop in ms. */
export const defaultSearchLimits = { maxDecisions: 500, maxMs: 1000 } as const;

/** Bounds of the runs an evaluator keeps by message prefix: messages, and characters of their read fields. */
export const defaultRunCacheLimits = { maxMessages: 20_000, maxCharacters: 16_000_000 } as const;
