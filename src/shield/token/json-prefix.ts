// A JSON value read one character at a time: whether each character keeps the text a prefix of
// a JSON value, when the value is complete, and the shortest text that completes it from here.

type Container = "array" | "object";

type State =
  /** A value may start here; `close`: the container's end may come instead (right after its opening). */
  | { kind: "value"; close: boolean }
  | { kind: "string"; key: boolean; escape: number }
  | { kind: "number"; text: string }
  | { kind: "literal"; rest: string }
  /** After a value inside a container: `,` or the container's end. */
  | { kind: "after" }
  /** An object key may start here; `close`: or the object's end (right after `{`). */
  | { kind: "key"; close: boolean }
  | { kind: "colon" }
  | { kind: "done" };

const literals = ["true", "false", "null"];

/** Texts that start a JSON number: `-`, `12`, `12.`, `12.5e-`… */
const numberPrefix = /^-?(?:(?:0|[1-9]\d*)(?:\.\d*|(?:\.\d+)?[eE][-+]?\d*)?)?$/;

export class JsonPrefix {
  private readonly stack: Container[] = [];
  private state: State = { kind: "value", close: false };
  /** The text taken so far. */
  text = "";

  /** `opening`: the value must be an array (`[`) or an object (`{`). */
  constructor(private readonly opening?: "[" | "{") {}

  /** Whether the value is complete (nothing more belongs to it). */
  get done(): boolean {
    return this.state.kind === "done";
  }

  /** Whether the text is a whole value: complete, or a top-level number that more digits could still extend. */
  get whole(): boolean {
    return (
      this.done ||
      (this.state.kind === "number" && this.stack.length === 0 && !/[-.eE+]$/.test(this.state.text))
    );
  }

  /**
   * Takes one character; false (and nothing taken) when it cannot continue the value. A number
   * at the top level is complete only when a character that cannot continue it comes: `done` is
   * then true and that character is not taken.
   */
  feed(char: string): boolean {
    const next = this.step(char);
    if (next === undefined) return false;
    this.state = next;
    this.text += char;
    return true;
  }

  /**
   * Text that makes the value complete: closes what is open, with `null` where a value is due
   * (`[]` or `{}` for a value that must be one and has not begun).
   */
  completion(): string {
    let text = "";
    const state = this.state;
    let pending: "value" | "after" | "colon" = "after";
    switch (state.kind) {
      case "done":
        return "";
      case "value":
        if (this.opening !== undefined && this.text === "") return this.opening === "[" ? "[]" : "{}";
        if (state.close) {
          text += this.stack.at(-1) === "array" ? "]" : "}";
          return text + this.closeFrom(this.stack.length - 1);
        }
        pending = "value";
        break;
      case "string":
        text += `${state.escape > 0 ? (state.escape === 1 ? "n" : "0".repeat(state.escape - 1)) : ""}"`;
        pending = state.key ? "colon" : "after";
        break;
      case "number":
        text += /[-.eE+]$/.test(state.text) ? "0" : "";
        break;
      case "literal":
        text += state.rest;
        break;
      case "key":
        if (state.close) return `}${this.closeFrom(this.stack.length - 1)}`;
        text += '"":';
        pending = "value";
        break;
      case "colon":
        pending = "colon";
        break;
      case "after":
        break;
    }
    if (pending === "colon") text += ":null";
    if (pending === "value") text += "null";
    return text + this.closeFrom(this.stack.length);
  }

  /** The ends of the containers below `depth`, innermost first. */
  private closeFrom(depth: number): string {
    return this.stack
      .slice(0, depth)
      .reverse()
      .map((container) => (container === "array" ? "]" : "}"))
      .join("");
  }

  private step(char: string): State | undefined {
    const state = this.state;
    const space = char === " " || char === "\n" || char === "\t" || char === "\r";
    switch (state.kind) {
      case "done":
        return undefined;
      case "value":
        if (space && (this.stack.length > 0 || this.text !== "")) return state;
        if (state.close && char === (this.stack.at(-1) === "array" ? "]" : "}")) return this.closed();
        if (this.opening !== undefined && this.text === "" && char !== this.opening) return undefined;
        return this.valueStart(char);
      case "string":
        if (state.escape > 0) {
          if (state.escape === 1) {
            if (char === "u") return { ...state, escape: 5 };
            return '"\\/bfnrt'.includes(char) ? { ...state, escape: 0 } : undefined;
          }
          return /[0-9a-fA-F]/.test(char)
            ? { ...state, escape: state.escape === 2 ? 0 : state.escape - 1 }
            : undefined;
        }
        if (char === "\\") return { ...state, escape: 1 };
        if (char === '"') return state.key ? { kind: "colon" } : this.afterValue();
        return char < " " ? undefined : state;
      case "number": {
        const text = state.text + char;
        if (numberPrefix.test(text)) return { kind: "number", text };
        if (/[-.eE+]$/.test(state.text)) return undefined;
        // The number ended before this character: it belongs to what follows.
        const after = this.afterValue();
        if (after.kind === "done") return undefined;
        const saved = this.state;
        this.state = after;
        const next = this.step(char);
        this.state = saved;
        return next;
      }
      case "literal":
        if (char !== state.rest[0]) return undefined;
        return state.rest.length === 1 ? this.afterValue() : { kind: "literal", rest: state.rest.slice(1) };
      case "after":
        if (space) return state;
        if (char === ",")
          return this.stack.at(-1) === "array"
            ? { kind: "value", close: false }
            : { kind: "key", close: false };
        if (char === (this.stack.at(-1) === "array" ? "]" : "}")) return this.closed();
        return undefined;
      case "key":
        if (space) return state;
        if (char === '"') return { kind: "string", key: true, escape: 0 };
        if (state.close && char === "}") return this.closed();
        return undefined;
      case "colon":
        if (space) return state;
        return char === ":" ? { kind: "value", close: false } : undefined;
    }
  }

  private valueStart(char: string): State | undefined {
    if (char === "[") {
      this.stack.push("array");
      return { kind: "value", close: true };
    }
    if (char === "{") {
      this.stack.push("object");
      return { kind: "key", close: true };
    }
    if (char === '"') return { kind: "string", key: false, escape: 0 };
    if (char === "-" || (char >= "0" && char <= "9")) return { kind: "number", text: char };
    const literal = literals.find((word) => word[0] === char);
    return literal ? { kind: "literal", rest: literal.slice(1) } : undefined;
  }

  /** A container ended. */
  private closed(): State {
    this.stack.pop();
    return this.afterValue();
  }

  /** A value ended: inside a container, `,` or its end may follow; at the top level it is complete. */
  private afterValue(): State {
    return this.stack.length === 0 ? { kind: "done" } : { kind: "after" };
  }
}
