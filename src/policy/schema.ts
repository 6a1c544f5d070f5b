import { z } from "zod";

/** The shape of a policy file before names are resolved (see docs/policy.md). */

const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a name (letters, digits, _)");

const fieldTypeName = z.enum(["string", "number", "integer", "boolean", "object", "array"]);

/** `origin: string` or `travel_class: {type: string, enum: [economy, business], description: …}`. */
export const parameterSchema = z.union([
  fieldTypeName,
  z
    .object({
      type: fieldTypeName.optional(),
      enum: z
        .array(z.union([z.string(), z.number(), z.boolean()]))
        .min(1)
        .optional(),
      description: z.string().optional(),
      items: z.unknown().optional(),
    })
    .strict()
    .refine((value) => value.type !== undefined || value.enum !== undefined, "needs a `type` or an `enum`"),
]);

const parametersSchema = z.record(identifier, parameterSchema);

const scalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/**
 * One deterministic labeling rule of a text output: the first rule whose test matches gives the
 * label. Exactly one test: `json` (a path of the output parsed as JSON equals a value), `regex`,
 * `keywords` (any of them, as whole words, any case) or `number` (a regex whose first group is a
 * number, times `scale`, compared with the bounds).
 */
export const labelRuleSchema = z
  .object({
    label: identifier,
    json: z.object({ path: z.string(), equals: scalarSchema }).strict().optional(),
    regex: z.string().optional(),
    keywords: z.array(z.string().min(1)).min(1).optional(),
    number: z.string().optional(),
    scale: z.number().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
    gt: z.number().optional(),
    gte: z.number().optional(),
    /** For `regex` and `number`: match regardless of case. */
    ignore_case: z.boolean().default(false),
  })
  .strict();

/**
 * A value read from a text output, for history functions (`last('tool').field`): the first group
 * of `number` (read as a number) or of `text` (the string it matched); null where it does not match.
 */
export const outputFieldSchema = z
  .object({
    number: z.string().optional(),
    text: z.string().optional(),
    ignore_case: z.boolean().default(false),
  })
  .strict();

/** How a text output is labeled: ordered rules, then (if `llm`) the LLM labeler. */
export const outputLabelerSchema = z
  .object({
    rules: z.array(labelRuleSchema).default([]),
    /** May the LLM labeler label outputs no rule matches? Default false. */
    llm: z.boolean().default(false),
  })
  .strict();

/**
 * How one field of a task call is found in the request, when the call patterns do not capture it:
 * `pattern` (its named group or first group), `keywords` (a boolean: true if any occurs and none of
 * `unless`; or value → keywords for a field with a few values), `default` when nothing matches.
 */
export const fieldRuleSchema = z
  .object({
    pattern: z.string().optional(),
    keywords: z
      .union([z.array(z.string().min(1)).min(1), z.record(z.string(), z.array(z.string().min(1)))])
      .optional(),
    unless: z.array(z.string().min(1)).optional(),
    default: scalarSchema.optional(),
    ignore_case: z.boolean().default(false),
  })
  .strict();

/** How a task call is grounded from the user's request. */
export const taskGroundingSchema = z
  .object({
    /** Named regex fragments, written `{{name}}` in the patterns (e.g. what a city looks like). */
    define: z.record(identifier, z.string()).default({}),
    /** Regexes with named groups (= fields); every match of one makes one call. */
    patterns: z.array(z.string()).default([]),
    ignore_case: z.boolean().default(false),
    fields: z.record(identifier, fieldRuleSchema).default({}),
    /** May the LLM labeler ground requests the patterns do not match? Default false. */
    llm: z.boolean().default(false),
    /** A later message with one of these words that grounds this call replaces the standing one ("instead"). */
    amends: z.array(z.string().min(1)).min(1).optional(),
    /** A later message with one of these words withdraws the standing call ("cancel the transfer"). */
    withdraws: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();

export const toolSchema = z
  .object({
    description: z.string().default(""),
    parameters: parametersSchema.default({}),
    /** Required parameters; default: all of them. */
    required: z.array(identifier).optional(),
    output: z.enum(["json", "text"]).default("json"),
    /** For text outputs: label → what it means (used by the labeler and in advice). */
    labels: z.record(identifier, z.string()).optional(),
    /** Arguments a repair may change (issue: argument constraints). Default: none. */
    repairable: z.array(identifier).default([]),
    /**
     * Whether the same call may return something else later in the run (a status poll). Default
     * false: an outcome observed for a call is what the same call returns again (docs/policy.md, "The game").
     */
    volatile: z.boolean().default(false),
    /**
     * Whether its calls are in every binding's history (a lookup of what all of them share, such
     * as a product catalog), not only in the histories of the bindings they name. Default false.
     */
    shared: z.boolean().default(false),
    /** For text outputs: how the labeler chooses the label. */
    labeler: outputLabelerSchema.optional(),
    /** For text outputs: values read from the output besides its label. */
    fields: z.record(identifier, outputFieldSchema).default({}),
  })
  .strict();

export const taskCallSchema = z
  .object({
    description: z.string().default(""),
    parameters: parametersSchema.default({}),
    grounding: taskGroundingSchema.optional(),
    /** The tools that do what the request asks (its duties' way asked for; see docs/policy.md). */
    asks_for: z.array(identifier).default([]),
  })
  .strict();

export const entitySchema = z
  .object({
    /**
     * Task call → {variable: field}: each such call in the task introduces one binding; tool →
     * {variable: `o.<path>`}: each output of the tool with those fields introduces one.
     */
    from: z.record(identifier, z.record(identifier, z.string())),
  })
  .strict();

export const propositionSchema = z
  .object({
    tool: identifier,
    /** Predicate on the call's arguments (`a`), the binding's variables and `task`. */
    when: z.string().optional(),
    /** Predicate on the call's outcome (`o`); makes this an observation proposition. */
    outcome: z.string().optional(),
  })
  .strict();

/** Its share of `mentor verify`'s weighted compliance score (AgentLTL's `weight`); default 1. */
const weight = z.number().min(0).default(1);

const modeSchema = z.enum(["record", "warn", "block"]);

/** What a broken rule does (docs/policy.md, "Severities"); `mode` is the older, smaller choice. */
export const severitySchema = z.enum(["stop", "block", "ask", "escalate", "override", "warn", "record"]);

/** For `severity: escalate`: refused as `block` `after` times, then the next attempt escalates `to` stop or ask. */
export const escalateSchema = z
  .object({
    after: z.number().int().min(1),
    /** `consecutive`: attempts in a row; `cumulative`: in the whole run; `hybrid`: either (`total` for the run). */
    counting: z.enum(["consecutive", "cumulative", "hybrid"]).default("consecutive"),
    total: z.number().int().min(1).optional(),
    to: z.enum(["stop", "ask"]).default("stop"),
  })
  .strict();

/** One setting read from the system prompt (src/policy/settings.ts): a number the prompt gives (`number`: a regex whose first group is it) or a clause it says (`says`). */
export const settingSchema = z
  .object({
    number: z.string().optional(),
    says: z.string().optional(),
    /** Only within this section of the prompt (see `system_sections`). */
    in_section: z.string().optional(),
    /** The value where the conversation has no system prompt (and for lint, check and the dashboard). */
    default: z.union([z.number(), z.boolean()]),
    ignore_case: z.boolean().default(false),
  })
  .strict();

export const settingsSchema = z.record(identifier, settingSchema);

const condition = z.union([z.boolean(), z.string()]).optional();

export const ruleSchema = z
  .object({
    id: identifier,
    ltl: z.string().optional(),
    template: z
      .enum([
        "existence",
        "absence",
        "exactly",
        "init",
        "response",
        "precedence",
        "succession",
        "chainResponse",
        "chainPrecedence",
        "alternateResponse",
        "notSuccession",
        "respondedExistence",
        "coExistence",
        "notCoExistence",
        "choice",
        "exclusiveChoice",
        // AgentLTL's catalogue, by its names and with its meaning (docs/policy.md).
        "Called",
        "CalledNTimes",
        "Before",
        "After",
        "AllBefore",
        "BranchCalled",
        "CalledWith",
        "CalledWithResult",
        "CalledInOrder",
        "InstanceBefore",
        "WithinSteps",
      ])
      .optional(),
    /** A formula; a list of them for AgentLTL's `AllBefore` and `CalledInOrder`. */
    a: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
    b: z.string().optional(),
    n: z.number().int().min(0).optional(),
    /** AgentLTL's `InstanceBefore`: the occurrence of `b`. */
    m: z.number().int().min(1).optional(),
    /** AgentLTL's `CalledNTimes`: how the count compares with `n` (default `==`). */
    op: z.enum(["==", ">=", "<=", ">", "<"]).optional(),
    weight,
    mode: modeSchema.optional(),
    severity: severitySchema.optional(),
    escalate: escalateSchema.optional(),
    /** `requested`: only bindings the task introduced (e.g. "book the trip you were asked for"); `unrequested`: only the others. */
    applies_to: z.enum(["all", "requested", "unrequested"]).default("all"),
    /** Overrides the manual sentence quoted in feedback. */
    sentence: z.string().optional(),
    /** The rule holds only where this is true: a setting (`${name}`) or an expression over settings. */
    if: condition,
  })
  .strict();

export const constraintSchema = z
  .object({
    id: identifier,
    on: z.string(),
    require: z.string(),
    weight,
    mode: modeSchema.optional(),
    severity: severitySchema.optional(),
    escalate: escalateSchema.optional(),
    sentence: z.string().optional(),
    if: condition,
  })
  .strict();

export const policySchema = z
  .object({
    policy: identifier,
    description: z.string().default(""),
    /** Rule id → the manual's sentence. */
    manual: z.record(identifier, z.string()),
    tools: z.record(identifier, toolSchema),
    task: z.record(identifier, taskCallSchema).default({}),
    entities: z.record(identifier, entitySchema).default({}),
    propositions: z.record(z.string(), propositionSchema),
    /** Values read from the conversation's system prompt, written `${name}` elsewhere. */
    settings: settingsSchema.optional(),
    /** A line of the system prompt that matches it starts a section (its name in the group `name`). */
    system_sections: z.string().optional(),
    rules: z.array(ruleSchema).default([]),
    constraints: z.array(constraintSchema).default([]),
    done: z
      .object({
        /** How often an answer without a tool call may be refused while duties are open. */
        max_refusals: z.number().int().min(0).default(3),
        /**
         * Calls after which a run whose duties are still open is no longer forced to call again:
         * it may end, saying what blocks it (0: never). The MENTOR paper stops blocking done after 25.
         */
        stuck_after: z.number().int().min(0).default(25),
        /** A declared tool whose call ends the run (judged as `done`, never run as a tool). */
        tool: identifier.optional(),
      })
      .strict()
      .default({ max_refusals: 3, stuck_after: 25 }),
  })
  .strict();

export type RawPolicy = z.infer<typeof policySchema>;
export type RawEscalate = z.infer<typeof escalateSchema>;
export type RawParameter = z.infer<typeof parameterSchema>;
export type RawOutputLabeler = z.infer<typeof outputLabelerSchema>;
export type RawOutputField = z.infer<typeof outputFieldSchema>;
export type RawTaskGrounding = z.infer<typeof taskGroundingSchema>;
