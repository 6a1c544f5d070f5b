import type { ParameterSchema, ToolDefinition } from "../../openai/index.js";

// The call syntax and its slots: a chat format's call text, a tool's arguments as fixed JSON
// structure with value slots in between, and the text that closes each slot.

/** The call syntax of a chat format, as text (special tokens spelled out). */
export interface CallSyntax {
  /** Opens a call, up to the tool name: `<tool_call>\n{"name": "`, `<function=`, `||call: `. */
  prefix: string;
  /** Between the name and the arguments: `", "arguments": `, `>`, `(`. */
  paramsPrefix: string;
  /** Closes a call: `}\n</tool_call>`, `</function><|eom_id|>`, `)`. */
  suffix: string;
  /**
   * Between a call's suffix and the next call's prefix in one turn (`\n` for Qwen 3), where the
   * format allows several calls per turn; undefined where it writes one call per turn.
   */
  betweenCalls?: string;
}

/** Per-argument sets for one value slot. */
export interface ArgumentSets {
  allowed?: readonly string[];
  unsafe?: readonly string[];
  progressing?: readonly string[];
  /** Number slots: the bounds the value must keep (`ToolShieldSets`' limits). */
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  exclusiveMaximum?: number;
  /** List slots: the fewest items (from 1 on, the list may not close empty). */
  minItems?: number;
  /** List slots: the strings its items must be among (the text inside each JSON string). */
  itemsAllowed?: readonly string[];
  /** List slots: how often each string may be an item (one not listed: never). */
  itemsAtMost?: Readonly<Record<string, number>>;
  /** List slots: item i shares a group with item i of the list `argument`, and as many items. */
  itemsPaired?: { argument: string; groups: readonly (readonly string[])[] };
  /** Where the call's `argument` (written before) is a case's value: the case's limits instead. */
  given?: { argument: string; cases: readonly { value: string; sets: ArgumentSets }[] };
}

/** The sets of a slot once the call's earlier arguments are written (`given`'s case, if one matches). */
export function setsGiven(sets: ArgumentSets, values: Readonly<Record<string, unknown>>): ArgumentSets {
  const given = sets.given;
  if (!given) return sets;
  const written = values[given.argument];
  const match = given.cases.find(({ value }) => value === written);
  // A case's limits are its binding's, narrower than those over every binding; a limit it lacks
  // (none in that binding) keeps the wider one.
  return match ? { ...sets, ...match.sets } : sets;
}

export type Segment =
  | { kind: "fixed"; text: string }
  | { kind: "string"; key: string; sets: ArgumentSets; enumValues?: string[] }
  | { kind: "number"; key: string; integer: boolean; sets: ArgumentSets }
  | { kind: "boolean"; key: string; sets: ArgumentSets }
  /** An array or object: the model writes it as JSON, closed for it where it breaks off. */
  | { kind: "json"; key: string; opening: "[" | "{"; sets: ArgumentSets };

/**
 * The text that follows a slot up to the next value slot (its opening quote included) or, after
 * the last, the call's suffix. A token may close the slot and write the start of it.
 */
export interface Closing {
  text: string;
  /** Where the call syntax's suffix starts in `text` (it is tokenized with special tokens). */
  suffixAt: number;
  /** The segment of the next value slot, or -1: the call ends with this text. */
  next: number;
}

/**
 * The fixed text from segment `from` on, after `lead`, up to the next value slot (its opening
 * quote included) or, where none is left, the call's `suffix`.
 */
export function closingFrom(
  segments: readonly Segment[],
  from: number,
  lead: string,
  suffix: string,
): Closing {
  let text = lead;
  let index = from;
  while (index < segments.length && segments[index]?.kind === "fixed") {
    text += (segments[index] as { text: string }).text;
    index++;
  }
  if (index >= segments.length) return { text: text + suffix, suffixAt: text.length, next: -1 };
  if (segments[index]?.kind === "string") text += '"';
  return { text, suffixAt: text.length, next: index };
}

/**
 * The arguments of a call as fixed text and value slots, in the order of the schema's
 * `properties`: `{"a": ` slot `, "b": ` slot `}`. Strings, numbers, booleans and enums are value
 * slots; arrays and objects are JSON slots the model writes freely (kept valid); untyped values
 * are written as `null`.
 */
export function skeleton(tool: ToolDefinition, sets: Map<string, ArgumentSets>): Segment[] {
  const properties = Object.entries(tool.parameters?.properties ?? {});
  const segments: Segment[] = [];
  let fixed = "{";
  properties.forEach(([key, schema], position) => {
    fixed += `${position === 0 ? "" : ", "}${JSON.stringify(key)}: `;
    const type = slotType(schema);
    const enumValues = schema.enum?.filter((value): value is string => typeof value === "string");
    if (type === "string" || (enumValues !== undefined && enumValues.length > 0)) {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({
        kind: "string",
        key,
        sets: sets.get(key) ?? {},
        ...(enumValues && enumValues.length > 0 ? { enumValues } : {}),
      });
    } else if (type === "number" || type === "integer") {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({ kind: "number", key, integer: type === "integer", sets: sets.get(key) ?? {} });
    } else if (type === "boolean") {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({ kind: "boolean", key, sets: sets.get(key) ?? {} });
    } else if (type === "array" || type === "object") {
      segments.push({ kind: "fixed", text: fixed });
      fixed = "";
      segments.push({ kind: "json", key, opening: type === "array" ? "[" : "{", sets: sets.get(key) ?? {} });
    } else fixed += "null";
  });
  segments.push({ kind: "fixed", text: `${fixed}}` });
  return segments;
}

/**
 * The type a value slot is written as: the schema's own (the first of a list), else the first
 * `anyOf`/`oneOf` alternative with a type other than null (SOPBench declares a login's
 * identification as string, object or null: written as `null` always, the login always failed).
 */
function slotType(schema: ParameterSchema): string | undefined {
  if (schema.type !== undefined) return Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const alternatives = schema.anyOf ?? schema.oneOf;
  for (const alternative of Array.isArray(alternatives) ? (alternatives as ParameterSchema[]) : []) {
    const type = slotType(alternative);
    if (type !== undefined && type !== "null") return type;
  }
  return undefined;
}

/** Arguments the decoder writes as constants: those `segments` (the tool's skeleton) give no slot, as `null`. */
export function constantArguments(
  tool: ToolDefinition,
  segments: readonly Segment[],
): Record<string, unknown> {
  const slots = new Set(segments.flatMap((segment) => (segment.kind === "fixed" ? [] : [segment.key])));
  return Object.fromEntries(
    Object.keys(tool.parameters?.properties ?? {})
      .filter((key) => !slots.has(key))
      .map((key) => [key, null]),
  );
}
