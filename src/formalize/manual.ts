import type { ChatTool } from "../openai/index.js";
import type { Policy, RuleSpec } from "../policy/index.js";

/** One sentence (or numbered item) of a manual, with the id rules cite it by. */
export interface ManualSentence {
  id: string;
  text: string;
}

const idPrefix = /^\s*(?:[-*]\s+)?(?:\*\*)?([A-Za-z][A-Za-z0-9_]*\d|\d+)(?:\*\*)?\s*[.:)]\s+(.*)$/;

/**
 * The sentences of a manual, each with an id. Items written with an id (`P1: …`, `R2. …`) keep
 * it; numbered items (`1. …`) become `S1`; bulleted lines and the sentences of plain paragraphs
 * are numbered in order (`S1`, `S2`, …). Headings (`# …`) and empty lines are skipped.
 */
export function splitManual(text: string): ManualSentence[] {
  const sentences: ManualSentence[] = [];
  const used = new Set<string>();
  let counter = 0;
  const add = (id: string | undefined, body: string): void => {
    const clean = body.replace(/\s+/g, " ").trim();
    if (clean === "") return;
    let name = id;
    if (name === undefined || used.has(name)) {
      do name = `S${++counter}`;
      while (used.has(name));
    }
    used.add(name);
    sentences.push({ id: name, text: clean });
  };
  let paragraph: string[] = [];
  const flush = (): void => {
    if (paragraph.length === 0) return;
    for (const sentence of paragraph.join(" ").split(/(?<=[.!?])\s+(?=[A-Z"“])/)) add(undefined, sentence);
    paragraph = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*#/.test(line) || line.trim() === "") {
      flush();
      continue;
    }
    const item = idPrefix.exec(line);
    if (item) {
      flush();
      const [, label, body] = item as unknown as [string, string, string];
      add(/^\d+$/.test(label) ? `S${label}` : label, body);
      continue;
    }
    const bullet = /^\s*[-*]\s+(.*)$/.exec(line);
    if (bullet) {
      flush();
      add(undefined, bullet[1] as string);
      continue;
    }
    paragraph.push(line.trim());
  }
  flush();
  return sentences;
}

/** The manual as the agents read it: one `ID: sentence` line each. */
export function manualText(sentences: readonly ManualSentence[]): string {
  return sentences.map((sentence) => `${sentence.id}: ${sentence.text}`).join("\n");
}

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .replace(/^\s*[a-z]*\d+\s*[:.]\s*/, "")
      .split(/[^\p{L}\p{N}]+/u)
      .filter((word) => word.length > 1),
  );
}

/** Words two texts share over the words of the shorter one (0 … 1). */
export function overlap(a: string, b: string): number {
  const left = words(a);
  const right = words(b);
  if (left.size === 0 || right.size === 0) return 0;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / Math.min(left.size, right.size);
}

/**
 * The manual sentence a rule (or constraint) formalizes: the one whose id is the rule's id or its
 * prefix before `_` (`P4_mode` → `P4`), else the one its sentence text overlaps most (at least half
 * of the shorter one's words), else none.
 */
export function sentenceOf(
  rule: Pick<RuleSpec, "id" | "sentence">,
  sentences: readonly ManualSentence[],
): ManualSentence | undefined {
  const byId = new Map(sentences.map((sentence) => [sentence.id, sentence]));
  const direct = byId.get(rule.id) ?? byId.get(rule.id.split("_")[0] as string);
  if (direct && overlap(direct.text, rule.sentence) >= 0.5) return direct;
  let best: ManualSentence | undefined;
  let bestScore = 0.5;
  for (const sentence of sentences) {
    const score = overlap(sentence.text, rule.sentence);
    if (score >= bestScore) {
      best = sentence;
      bestScore = score;
    }
  }
  return best ?? direct;
}

/** Each rule and constraint id of a policy → the id of the manual sentence it formalizes (when found). */
export function sentencesOfPolicy(policy: Policy, sentences: readonly ManualSentence[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const rule of [...policy.rules, ...policy.constraints]) {
    const sentence = sentenceOf(rule, sentences);
    if (sentence) map.set(rule.id, sentence.id);
  }
  return map;
}

/** Is `quote` (give or take case, spacing and punctuation) a passage of the manual? */
export function quotesManual(quote: string, manual: string): boolean {
  const normal = (text: string): string =>
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, " ")
      .trim();
  const needle = normal(quote);
  return needle.length >= 8 && normal(manual).includes(needle);
}

/**
 * The `tools:` section of a policy for OpenAI tool definitions (an array, or an object with a
 * `tools` array), as YAML: what the translator starts from.
 */
export function toolsSection(tools: readonly ChatTool[]): string {
  const lines = ["tools:"];
  for (const tool of tools) {
    const fn = tool.function;
    lines.push(`  ${fn.name}:`);
    if (fn.description) lines.push(`    description: ${JSON.stringify(fn.description)}`);
    const properties = (fn.parameters?.properties ?? {}) as Record<string, Record<string, unknown>>;
    const names = Object.keys(properties);
    if (names.length > 0) {
      lines.push("    parameters:");
      for (const name of names)
        lines.push(`      ${name}: ${JSON.stringify(policyParameter(properties[name] ?? {}))}`);
      const required = (fn.parameters?.required ?? names) as string[];
      if (required.length !== names.length) lines.push(`    required: ${JSON.stringify(required)}`);
    }
  }
  return lines.join("\n");
}

const fieldTypes = ["string", "number", "integer", "boolean", "object", "array"];

/** A JSON Schema property as a policy parameter: its type, enum, description and items only. */
export function policyParameter(schema: Record<string, unknown>): Record<string, unknown> {
  const parameter: Record<string, unknown> = {};
  if (typeof schema.type === "string" && fieldTypes.includes(schema.type)) parameter.type = schema.type;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) parameter.enum = schema.enum;
  if (typeof schema.description === "string") parameter.description = schema.description;
  if (schema.items !== undefined && parameter.type === "array") parameter.items = schema.items;
  if (parameter.type === undefined && parameter.enum === undefined) parameter.type = "string";
  return parameter;
}

/** OpenAI tools from a TOOLS.json text: an array of tools, or `{tools: [...]}`; bare functions are wrapped. */
export function readTools(raw: unknown): ChatTool[] {
  const list = Array.isArray(raw)
    ? raw
    : typeof raw === "object" && raw !== null && Array.isArray((raw as { tools?: unknown }).tools)
      ? (raw as { tools: unknown[] }).tools
      : undefined;
  if (list === undefined)
    throw new Error("expected an array of OpenAI tools, or an object with a `tools` array");
  return list.map((entry, index) => {
    const tool = entry as Partial<ChatTool> & { name?: unknown; parameters?: unknown; description?: unknown };
    if (tool.type === "function" && typeof tool.function?.name === "string") return tool as ChatTool;
    if (typeof tool.name === "string")
      return {
        type: "function",
        function: {
          name: tool.name,
          ...(typeof tool.description === "string" ? { description: tool.description } : {}),
          ...(tool.parameters !== undefined ? { parameters: tool.parameters as never } : {}),
        },
      } as ChatTool;
    throw new Error(`tools[${index}] is neither {type: "function", function: {name, …}} nor {name, …}`);
  });
}
