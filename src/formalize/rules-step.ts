import { parse } from "yaml";
import { MentorError } from "../errors/index.js";
import { parsePolicy, policyJsonSchema } from "../policy/index.js";

/**
 * The translator's rules step (docs/formalize.md, "Rules under the declarations"): once a
 * candidate's declarations load, its rules and constraints are written again under a schema built
 * from those declarations. Every formula names only declared propositions, with the operators of
 * docs/logic.md; every constraint is on a declared proposition; and each rule is filed under the
 * manual sentence it formalizes, which numbers its id, so no id is undeclared or used twice.
 */

/** What a candidate declares that its rules may name. */
export interface Declarations {
  /** The `manual` section's sentence ids. */
  sentences: string[];
  /** The `propositions` section's keys as written (`checked(route)`, `created`). */
  atoms: string[];
}

/** The declarations of a candidate policy object; undefined when it has no sentences or propositions. */
export function declarationsOf(policy: unknown): Declarations | undefined {
  const section = (name: string): string[] => {
    const value = (policy as Record<string, unknown> | null | undefined)?.[name];
    return typeof value === "object" && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
  };
  const sentences = section("manual");
  const atoms = section("propositions");
  return sentences.length > 0 && atoms.length > 0 ? { sentences, atoms } : undefined;
}

type Schema = Record<string, unknown>;

/** Parentheses a formula may nest (the shipped policies use 3). */
const formulaDepth = 4;

/**
 * A regular expression of the LTLf formulas over `atoms` (docs/logic.md: `true`, `false`, the
 * unary `! X WX F G Y WY O H`, the binary `<-> -> | & U R W S`), up to `depth` nested
 * parentheses. A letter operator is followed by a space or a `(`, and a binary letter operator
 * has spaces around it, so it cannot run into a name.
 */
export function formulaPattern(atoms: readonly string[], depth = formulaDepth): string {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const atom = `(?:${["true", "false", ...atoms].map(literal).join("|")})`;
  const word = "(?:WX|WY|X|F|G|Y|O|H)";
  const prefix = `(?:! ?|${word} )*`;
  const binary = "(?: ?(?:<->|->|\\||&) ?| (?:U|R|W|S) )";
  let formula = `${prefix}${atom}(?:${binary}${prefix}${atom})*`;
  for (let level = 1; level <= depth; level++) {
    const term = `${prefix}(?:${atom}|(?:${word}|!)?\\( ?${formula} ?\\))`;
    formula = `${term}(?:${binary}${term})*`;
  }
  return `^(?:${formula})$`;
}

/**
 * The rules step's answer: `{SENTENCE_ID: [rule or constraint, …]}`, each sentence at most once
 * (a grammar writes an object's properties in order, each at most once). A rule is `{ltl}` or
 * `{template, a, b, …}` with formulas over the declared propositions; a constraint is `{on,
 * require}` on a declared proposition. The other fields are the loader's, less `id` and
 * `sentence` (the step numbers ids and quotes sentences).
 */
export function rulesSchema(declarations: Declarations): Record<string, unknown> {
  const sections = policyJsonSchema().properties as Record<string, { items?: unknown }>;
  const loader = (section: string) => {
    const items = sections[section]?.items as { properties?: Schema } | undefined;
    const { id: _, sentence: __, ...properties } = items?.properties ?? {};
    return properties;
  };
  const { ltl: _, template, a: __, b: ___, n, m, op, ...rule } = loader("rules");
  const formula = { type: "string", pattern: formulaPattern(declarations.atoms) };
  const object = (properties: Schema, required: string[]) => ({
    type: "object",
    properties,
    required,
    additionalProperties: false,
  });
  const entry = {
    anyOf: [
      object({ ltl: formula, ...rule }, ["ltl"]),
      object(
        {
          template,
          a: { anyOf: [formula, { type: "array", items: formula, minItems: 1 }] },
          b: formula,
          n,
          m,
          op,
          ...rule,
        },
        ["template", "a"],
      ),
      object({ ...loader("constraints"), on: { enum: declarations.atoms } }, ["on", "require"]),
    ],
  };
  return {
    type: "object",
    properties: Object.fromEntries(
      declarations.sentences.map((id) => [id, { type: "array", items: entry, minItems: 1 }]),
    ),
    additionalProperties: false,
  };
}

/**
 * The candidate with the rules step's answer as its `rules` and `constraints`: the first entry
 * under a sentence takes the sentence's id, the next ones `ID_2`, `ID_3`, … with the sentence
 * quoted (the loader reads a rule's sentence from `manual` by id). Undefined when the answer is
 * not an object of sentence ids.
 */
export function withRules(
  policy: Record<string, unknown>,
  answer: unknown,
): Record<string, unknown> | undefined {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return undefined;
  const manual = (policy.manual ?? {}) as Record<string, string>;
  const used = new Set(Object.keys(manual));
  const rules: Record<string, unknown>[] = [];
  const constraints: Record<string, unknown>[] = [];
  for (const [sentence, entries] of Object.entries(answer)) {
    if (!(sentence in manual) || !Array.isArray(entries)) return undefined;
    entries.forEach((entry, index) => {
      let id = sentence;
      for (let number = index + 1; index > 0 && used.has(id); number++) id = `${sentence}_${number}`;
      used.add(id);
      const named = {
        id,
        ...(entry as Record<string, unknown>),
        ...(index > 0 ? { sentence: manual[sentence] } : {}),
      };
      (typeof (entry as { on?: unknown }).on === "string" ? constraints : rules).push(named);
    });
  }
  return { ...policy, rules, constraints };
}

/**
 * A candidate whose declarations load (`parsePolicy` of it without rules and constraints): the
 * policy object and what it declares. Undefined when the text is not a policy object, or when its
 * declarations themselves do not load (then the whole policy is repaired).
 */
export function loadedDeclarations(
  text: string,
  file: string,
): { policy: Record<string, unknown>; declarations: Declarations } | undefined {
  const value = parsed(text);
  const declarations = declarationsOf(value);
  if (!declarations) return undefined;
  const policy = { ...(value as Record<string, unknown>), rules: [], constraints: [] };
  try {
    parsePolicy(JSON.stringify(policy), file);
  } catch (error) {
    if (error instanceof MentorError) return undefined;
    throw error;
  }
  return { policy, declarations };
}

/** The propositions a candidate text declares (none when it does not parse). */
export function declaredAtoms(text: string): string[] {
  return declarationsOf(parsed(text))?.atoms ?? [];
}

function parsed(text: string): unknown {
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}
