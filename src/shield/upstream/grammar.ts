import type { ChatTool, ParameterSchema } from "../../openai/index.js";
import type { CallSyntax as FormatSyntax } from "../token/index.js";

/**
 * How a model writes a call, as text: `prefix` NAME `paramsPrefix` ARGUMENTS-JSON `suffix`, calls
 * of one message separated by `betweenCalls` (the local decoder's syntax, with several calls per message).
 */
export type CallSyntax = Required<FormatSyntax>;

/** Hermes-style calls (Qwen 2.5, Qwen 3, Hermes): `<tool_call>\n{"name": "X", "arguments": {...}}\n</tool_call>`. */
export const hermesSyntax: CallSyntax = {
  prefix: '<tool_call>\n{"name": "',
  paramsPrefix: '", "arguments": ',
  suffix: "}\n</tool_call>",
  betweenCalls: "\n",
};

export interface ToolCallGrammarOptions {
  /** The tools that may be called, their schemas already narrowed (`enum`, `not: {enum}`). */
  tools: readonly ChatTool[];
  /** The answer must be calls (and starts with one). */
  mustCall: boolean;
  /** Several calls in one answer. */
  parallel: boolean;
  syntax: CallSyntax;
}

/**
 * A GBNF grammar (llama.cpp's dialect) of an answer: text without `<` or `{` (so that no call
 * hides in it, in the format's tags or as the JSON objects models write in fences), calls, or
 * text then calls; only calls when `mustCall` (as the local engine starts such an answer in a
 * call: a model that may write text first writes its call there). Each call names one of the tools; its
 * arguments are a JSON object with the tool's properties in declared order (the required ones
 * always, the others where the model writes them); an `enum` is its listed values, a string with
 * `not: {enum}` any string but those (written without escapes, as the local token shield
 * requires), other values JSON of their type. A name or value the shield masks is not in the
 * language, so the upstream cannot generate it.
 */
export function toolCallGrammar(options: ToolCallGrammarOptions): string {
  const rules = new Rules();
  const calls = options.tools.map((tool, index) => {
    const name = `call-${index}`;
    rules.add(
      name,
      [
        literal(options.syntax.prefix + tool.function.name + options.syntax.paramsPrefix),
        argumentsRule(rules, `args-${index}`, tool.function.parameters ?? {}),
        literal(options.syntax.suffix),
      ].join(" "),
    );
    return name;
  });
  rules.add("call", calls.join(" | "));
  rules.add("calls", options.parallel ? `call ( ${literal(options.syntax.betweenCalls)} call )*` : "call");
  rules.add("text", "[^<{]+");
  const root = options.mustCall ? "calls" : "text | text? calls";
  return [`root ::= ${root}`, ...rules.lines(), ...jsonRules].join("\n");
}

/** GBNF rules by name, in the order added. */
class Rules {
  private readonly entries = new Map<string, string>();
  add(name: string, body: string): string {
    this.entries.set(name, body);
    return name;
  }
  lines(): string[] {
    return [...this.entries].map(([name, body]) => `${name} ::= ${body}`);
  }
}

/** The arguments object: properties in declared order, required ones always, commas between. */
function argumentsRule(rules: Rules, name: string, schema: ParameterSchema): string {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return rules.add(name, `"{" ws "}"`);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  // first-k: no member written yet; rest-k: one written (the next needs a comma).
  const members = properties.map(
    ([key, property], index) =>
      `${literal(JSON.stringify(key))} ws ":" ws ${valueRule(rules, `${name}-${index}`, property)}`,
  );
  const made = new Map<string, string | undefined>();
  const tail = (index: number, started: boolean): string | undefined => {
    if (index === properties.length) return undefined;
    const own = `${name}-${started ? "rest" : "first"}-${index}`;
    if (made.has(own)) return made.get(own);
    const [key] = properties[index] as [string, ParameterSchema];
    const afterWritten = tail(index + 1, true);
    const written = `${started ? '"," ws ' : ""}${members[index]}${afterWritten ? ` ${afterWritten}` : ""}`;
    let body = written;
    if (!required.has(key)) {
      const afterSkipped = tail(index + 1, started);
      body = afterSkipped ? `( ${written} ) | ${afterSkipped}` : `( ${written} )?`;
    }
    made.set(own, rules.add(own, body));
    return own;
  };
  return rules.add(name, `"{" ws ${tail(0, false) ?? ""} ws "}"`);
}

/** A value of this schema. */
function valueRule(rules: Rules, name: string, schema: ParameterSchema): string {
  if (Array.isArray(schema.enum))
    return rules.add(name, schema.enum.map((value) => literal(JSON.stringify(value))).join(" | "));
  const not = (schema.not as ParameterSchema | undefined)?.enum;
  const type = schema.type;
  if (type === "string" && Array.isArray(not) && not.length > 0)
    return denyString(
      rules,
      name,
      not.filter((value): value is string => typeof value === "string"),
    );
  switch (type) {
    case "string":
      return "string";
    case "integer":
      return "integer";
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    default:
      return "value";
  }
}

/**
 * A JSON string whose content is none of `unsafe`: a trie over the unsafe values, where at each
 * node the string may close (unless the node spells an unsafe value), follow a child, or leave
 * the trie with any other character and go on freely. No escapes (a `\u0062` would spell a
 * masked value in other characters).
 */
function denyString(rules: Rules, name: string, unsafe: readonly string[]): string {
  interface Node {
    children: Map<string, Node>;
    terminal: boolean;
  }
  const root: Node = { children: new Map(), terminal: false };
  for (const value of unsafe) {
    let node = root;
    for (const char of value) {
      let child = node.children.get(char);
      if (!child) {
        child = { children: new Map(), terminal: false };
        node.children.set(char, child);
      }
      node = child;
    }
    node.terminal = true;
  }
  let count = 0;
  const visit = (node: Node): string => {
    const own = `${name}-${count++}`;
    const alternatives: string[] = [];
    if (!node.terminal) alternatives.push('"\\""');
    for (const [char, child] of node.children) alternatives.push(`${literal(char)} ${visit(child)}`);
    const excluded = [...node.children.keys()].map(classEscape).join("");
    alternatives.push(`[^"\\\\\\x00-\\x1F${excluded}] plain* "\\""`);
    rules.add(own, alternatives.join(" | "));
    return own;
  };
  const start = visit(root);
  return rules.add(name, `"\\"" ${start}`);
}

/** The shared JSON rules. Strings in arguments may escape; whitespace is bounded. */
const jsonRules = [
  'ws ::= ( " " | "\\n" [ \\t]{0,16} )?',
  'plain ::= [^"\\\\\\x00-\\x1F]',
  'char ::= plain | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} )',
  'string ::= "\\"" char* "\\""',
  'integer ::= "-"? ( "0" | [1-9] [0-9]{0,15} )',
  'number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?',
  'boolean ::= "true" | "false"',
  'value ::= string | number | boolean | "null" | object | array',
  'object ::= "{" ws ( string ws ":" ws value ( "," ws string ws ":" ws value )* )? ws "}"',
  'array ::= "[" ws ( value ( "," ws value )* )? ws "]"',
];

/** A GBNF string literal: quotes, backslashes, control and non-ASCII characters escaped. */
export function literal(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === '"' || char === "\\") out += `\\${char}`;
    else if (code === 0x0a) out += "\\n";
    else if (code === 0x09) out += "\\t";
    else if (code === 0x0d) out += "\\r";
    else if (code < 0x20 || code > 0x7e) out += codeEscape(code);
    else out += char;
  }
  return `${out}"`;
}

/** A character inside a GBNF class `[...]`, always escaped. */
function classEscape(char: string): string {
  return codeEscape(char.codePointAt(0) as number);
}

function codeEscape(code: number): string {
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, "0").toUpperCase()}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, "0").toUpperCase()}`;
  return `\\U${code.toString(16).padStart(8, "0").toUpperCase()}`;
}
