import { z } from "zod";
import { jsonSchemaGrammar } from "../base/json-grammar.js";
import { policySchema } from "./schema.js";

/**
 * The policy file's JSON Schema, derived from the loader's zod schema (one source of truth): what
 * `mentor formalize` asks its translator's answers to follow (`response_format`). Names (keys and
 * ids) keep their pattern; defaulted fields are optional, as in a file.
 */
export function policyJsonSchema(): Record<string, unknown> {
  if (!cachedSchema) {
    const { $schema: _, ...schema } = z.toJSONSchema(policySchema, { io: "input", unrepresentable: "any" });
    cachedSchema = schema;
  }
  return cachedSchema;
}

/**
 * The GBNF grammar of that schema (`jsonSchemaGrammar`): decoding under it writes a policy
 * whose shape the loader accepts. What a grammar does not say is left to the loader, which names
 * it: bounds on numbers, a parameter needing a `type` or an `enum`, and everything beyond the
 * shape (formulas, expressions, references between sections).
 */
export function policyGrammar(): string {
  cachedGrammar ??= jsonSchemaGrammar(policyJsonSchema());
  return cachedGrammar;
}

let cachedSchema: Record<string, unknown> | undefined;
let cachedGrammar: string | undefined;
