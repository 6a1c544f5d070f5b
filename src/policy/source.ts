import {
  type Document,
  isMap,
  isScalar,
  LineCounter,
  type Node,
  parseDocument,
  Scalar,
  visit,
  YAMLParseError,
} from "yaml";
import type { SourceLocation } from "../errors/index.js";

export type YamlPath = readonly (string | number)[];

/** A parsed YAML file that can say where any value (or any character inside a string) is. */
export class PolicySource {
  readonly document: Document;
  private readonly lines = new LineCounter();

  constructor(
    readonly text: string,
    readonly file: string,
  ) {
    // The parser's own check of unique keys compares each key with every key before it in its
    // map (quadratic in a policy's tools or propositions): keys are checked here, once each.
    this.document = parseDocument(text, { lineCounter: this.lines, prettyErrors: false, uniqueKeys: false });
    const duplicate = firstDuplicateKey(this.document);
    if (duplicate) {
      this.document.errors.push(duplicate);
      this.document.errors.sort((left, right) => left.pos[0] - right.pos[0]);
    }
  }

  /** The location of the value at `path` (or of its key, with `key: true`), and optionally of a character in it. */
  locate(path: YamlPath, options: { key?: boolean; offsetInValue?: number } = {}): SourceLocation {
    const node = options.key ? this.keyNode(path) : this.valueNode(path);
    const named = path.length > 0 ? { path: formatPath(path) } : {};
    if (!node?.range) {
      const parent = path.length > 0 ? this.locate(path.slice(0, -1)) : this.position(0);
      return { ...parent, ...named };
    }
    let offset = node.range[0];
    if (options.offsetInValue !== undefined && isScalar(node))
      offset = this.offsetInScalar(node, options.offsetInValue);
    return { ...this.position(offset), ...named };
  }

  /** Where the first alias (`*name`) is, or the file's start if there is none. */
  firstAlias(): SourceLocation {
    let offset = 0;
    visit(this.document, {
      Alias(_key, node) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    return this.position(offset);
  }

  position(offset: number): SourceLocation {
    const { line, col } = this.lines.linePos(offset);
    return { file: this.file, line, column: col };
  }

  private valueNode(path: YamlPath): Node | undefined {
    const node = path.length === 0 ? this.document.contents : this.document.getIn(path, true);
    return node as Node | undefined;
  }

  private keyNode(path: YamlPath): Node | undefined {
    const parent = this.valueNode(path.slice(0, -1));
    const key = path[path.length - 1];
    if (!isMap(parent)) return undefined;
    const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === key);
    return pair?.key as Node | undefined;
  }

  /** Maps a character index of a scalar's value to a file offset (exact unless the string has escapes). */
  private offsetInScalar(node: Scalar, index: number): number {
    const start = node.range?.[0] ?? 0;
    const raw = this.text.slice(start, node.range?.[1] ?? start);
    switch (node.type) {
      case Scalar.QUOTE_DOUBLE:
      case Scalar.QUOTE_SINGLE:
        return start + 1 + index;
      case Scalar.BLOCK_LITERAL:
      case Scalar.BLOCK_FOLDED: {
        const value = String(node.value);
        const lineIndex = value.slice(0, index).split("\n").length - 1;
        const column = index - (value.lastIndexOf("\n", index - 1) + 1);
        const rawLines = raw.split("\n");
        let offset = start;
        for (let line = 0; line <= lineIndex; line++) offset += (rawLines[line] ?? "").length + 1;
        // The block's indentation is that of its first content line; the value keeps any deeper indent.
        const first = rawLines.slice(1).find((line) => line.trim() !== "") ?? "";
        const indent = first.length - first.trimStart().length;
        return offset + indent + column;
      }
      default:
        return start + index;
    }
  }
}

export function formatPath(path: YamlPath): string {
  return path
    .map((part, index) => (typeof part === "number" ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join("");
}

/** The first key (in the file's order) that repeats a key of its map, as the parser reports one. */
function firstDuplicateKey(document: Document): YAMLParseError | undefined {
  let first: YAMLParseError | undefined;
  visit(document, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        const value = isScalar(key) ? key.value : key;
        if (!seen.has(value)) {
          seen.add(value);
          continue;
        }
        const start = (key as Node | null)?.range?.[0] ?? 0;
        if (!first || start < first.pos[0])
          first = new YAMLParseError([start, start + 1], "DUPLICATE_KEY", "Map keys must be unique");
        break;
      }
    },
  });
  return first;
}
