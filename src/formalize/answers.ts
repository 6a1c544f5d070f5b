/** Fenced blocks of a model's answer: ```lang … ```, with their language (lower case, may be ""). */
export function fencedBlocks(text: string): { language: string; body: string }[] {
  const blocks: { language: string; body: string }[] = [];
  for (const match of text.matchAll(/```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g))
    blocks.push({ language: (match[1] ?? "").toLowerCase(), body: match[2] ?? "" });
  return blocks;
}

/**
 * The policy in a translator's answer: a ```yaml block (the longest), else an unlabelled block
 * that starts like a policy, else the whole answer when it does; a JSON answer's `policy` string
 * too. Undefined when there is none.
 */
export function policyText(answer: string): string | undefined {
  const json = jsonValue(answer);
  // A policy written as JSON (under the policy's grammar): its `policy` is the name.
  if (
    typeof json === "object" &&
    json !== null &&
    ["tools", "rules", "propositions"].some((key) => key in json)
  )
    return JSON.stringify(json, null, 2);
  if (typeof json === "object" && json !== null && typeof (json as { policy?: unknown }).policy === "string")
    return (json as { policy: string }).policy;
  const blocks = fencedBlocks(answer);
  const yaml = blocks
    .filter((block) => block.language === "yaml" || block.language === "yml")
    .sort((a, b) => b.body.length - a.body.length)[0];
  if (yaml) return yaml.body;
  const bare = blocks.find((block) => block.language === "" && /^\s*policy\s*:/m.test(block.body));
  if (bare) return bare.body;
  if (/^\s*policy\s*:/.test(answer)) return answer;
  return undefined;
}

/**
 * The JSON value of an answer: the whole text, else its first ```json block, else the text from
 * its first `{` to its last `}`. Undefined when none parses.
 */
export function jsonValue(answer: string): unknown {
  const candidates = [answer.trim()];
  for (const block of fencedBlocks(answer))
    if (block.language === "json" || block.language === "") candidates.push(block.body);
  const start = answer.indexOf("{");
  const end = answer.lastIndexOf("}");
  if (start >= 0 && end > start) candidates.push(answer.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate);
    } catch {
      // the next candidate
    }
  }
  return undefined;
}

/** A translator's contest of a label. */
export interface Contest {
  conversation: string;
  compliant: boolean;
  sentence?: string;
  quote: string;
  reason: string;
}

/** The contests in a translator's answer (its ```json block or JSON `contests`); malformed ones are dropped. */
export function contests(answer: string): Contest[] {
  let value: unknown;
  for (const block of fencedBlocks(answer)) {
    if (block.language !== "json") continue;
    try {
      value = JSON.parse(block.body);
      break;
    } catch {
      // not this block
    }
  }
  value ??= jsonValue(answer);
  const list = (value as { contests?: unknown } | undefined)?.contests;
  if (!Array.isArray(list)) return [];
  return list.flatMap((raw) => {
    const entry = (raw ?? {}) as Record<string, unknown>;
    if (typeof entry.conversation !== "string" || typeof entry.quote !== "string") return [];
    const label = typeof entry.label === "string" ? entry.label.toLowerCase() : "";
    const compliant = label === "compliant";
    if (!compliant && label !== "violation") return [];
    return [
      {
        conversation: entry.conversation,
        compliant,
        ...(typeof entry.sentence === "string" ? { sentence: entry.sentence } : {}),
        quote: entry.quote,
        reason: typeof entry.reason === "string" ? entry.reason : "",
      },
    ];
  });
}
