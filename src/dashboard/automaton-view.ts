import { type Colour, formatFormula } from "../logic/index.js";
import type { RuleSpec } from "../policy/index.js";
import { colourFill, colourGlyph, colourInk } from "./html.js";

/** Automata with more states are listed as a table, not drawn (Graphviz would need seconds, and nobody reads it). */
export const MAX_DRAWN_STATES = 60;

export interface AutomatonState {
  state: number;
  residual: string;
  accepting: boolean;
  colour: Colour;
}

export interface AutomatonView {
  formula: string;
  atoms: string[];
  states: AutomatonState[];
  /** Transitions grouped by source and target, with the letters that take them (`{}` = no atom holds). */
  edges: { from: number; to: number; letters: string[] }[];
}

/**
 * A rule's automaton over the letters the policy's tools can produce (the alphabet it was built
 * with): every reachable state with its residual formula, acceptance and colour.
 */
export function automatonView(rule: RuleSpec): AutomatonView {
  const automaton = rule.automaton;
  const compiled = automaton.compile();
  const atoms = automaton.atoms.map((atom) => atom.key);
  const letterText = (mask: number): string => `{${atoms.filter((_, bit) => (mask >>> bit) & 1).join(", ")}}`;
  const states: AutomatonState[] = [];
  const edges: AutomatonView["edges"] = [];
  for (let state = 0; state < compiled.stateCount; state++) {
    states.push({
      state,
      residual: automaton.describeState(state),
      accepting: compiled.accepting[state] === 1,
      colour: compiled.colours[state] as Colour,
    });
    const byTarget = new Map<number, string[]>();
    compiled.letters.forEach((mask, index) => {
      const target = compiled.step(state, index);
      byTarget.set(target, [...(byTarget.get(target) ?? []), letterText(mask)]);
    });
    for (const [to, letters] of byTarget) edges.push({ from: state, to, letters });
  }
  return { formula: formatFormula(rule.formula), atoms, states, edges };
}

/**
 * The automaton in Graphviz DOT: states filled with their colour, accepting states with a double
 * border; the states of `path` (in the order a run visited them) and the transitions between
 * them drawn bold, the last one marked as where the run is. With `blockedLast`, the path's last
 * step is a blocked call: drawn dashed in red, to where the call would have led.
 */
export function automatonDot(
  view: AutomatonView,
  path: readonly number[] = [],
  options: { blockedLast?: boolean } = {},
): string {
  const visited = new Set(path);
  const taken = new Set<string>();
  const last = path.length >= 2 ? `${path.at(-2)}->${path.at(-1)}` : undefined;
  for (let index = 1; index < path.length; index++) taken.add(`${path[index - 1]}->${path[index]}`);
  const current = path.at(-1);
  const lines = [
    "digraph automaton {",
    '  graph [rankdir=LR, fontname="Helvetica", fontsize=11, nodesep=0.3, ranksep=0.5];',
    '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
    '  edge [fontname="Helvetica", fontsize=9, color="#888888"];',
    '  start [shape=point, width=0.08, label=""];',
    "  start -> s0;",
  ];
  for (const state of view.states) {
    const attributes = [
      `label=${quote(`${state.state} ${colourGlyph[state.colour]} ${shorten(state.residual, 48)}`)}`,
      `fillcolor=${quote(colourFill[state.colour])}`,
      `fontcolor=${quote(colourInk[state.colour])}`,
      `tooltip=${quote(`state ${state.state} (${state.colour}${state.accepting ? ", accepting" : ""}): ${state.residual}`)}`,
      `id=${quote(`state_${state.state}`)}`,
      `class=${quote(visited.has(state.state) ? "visited" : "unvisited")}`,
    ];
    if (state.accepting) attributes.push("peripheries=2");
    if (visited.has(state.state)) attributes.push("penwidth=2.5", 'color="#1a202c"');
    if (state.state === current) attributes.push("penwidth=4", 'color="#2b6cb0"');
    lines.push(`  s${state.state} [${attributes.join(", ")}];`);
  }
  for (const edge of view.edges) {
    const shown =
      edge.letters.length > 3
        ? [...edge.letters.slice(0, 3), `+${edge.letters.length - 3} more`]
        : edge.letters;
    const attributes = [
      `label=${quote(shown.join("\n"))}`,
      `tooltip=${quote(edge.letters.join(" "))}`,
      `id=${quote(`edge_${edge.from}_${edge.to}`)}`,
    ];
    const key = `${edge.from}->${edge.to}`;
    if (options.blockedLast && key === last)
      attributes.push('color="#e53e3e"', "penwidth=2.5", 'style="dashed"', 'class="blocked"');
    else if (taken.has(key)) attributes.push('color="#2b6cb0"', "penwidth=2.5", 'class="taken"');
    lines.push(`  s${edge.from} -> s${edge.to} [${attributes.join(", ")}];`);
  }
  lines.push("}");
  return lines.join("\n");
}

/** DOT → SVG with Graphviz compiled to WebAssembly (@viz-js/viz, about 1 MB), loaded on first use. */
export class SvgRenderer {
  private graphviz: Promise<{ renderString(input: string, options: { format: "svg" }): string }> | undefined;

  async render(dot: string): Promise<string> {
    this.graphviz ??= import("@viz-js/viz").then((viz) => viz.instance());
    return (await this.graphviz).renderString(dot, { format: "svg" });
  }
}

function quote(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

/** Cut in the middle: residuals of one rule often share their beginning, so both ends tell them apart. */
function shorten(text: string, length: number): string {
  if (text.length <= length) return text;
  const head = Math.ceil((length - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (length - 1 - head))}`;
}
