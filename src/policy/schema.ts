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
  })
  .strict();

export const taskCallSchema = z
  .object({
    description: z.string().default(""),
    parameters: parametersSchema.default({}),
  })
  .strict();

export const entitySchema = z
  .object({
    /** Task call → {variable: field}: each such call in the task introduces one binding. */
    from: z.record(identifier, z.record(identifier, identifier)),
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

const modeSchema = z.enum(["record", "warn", "block"]);

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
      ])
      .optional(),
    a: z.string().optional(),
    b: z.string().optional(),
    n: z.number().int().min(0).optional(),
    mode: modeSchema.default("block"),
    /** `requested`: only bindings the task introduced (e.g. "book the trip you were asked for"). */
    applies_to: z.enum(["all", "requested"]).default("all"),
    /** Overrides the manual sentence quoted in feedback. */
    sentence: z.string().optional(),
  })
  .strict();

export const constraintSchema = z
  .object({
    id: identifier,
    on: z.string(),
    require: z.string(),
    mode: modeSchema.default("block"),
    sentence: z.string().optional(),
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
    rules: z.array(ruleSchema).default([]),
    constraints: z.array(constraintSchema).default([]),
    done: z
      .object({
        /** How often an answer without a tool call may be refused while duties are open. */
        max_refusals: z.number().int().min(0).default(3),
      })
      .strict()
      .default({ max_refusals: 3 }),
  })
  .strict();

export type RawPolicy = z.infer<typeof policySchema>;
export type RawParameter = z.infer<typeof parameterSchema>;
