import type { Policy, RuleSpec } from "../policy/index.js";
import type { AutomatonView } from "./automaton-view.js";
import { colourFill, colourLegend, escapeHtml, page } from "./html.js";

/** What the drawings' labels mean (the edges' letters, `+N more`, a residual's `[past N]`). */
const drawingLegend = `<p class="legend" id="drawing-legend">A state: its number, its verdict's glyph and its residual formula (what is left to satisfy), cut in the middle; hover it for the whole. An edge: the letters that take it, each the set of the rule's propositions true at a call — <code>{}</code>: a call where none holds (any other call); <code>+N more</code>: N more letters (hover the edge for all). <code>[past N]</code>: the past-time parts (<code>O</code>, <code>S</code>, <code>Y</code>) seen so far, as a bit set. Bold: the run's path; blue border: where it is; dashed red: a blocked call's step, not taken. Drag to pan; the buttons zoom.</p>`;

/** A drawing in its own frame with zoom buttons (`zoomScript` makes them work). */
export function zoomable(id: string, svg: string): string {
  return `<p class="zoom" data-for="${id}"><button data-zoom="0.8" title="zoom out">−</button><button data-zoom="1.25" title="zoom in">+</button><button data-zoom="fit" title="fit the width">fit</button><button data-zoom="1" title="natural size">1:1</button></p><div class="automaton" id="${id}">${svg}</div>`;
}

/**
 * Pan (drag) and zoom (buttons) for every `.automaton` frame: the SVG keeps its natural size
 * (Graphviz's points) unless zoomed, and the frame scrolls.
 */
export const zoomScript = `
for (const frame of document.querySelectorAll(".automaton")) {
  const svg = frame.querySelector("svg");
  if (!svg) continue;
  const natural = parseFloat(svg.getAttribute("width")) * 4 / 3;
  let scale = 1;
  const apply = () => { svg.style.width = Math.round(natural * scale) + "px"; };
  apply();
  const buttons = document.querySelector('.zoom[data-for="' + frame.id + '"]');
  buttons?.addEventListener("click", (event) => {
    const zoom = event.target.closest("button")?.dataset.zoom;
    if (!zoom) return;
    scale = zoom === "fit" ? frame.clientWidth / natural : zoom === "1" ? 1 : scale * Number(zoom);
    apply();
  });
  let from = null;
  frame.addEventListener("pointerdown", (event) => { from = { x: event.clientX, y: event.clientY, left: frame.scrollLeft, top: frame.scrollTop }; });
  frame.addEventListener("pointermove", (event) => {
    if (!from) return;
    frame.scrollLeft = from.left - (event.clientX - from.x);
    frame.scrollTop = from.top - (event.clientY - from.y);
  });
  for (const end of ["pointerup", "pointerleave"]) frame.addEventListener(end, () => { from = null; });
}
`;

export function rulePage(options: {
  policy: Policy;
  rule: RuleSpec;
  view: AutomatonView;
  svg: string | undefined;
  path: readonly number[];
  /** Where the path comes from: `P1 for route(…)` in run X, up to call N. */
  pathNote: string | undefined;
  /** The run the path comes from: a link to every rule's automaton in it. */
  run?: string;
}): string {
  const { rule, view, path } = options;
  const states = view.states
    .map(
      (state) =>
        `<tr${path.includes(state.state) ? ' class="visited"' : ""}><td>${state.state}${state.state === path.at(-1) ? " ◀" : ""}</td><td><i class="chip" style="background:${colourFill[state.colour]}"></i>${state.colour}</td><td>${state.accepting ? "yes" : ""}</td><td><code>${escapeHtml(state.residual)}</code></td></tr>`,
    )
    .join("");
  const drawing =
    options.svg !== undefined
      ? zoomable("automaton", options.svg)
      : `<p>${view.states.length} states: too many to draw; listed below.</p>`;
  const rulebook = `/dashboard/policy/${encodeURIComponent(options.policy.name)}/automata${options.run ? `?run=${encodeURIComponent(options.run)}` : ""}`;
  const body = `<p>${escapeHtml(rule.sentence)}</p>
<p>Formula: <code>${escapeHtml(view.formula)}</code> · severity ${escapeHtml(rule.severity.kind)} · applies to ${escapeHtml(rule.appliesTo)} · ${rule.entities.length > 0 ? `one instance per ${escapeHtml(rule.entities.join(", "))}` : "one instance"} · ${view.states.length} states over the policy's letters · <a href="${rulebook}" id="rulebook">every rule's automaton${options.run ? " in this run" : ""}</a></p>
${options.pathNote ? `<p id="path">Path: ${escapeHtml(options.pathNote)}: states ${path.join(" → ")}</p>` : "<p>Open it from a run's matrix to see the run's path.</p>"}
${colourLegend()}
${drawingLegend}
${drawing}
<h2>States</h2><table id="states"><tr><th>state</th><th>colour</th><th>accepting</th><th>residual formula</th></tr>${states}</table>`;
  return page(`Rule ${rule.id} of ${options.policy.name}`, body, zoomScript);
}

/** One drawing of the rulebook: a rule, or one of its instances in the run, with where it is now. */
export interface RulebookDrawing {
  rule: RuleSpec;
  /** `P1 for route(…)`; absent: the rule without a run. */
  key?: string;
  states: number;
  /** The instance's path up to the run's end. */
  path: readonly number[];
  svg: string | undefined;
}

/**
 * The rulebook: every rule's automaton, each instance of the chosen run drawn with its path and
 * current state (the harness's "every rule's DFA rendered live": the page follows the run).
 */
export function rulebookPage(options: {
  policy: Policy;
  run: string | undefined;
  drawings: readonly RulebookDrawing[];
}): string {
  const { policy, run } = options;
  const sections = options.drawings.map((drawing, index) => {
    const where =
      drawing.key !== undefined
        ? `${escapeHtml(drawing.key)} · now in state ${drawing.path.at(-1) ?? "–"} (path ${drawing.path.join(" → ")})`
        : escapeHtml(drawing.rule.id);
    const body =
      drawing.svg !== undefined
        ? zoomable(`automaton-${index}`, drawing.svg)
        : `<p>${drawing.states} states: too many to draw (<a href="/dashboard/policy/${encodeURIComponent(policy.name)}/rule/${encodeURIComponent(drawing.rule.id)}">its states</a>).</p>`;
    return `<section class="rulebook" data-rule="${escapeHtml(drawing.rule.id)}"><h3>${where}</h3><p>${escapeHtml(drawing.rule.sentence)}</p>${body}</section>`;
  });
  const intro = run
    ? `<p>Every rule's automaton in run <a href="/dashboard/run/${encodeURIComponent(run)}">${escapeHtml(run)}</a>, one drawing per instance, at the run's end; the page follows the run as its requests arrive.</p>`
    : "<p>Every rule's automaton. Open it from a run (its rule pages link here) to see each instance's path and state.</p>";
  const live = run
    ? `
const run = ${JSON.stringify(run)};
let known = null;
new EventSource("/dashboard/events").addEventListener("records", async () => {
  const response = await fetch("/dashboard/api/conversation/" + encodeURIComponent(run));
  if (!response.ok) return;
  const { requests } = await response.json();
  if (known !== null && requests.length !== known) location.reload();
  known = requests.length;
});
fetch("/dashboard/api/conversation/" + encodeURIComponent(run)).then((r) => r.json()).then(({ requests }) => { known = requests.length; });`
    : "";
  return page(
    `Rulebook of ${policy.name}`,
    `${intro}${colourLegend()}${drawingLegend}${sections.join("\n")}`,
    `${zoomScript}${live}`,
  );
}
