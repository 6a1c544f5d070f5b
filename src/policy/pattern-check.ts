import {
  type CharNode,
  childrenOf,
  type PatternNode,
  parsePattern,
  patternNodes,
  type RepeatNode,
} from "./pattern-syntax.js";

/** A part of a pattern that can make matching super-linear: where it is (in the source) and why. */
export interface PatternProblem {
  start: number;
  end: number;
  message: string;
}

/**
 * The parts of a regex (a source that compiles with the `u` flag) that backtracking can take more
 * than linear time on, per text window (docs/policy.md, "Patterns"):
 * - a repetition that can match the same text in more than one way: `(a+)+`, `(\w+\s?)*`,
 *   `(?:x*y?)*`, `(?:a|ab?)*`; a repetition whose rounds are delimited (`(?:_[a-z]+)+`,
 *   `(?:[ ]\p{Lu}\p{L}*)*`) can not, and passes. Found as an ambiguity of the repetition's position
 *   automaton (two paths reading the same text back to the same position); lookarounds and anchors
 *   count as matching anything, and two classes neither of which can be listed (`\p{…}`, negated or
 *   large ones) as overlapping, so the check may reject a pattern that is in fact linear, never
 *   the other way round;
 * - a lookaround that reads an unbounded repetition on every round of a repetition;
 * - a backreference.
 */
export function patternProblems(source: string, ignoreCase: boolean): PatternProblem[] {
  const tree = parsePattern(source);
  const span = (node: { start: number; end: number }): string => {
    const text = source.slice(node.start, node.end);
    return text.length <= 60 ? text : `${text.slice(0, 40)}…${text.slice(-15)}`;
  };
  const problems: PatternProblem[] = [];
  for (const node of patternNodes(tree))
    if (node.kind === "backreference")
      problems.push({
        start: node.start,
        end: node.end,
        message: `the backreference ${span(node)} is not allowed: matching one can take exponential time`,
      });
  lookaroundsInRepetitions(tree, undefined, (look, inner, repeat) =>
    problems.push({
      start: look.start,
      end: look.end,
      message: `the lookaround ${span(look)} reads the unbounded repetition ${span(inner)} at every round of ${span(repeat)}: bound it (e.g. {0,40}) or move it out of the repetition`,
    }),
  );
  const overlaps = overlapTest(ignoreCase);
  const ambiguous: RepeatNode[] = [];
  for (const repeat of innermostFirst(tree)) {
    if (ambiguous.some((inner) => repeat.start <= inner.start && inner.end <= repeat.end)) continue;
    const verdict = ambiguity(repeat, overlaps);
    if (verdict === "none") continue;
    ambiguous.push(repeat);
    problems.push({
      start: repeat.start,
      end: repeat.end,
      message:
        verdict === "ambiguous"
          ? `${span(repeat)} can match the same text in more than one way (a repetition of overlapping repetitions or alternatives): backtracking over it can take exponential time; make each round start with what the rest of a round cannot match, e.g. (?:_[a-z]+)+ rather than (?:[a-z_]+)+`
          : `${span(repeat)} is too large to check for more than one way of matching a text (over ${maxProductEdges} steps): repeat a smaller part, or split the pattern`,
    });
  }
  return problems.sort((left, right) => left.start - right.start);
}

type LookNode = Extract<PatternNode, { kind: "look" }>;

function lookaroundsInRepetitions(
  node: PatternNode,
  repeat: RepeatNode | undefined,
  report: (look: LookNode, inner: RepeatNode, repeat: RepeatNode) => void,
): void {
  if (node.kind === "look" && repeat) {
    const inner = [...patternNodes(node.body)].find(
      (candidate): candidate is RepeatNode => candidate.kind === "repeat" && candidate.max === Infinity,
    );
    if (inner) {
      report(node, inner, repeat);
      return;
    }
  }
  const within = node.kind === "repeat" && node.max > 1 ? node : repeat;
  for (const child of childrenOf(node)) lookaroundsInRepetitions(child, within, report);
}

/** The repetitions that can repeat (max above 1), each after the repetitions inside it. */
function innermostFirst(tree: PatternNode): RepeatNode[] {
  return [...patternNodes(tree)]
    .filter((node): node is RepeatNode => node.kind === "repeat" && node.max > 1)
    .reverse();
}

/** Whether two characters can be the same: exact when one of them lists its members, else assumed. */
type Overlaps = (left: CharNode, right: CharNode) => boolean;

function overlapTest(ignoreCase: boolean): Overlaps {
  const flags = ignoreCase ? "iu" : "u";
  const matchers = new Map<string, RegExp>();
  const matcher = (node: CharNode): RegExp => {
    let found = matchers.get(node.source);
    if (!found) {
      found = new RegExp(`^(?:${node.source})$`, flags);
      matchers.set(node.source, found);
    }
    return found;
  };
  const known = new Map<string, boolean>();
  return (left, right) => {
    const key = `${left.source}\u0000${right.source}`;
    let result = known.get(key);
    if (result === undefined) {
      // With `i`, a class matches a character iff it matches its case-folded form, so testing the
      // listed members (unfolded) against the other class is exact.
      result = left.members
        ? left.members.some((member) => matcher(right).test(member))
        : right.members
          ? right.members.some((member) => matcher(left).test(member))
          : true;
      known.set(key, result);
    }
    return result;
  };
}

/** The position automaton of a repetition; `follow` lists each path to a next position (repeats kept). */
interface Positions {
  chars: CharNode[];
  follow: number[][];
}

interface Part {
  nullable: boolean;
  first: number[];
  last: number[];
}

function positionsOf(node: PatternNode, automaton: Positions): Part {
  switch (node.kind) {
    case "char": {
      const index = automaton.chars.push(node) - 1;
      automaton.follow.push([]);
      return { nullable: false, first: [index], last: [index] };
    }
    case "sequence": {
      let part: Part = { nullable: true, first: [], last: [] };
      for (const item of node.items) {
        const next = positionsOf(item, automaton);
        for (const index of part.last) automaton.follow[index]?.push(...next.first);
        part = {
          nullable: part.nullable && next.nullable,
          first: part.nullable ? [...part.first, ...next.first] : part.first,
          last: next.nullable ? [...next.last, ...part.last] : next.last,
        };
      }
      return part;
    }
    case "choice": {
      const parts = node.branches.map((branch) => positionsOf(branch, automaton));
      return {
        nullable: parts.some((part) => part.nullable),
        first: parts.flatMap((part) => part.first),
        last: parts.flatMap((part) => part.last),
      };
    }
    case "group":
      return positionsOf(node.body, automaton);
    case "repeat": {
      if (node.max === 0) return { nullable: true, first: [], last: [] };
      const body = positionsOf(node.body, automaton);
      if (node.max > 1) for (const index of body.last) automaton.follow[index]?.push(...body.first);
      return { ...body, nullable: node.min === 0 || body.nullable };
    }
    default:
      // Lookarounds, anchors and backreferences: read as matching the empty text.
      return { nullable: true, first: [], last: [] };
  }
}

/** The most edges of the product automaton `ambiguity` builds (about half a second). */
const maxProductEdges = 500_000;

/**
 * Whether some position of the repetition has two different paths back to itself that read the
 * same text (exponential ambiguity): a strongly connected part of the product of the automaton
 * with itself that holds a pair of equal positions and either a pair of different ones or two
 * different paths between equal pairs. `too large` when the product grows past `maxProductEdges`.
 */
function ambiguity(repeat: RepeatNode, overlaps: Overlaps): "none" | "ambiguous" | "too large" {
  const automaton: Positions = { chars: [], follow: [] };
  positionsOf(repeat, automaton);
  const count = automaton.chars.length;
  const id = (left: number, right: number): number => left * count + right;
  // Positions with the same class share one entry of a table of overlaps.
  const classes = new Map<string, number>();
  const classOf = automaton.chars.map((char) => {
    if (!classes.has(char.source)) classes.set(char.source, classes.size);
    return classes.get(char.source) as number;
  });
  const known = new Int8Array(classes.size * classes.size).fill(-1);
  const sameCharacter = (left: number, right: number): boolean => {
    const entry = (classOf[left] as number) * classes.size + (classOf[right] as number);
    if (known[entry] === -1)
      known[entry] = overlaps(automaton.chars[left] as CharNode, automaton.chars[right] as CharNode) ? 1 : 0;
    return known[entry] === 1;
  };
  const edges = new Map<number, { to: number; divergent: boolean }[]>();
  const pending = automaton.chars.map((_, index) => id(index, index));
  const seen = new Set(pending);
  let edgeCount = 0;
  while (pending.length > 0) {
    const node = pending.pop() as number;
    const left = Math.floor(node / count);
    const right = node % count;
    const out: { to: number; divergent: boolean }[] = [];
    const leftNext = automaton.follow[left] as number[];
    const rightNext = automaton.follow[right] as number[];
    for (const [leftPath, leftTarget] of leftNext.entries()) {
      for (const [rightPath, rightTarget] of rightNext.entries()) {
        if (leftTarget !== rightTarget && !sameCharacter(leftTarget, rightTarget)) continue;
        if (++edgeCount > maxProductEdges) return "too large";
        const to = id(leftTarget, rightTarget);
        out.push({ to, divergent: left === right && leftPath !== rightPath && leftTarget === rightTarget });
        if (!seen.has(to)) {
          seen.add(to);
          pending.push(to);
        }
      }
    }
    edges.set(node, out);
  }
  const component = stronglyConnected([...seen], (node) => (edges.get(node) ?? []).map((edge) => edge.to));
  const diagonal = new Set<number>();
  for (const node of seen)
    if (Math.floor(node / count) === node % count) diagonal.add(component.get(node) as number);
  for (const [node, out] of edges) {
    const home = component.get(node) as number;
    if (!diagonal.has(home)) continue;
    for (const edge of out) {
      if (component.get(edge.to) !== home) continue;
      const equalPair = Math.floor(edge.to / count) === edge.to % count;
      if (edge.divergent || !equalPair) return "ambiguous";
    }
  }
  return "none";
}

/** Tarjan's strongly connected components, without recursion: node → component number. */
function stronglyConnected(nodes: readonly number[], next: (node: number) => number[]): Map<number, number> {
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const component = new Map<number, number>();
  const stack: number[] = [];
  const onStack = new Set<number>();
  let counter = 0;
  let components = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: number; targets: number[]; position: number }[] = [];
    const open = (node: number): void => {
      index.set(node, counter);
      low.set(node, counter);
      counter++;
      stack.push(node);
      onStack.add(node);
      work.push({ node, targets: next(node), position: 0 });
    };
    open(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as (typeof work)[number];
      if (frame.position < frame.targets.length) {
        const target = frame.targets[frame.position++] as number;
        if (!index.has(target)) open(target);
        else if (onStack.has(target))
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(target) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent)
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === index.get(frame.node)) {
        let member: number;
        do {
          member = stack.pop() as number;
          onStack.delete(member);
          component.set(member, components);
        } while (member !== frame.node);
        components++;
      }
    }
  }
  return component;
}
