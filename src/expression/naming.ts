/**
 * What a user's text names: the functions `named` and `named_changes` (see evaluate.ts). Words
 * are compared ignoring case, hyphens inside a word ("T-Shirt" is "tshirt"), a possessive "'s"
 * and a plural ending ("headphones" is "headphone", "boxes" is "box", "batteries" is "battery");
 * a few words of the text also say another (`aliases`).
 */
import type { Value } from "./ast.js";

/**
 * What a word of a user's text also says: the size letters of "small", "medium" and "large", and
 * "none" for "no" and "without" ("no backlight" asks for the backlight `none`).
 */
const aliases: Readonly<Record<string, readonly string[]>> = {
  small: ["s"],
  medium: ["m"],
  large: ["l"],
  no: ["none"],
  without: ["none"],
};

/** Words that name nothing by themselves: "Brand A" is not named by the article "a". */
const functionWords: ReadonlySet<string> = new Set([
  "a",
  "an",
  "the",
  "of",
  "and",
  "or",
  "to",
  "in",
  "on",
  "with",
  "for",
  "by",
]);

/** The last text `wordsOf` read, and its words: a run's constraints read one opening again and again. */
let lastRead: { text: string; words: ReadonlySet<string> } | undefined;

/** The words of a text (see the file's head) and what they also say (`aliases`), as a set. */
export function wordsOf(text: string): ReadonlySet<string> {
  if (lastRead?.text === text) return lastRead.words;
  const words = new Set<string>();
  for (const word of splitWords(text)) {
    words.add(word);
    for (const alias of aliases[word] ?? []) words.add(alias);
  }
  lastRead = { text, words };
  return words;
}

function splitWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/['’]s\b/g, "")
    .replace(/(?<=\p{L}|\p{N})-(?=\p{L}|\p{N})/gu, "")
    .split(/[^\p{L}\p{N}%]+/u)
    .filter((word) => word.length > 0)
    .map(singular);
}

function singular(word: string): string {
  if (word.length <= 3 || !word.endsWith("s") || word.endsWith("ss")) return word;
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (/(?:ss|x|ch|sh)es$/.test(word)) return word.slice(0, -2);
  return word.slice(0, -1);
}

/** A name (a noun phrase: "Vacuum Cleaner") is named by its last word, the thing it names ("the cleaner"). */
export function namesName(words: ReadonlySet<string>, name: Value): boolean {
  const own = typeof name === "string" || typeof name === "number" ? splitWords(String(name)) : [];
  const head = own.at(-1);
  return head !== undefined && words.has(head);
}

/** A value ("Google Assistant", "purple", "9 bar") is named by any of its words but function words. */
export function namesValue(words: ReadonlySet<string>, value: Value): boolean {
  if (typeof value !== "string" && typeof value !== "number") return false;
  return splitWords(String(value)).some((word) => !functionWords.has(word) && words.has(word));
}

/**
 * `named_changes(text, items, candidates, 'key', 'field')`: per item, the group of its key and
 * the keys of the candidates it may change into as the text asks, among those with the same keys
 * under `field` (options of the same kind): where some change every value they change to one the
 * text names, those of them that change the most ("purple, same v-neck, polyester"); else those
 * that change at least one value to a named one (a preference or a comparative the text also
 * says, "less bright (prefer battery)", is left to the model); else every candidate (the text
 * does not decide). Candidates whose key is an item's key are left out.
 */
export function namedChanges(
  text: string,
  items: readonly Value[],
  candidates: readonly Value[],
  key: string,
  field: string,
): Value[][] {
  const words = wordsOf(text);
  const keyOf = (value: Value): Value => fieldOf(value, key);
  const itemKeys = new Set(items.map((item) => JSON.stringify(keyOf(item))));
  const others = candidates.filter((candidate) => !itemKeys.has(JSON.stringify(keyOf(candidate))));
  return items.map((item) => {
    const own = options(fieldOf(item, field));
    const shape = Object.keys(own).sort().join("\n");
    const named: Value[] = [];
    // The candidates whose every change is to a named value, those with the most changes.
    let allNamed: Value[] = [];
    let most = 0;
    for (const candidate of others) {
      const theirs = options(fieldOf(candidate, field));
      if (Object.keys(theirs).sort().join("\n") !== shape) continue;
      const changes = Object.entries(theirs)
        .filter(([option, value]) => own[option] !== value)
        .map(([, value]) => namesValue(words, value));
      if (!changes.includes(true)) continue;
      named.push(candidate);
      if (changes.includes(false) || changes.length < most) continue;
      if (changes.length > most) [allNamed, most] = [[], changes.length];
      allNamed.push(candidate);
    }
    return [keyOf(item), ...(allNamed.length > 0 ? allNamed : named.length > 0 ? named : others).map(keyOf)];
  });
}

function fieldOf(value: Value, field: string): Value {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  return Object.hasOwn(value, field) ? (value[field] ?? null) : null;
}

/** An object's scalar values by key (a candidate's options); anything else has none. */
function options(value: Value): Record<string, string | number | boolean | null> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(([, entry]) => entry === null || typeof entry !== "object"),
  ) as Record<string, string | number | boolean | null>;
}
