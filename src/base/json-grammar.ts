import { patternGrammar } from "./pattern-grammar.js";

/**
 * A GBNF grammar (llama.cpp's) of the JSON values a JSON Schema admits, for constrained decoding.
 * Unlike node-llama-cpp's own converter, it knows optional properties (a property not in
 * `required` may be left out; those written come in the schema's order) and names
 * (`propertyNames` or a string `pattern` of `^[A-Za-z_][A-Za-z0-9_]*$`). It reads `type`
 * (one or a list), `enum`, `const`, `anyOf`/`oneOf`, `properties`, `required`,
 * `additionalProperties`, `items`, `minItems`, and a string's `pattern` where `patternGrammar`
 * reads it; other keywords (bounds, other patterns, formats) are not enforced, and `{}` is any
 * JSON value.
 */
export function jsonSchemaGrammar(schema: unknown): string {
  const rules: string[] = [];
  const named = new Map<string, string>();
  const rule = (body: string): string => {
    let name = named.get(body);
    if (!name) {
      name = `r${named.size}`;
      named.set(body, name);
      rules.push(`${name} ::= ${body}`);
    }
    return name;
  };
  const root = valueRule(schema, rule);
  return [`root ::= ws ${root} ws`, ...rules, ...shared].join("\n");
}

const identifierPattern = "^[A-Za-z_][A-Za-z0-9_]*$";

const shared = [
  // Whitespace is bounded so a generation cannot spend its tokens on it.
  "ws ::= [ \\t\\n]{0,24}",
  'string ::= "\\"" char* "\\""',
  'char ::= [^"\\\\\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
  'name ::= "\\"" [A-Za-z_] [A-Za-z0-9_]* "\\""',
  'number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?',
  'integer ::= "-"? ("0" | [1-9] [0-9]*)',
  'boolean ::= "true" | "false"',
  'null ::= "null"',
  'any ::= string | number | boolean | null | "[" ws (any (ws "," ws any)*)? ws "]" | "{" ws (string ws ":" ws any (ws "," ws string ws ":" ws any)*)? ws "}"',
];

type Schema = { [key: string]: unknown };

function valueRule(value: unknown, rule: (body: string) => string): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "any";
  const schema = value as Schema;
  const alternatives = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(alternatives))
    return rule(alternatives.map((entry) => valueRule(entry, rule)).join(" | "));
  if ("const" in schema) return rule(literal(JSON.stringify(schema.const)));
  if (Array.isArray(schema.enum))
    return rule(schema.enum.map((member) => literal(JSON.stringify(member))).join(" | "));
  const types = Array.isArray(schema.type)
    ? (schema.type as unknown[])
    : schema.type === undefined
      ? []
      : [schema.type];
  if (types.length === 0) return schema.properties !== undefined ? objectRule(schema, rule) : "any";
  return rule(
    types
      .map((type) => {
        switch (type) {
          case "string":
            if (schema.pattern === identifierPattern) return "name";
            return (typeof schema.pattern === "string" && patternGrammar(schema.pattern, rule)) || "string";
          case "number":
          case "integer":
          case "boolean":
          case "null":
            return type;
          case "array":
            return arrayRule(schema, rule);
          case "object":
            return objectRule(schema, rule);
          default:
            return "any";
        }
      })
      .join(" | "),
  );
}

function arrayRule(schema: Schema, rule: (body: string) => string): string {
  const item = schema.items === undefined ? "any" : valueRule(schema.items, rule);
  const more = `(ws "," ws ${item})*`;
  const body =
    typeof schema.minItems === "number" && schema.minItems > 0 ? `${item} ${more}` : `(${item} ${more})?`;
  return rule(`"[" ws ${body} ws "]"`);
}

function objectRule(schema: Schema, rule: (body: string) => string): string {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, unknown>);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const pair = (name: string, property: unknown): string =>
    `${literal(JSON.stringify(name))} ws ":" ws ${valueRule(property, rule)}`;
  if (properties.length === 0) {
    const extra = schema.additionalProperties;
    if (extra === false) return rule('"{" ws "}"');
    const names =
      (schema.propertyNames as Schema | undefined)?.pattern === identifierPattern ? "name" : "string";
    const entry = rule(
      `${names} ws ":" ws ${extra === undefined || extra === true ? "any" : valueRule(extra, rule)}`,
    );
    return rule(`"{" ws (${entry} (ws "," ws ${entry})*)? ws "}"`);
  }
  // Properties in the schema's order; an optional one may be left out. From the last property
  // back: `after`, the properties from i on once one was written (each after a comma); `start`,
  // the properties from i on when none was written yet (`nullable`: it may be empty).
  let after = "";
  let start: string | undefined;
  let nullable = true;
  for (const [name, property] of properties.reverse()) {
    const text = pair(name, property);
    const written = rule(after ? `${text} ${after}` : text);
    if (required.has(name)) {
      start = written;
      nullable = false;
      after = rule(`ws "," ws ${text}${after ? ` ${after}` : ""}`);
    } else {
      start = rule(start ? `${written} | ${start}` : written);
      after = rule(`(ws "," ws ${text})?${after ? ` ${after}` : ""}`);
    }
  }
  return rule(`"{" ws ${nullable ? `(${start})?` : start} ws "}"`);
}

/** A GBNF string literal of `text`. */
function literal(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}
