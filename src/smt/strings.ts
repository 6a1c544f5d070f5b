/**
 * One string per class of the string tests a constraint makes on one argument, for the direct
 * search (`direct.ts`): containment, prefix, suffix and equality with constants, order against
 * constants (code points), and length bounds.
 *
 * Why it is exact. Read the argument as the text `^ x $` (two anchors outside every
 * alphabet): `x.contains(c)` is "c occurs", `x.startsWith(p)` is "^p occurs", `x.endsWith(s)`
 * is "s$ occurs", `x == e` is "^e$ occurs". An Aho–Corasick automaton over these patterns,
 * together with one small counter per order constant (equal so far up to position i, or
 * already less, or already greater) and the length capped above every length bound, is a
 * finite automaton whose final state decides every test. Characters that occur in no constant
 * behave alike, except for order, where only the gap between two constants' characters they
 * fall in matters; so one character per gap completes the alphabet (one in all, without order
 * tests). A breadth-first search over
 * the reachable states then meets every combination of test outcomes that any string can
 * produce, and keeps the first (shortest) string for each: one value per class, as the direct
 * search needs. Too many states: undefined (ask Z3).
 */

/** The tests made on one string argument, against constants. */
export interface StringTests {
  /** `x.contains(c)`, `c in x`. */
  contains: string[];
  /** `x.startsWith(p)`. */
  prefixes: string[];
  /** `x.endsWith(s)`. */
  suffixes: string[];
  /** `x == e`, `x in [..]`, and the finite sets of `c.contains(x)`, `x in c`, `c.startsWith(x)`… */
  equals: string[];
  /** Constants `x` is ordered against (`<`, `<=`, `>`, `>=`). */
  order: string[];
  /** Points where a length bound changes truth (`len(x) <= 60` → 60). */
  lengths: number[];
}

export function emptyStringTests(): StringTests {
  return { contains: [], prefixes: [], suffixes: [], equals: [], order: [], lengths: [] };
}

/** Reachable states explored before giving up. */
const maxStates = 20_000;
/** Patterns (from substring sets, mostly) before giving up. */
const maxPatterns = 400;

const start = -1;
const end = -2;
const less = -1;
const greater = -2;

const codePoints = (text: string): number[] =>
  [...text].map((character) => character.codePointAt(0) as number);

/** One string per class of the tests, shortest first; undefined when the search is too large. */
export function stringClassRepresentatives(tests: StringTests): string[] | undefined {
  const patterns: number[][] = [];
  const seenPatterns = new Set<string>();
  const addPattern = (pattern: number[]) => {
    const key = pattern.join(",");
    if (seenPatterns.has(key)) return;
    seenPatterns.add(key);
    patterns.push(pattern);
  };
  for (const text of tests.contains) if (text !== "") addPattern(codePoints(text));
  for (const text of tests.prefixes) addPattern([start, ...codePoints(text)]);
  for (const text of tests.suffixes) addPattern([...codePoints(text), end]);
  for (const text of tests.equals) addPattern([start, ...codePoints(text), end]);
  if (patterns.length > maxPatterns) return undefined;
  const automaton = new PatternAutomaton(patterns);
  const orders = tests.order.map(codePoints);
  const points = [...new Set(tests.lengths)].sort((a, b) => a - b);
  const cap = Math.max(0, ...points.map((point) => Math.floor(point) + 1));
  const alphabet = alphabetFor(
    [...patterns.flat(), ...orders.flat()].filter((symbol) => symbol >= 0),
    orders.length > 0,
  );

  // A core state: automaton node, patterns seen, order counters; the length is kept beside it.
  interface Core {
    node: number;
    seen: bigint;
    orders: number[];
    /** The test outcomes if the string ends here (length aside). */
    signature: string;
    next: Map<number, number>;
  }
  const cores: Core[] = [];
  const coreIds = new Map<string, number>();
  const core = (node: number, seen: bigint, positions: number[]): number => {
    const key = `${node}|${seen}|${positions.join(",")}`;
    let id = coreIds.get(key);
    if (id === undefined) {
      id = cores.length;
      coreIds.set(key, id);
      const finalOrders = positions.map((position, at) =>
        position >= 0 ? (position === (orders[at] as number[]).length ? 0 : less) : position,
      );
      const signature = `${seen | automaton.output(automaton.next(node, end))}|${finalOrders.join(",")}`;
      cores.push({ node, seen, orders: positions, signature, next: new Map() });
    }
    return id;
  };
  const step = (id: number, symbol: number): number => {
    const from = cores[id] as Core;
    let target = from.next.get(symbol);
    if (target === undefined) {
      const node = automaton.next(from.node, symbol);
      target = core(
        node,
        from.seen | automaton.output(node),
        from.orders.map((position, at) => {
          if (position < 0) return position;
          const constant = orders[at] as number[];
          if (position === constant.length) return greater;
          const expected = constant[position] as number;
          return symbol < expected ? less : symbol > expected ? greater : position + 1;
        }),
      );
      from.next.set(symbol, target);
    }
    return target;
  };
  const lengthClass = Array.from({ length: cap + 1 }, (_, length) =>
    points.map((point) => Math.sign(length - point)).join(","),
  );

  // Breadth first over (core, length): every pair reached, with the step that reached it first.
  const first = automaton.next(0, start);
  const width = cap + 1;
  const origin =
    core(
      first,
      automaton.output(first),
      orders.map(() => 0),
    ) * width;
  const parent = new Map<number, [number, number]>([[origin, [-1, 0]]]);
  const queue = [origin];
  const classes = new Map<string, number>();
  for (let index = 0; index < queue.length; index++) {
    if (queue.length > maxStates) return undefined;
    const state = queue[index] as number;
    const id = Math.floor(state / width);
    const length = state % width;
    const signature = `${(cores[id] as Core).signature}|${lengthClass[length]}`;
    if (!classes.has(signature)) classes.set(signature, state);
    for (const symbol of alphabet) {
      const next = step(id, symbol) * width + Math.min(length + 1, cap);
      if (parent.has(next)) continue;
      parent.set(next, [state, symbol]);
      queue.push(next);
    }
  }
  return [...classes.values()].map((state) => {
    const symbols: number[] = [];
    for (let at = state; at !== origin; ) {
      const [previous, symbol] = parent.get(at) as [number, number];
      symbols.push(symbol);
      at = previous;
    }
    return String.fromCodePoint(...symbols.reverse());
  });
}

/**
 * The constants' code points, and one more code point from each gap between them (and below
 * the least, above the greatest): encodable ones only (no surrogates, at most U+2FFFF), a
 * readable one where the gap has one.
 */
function alphabetFor(symbols: number[], ordered: boolean): number[] {
  const relevant = [...new Set(symbols)].sort((a, b) => a - b);
  const gaps: [number, number][] = [];
  let low = 0;
  for (const symbol of relevant) {
    if (symbol > low) gaps.push([low, symbol - 1]);
    low = symbol + 1;
  }
  if (low <= 0x2ffff) gaps.push([low, 0x2ffff]);
  const readable = codePoints("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.");
  if (!ordered) {
    // Without order tests every character outside the constants behaves alike: one is enough.
    const other = readable.find((symbol) => !relevant.includes(symbol));
    if (other !== undefined) return [...relevant, other];
  }
  const extra: number[] = [];
  for (const [from, to] of gaps) {
    const nice = readable.find((symbol) => symbol >= from && symbol <= to);
    if (nice !== undefined) extra.push(nice);
    else if (from < 0xd800 || from > 0xdfff) extra.push(from);
    else if (to > 0xdfff) extra.push(0xe000);
  }
  return [...relevant, ...(ordered ? extra : extra.slice(0, 1))];
}

/** Aho–Corasick over integer symbols: `next` follows failure links; `output` is the patterns seen at a node. */
class PatternAutomaton {
  readonly #children: Map<number, number>[] = [new Map()];
  readonly #fail: number[] = [0];
  readonly #output: bigint[] = [0n];
  readonly #memo: Map<number, number>[] = [new Map()];

  constructor(patterns: number[][]) {
    patterns.forEach((pattern, index) => {
      let node = 0;
      for (const symbol of pattern) {
        let child = this.#children[node]?.get(symbol);
        if (child === undefined) {
          child = this.#children.length;
          this.#children.push(new Map());
          this.#fail.push(0);
          this.#output.push(0n);
          this.#memo.push(new Map());
          this.#children[node]?.set(symbol, child);
        }
        node = child;
      }
      this.#output[node] = (this.#output[node] as bigint) | (1n << BigInt(index));
    });
    // Failure links, breadth first; outputs inherit along them.
    const queue = [...(this.#children[0] as Map<number, number>).values()];
    for (let index = 0; index < queue.length; index++) {
      const node = queue[index] as number;
      for (const [symbol, child] of this.#children[node] as Map<number, number>) {
        this.#fail[child] = this.#step(this.#fail[node] as number, symbol, node === 0);
        this.#output[child] =
          (this.#output[child] as bigint) | (this.#output[this.#fail[child] as number] as bigint);
        queue.push(child);
      }
    }
  }

  output(node: number): bigint {
    return this.#output[node] as bigint;
  }

  next(node: number, symbol: number): number {
    const memo = this.#memo[node] as Map<number, number>;
    let target = memo.get(symbol);
    if (target === undefined) {
      target = this.#step(node, symbol, false);
      memo.set(symbol, target);
    }
    return target;
  }

  /** The node after `symbol` from `node` (`fromRootChild`: computing a depth-1 node's link, which is the root). */
  #step(node: number, symbol: number, fromRootChild: boolean): number {
    if (fromRootChild) return 0;
    let current = node;
    for (;;) {
      const child = this.#children[current]?.get(symbol);
      if (child !== undefined) return child;
      if (current === 0) return 0;
      current = this.#fail[current] as number;
    }
  }
}
