import type { LintFinding } from "../game/index.js";
import { formatFormula } from "../logic/index.js";
import type { Policy, RuleSpec } from "../policy/index.js";
import type { AutomatonView } from "./automaton-view.js";
import { benchmarkSections, benchmarkTables, type ChartResults } from "./charts.js";
import { callText, colourFill, colourLegend, embeddedJson, escapeHtml, page } from "./html.js";
import {
  type ConversationPlace,
  type FlightRecord,
  type Outcome,
  outcomesOf,
  type StoredRecord,
} from "./records.js";
import type { RunView } from "./run-view.js";

export interface RunFilter {
  policy?: string;
  mode?: string;
  outcome?: Outcome;
  /** Only the last request of each conversation (it shows the whole run). */
  latest?: boolean;
}

export function matchesFilter(record: FlightRecord, filter: RunFilter, place?: ConversationPlace): boolean {
  if (filter.latest && place && place.latest !== record.id) return false;
  if (filter.policy && (record.policy ?? "") !== filter.policy) return false;
  if (filter.mode && record.mode !== filter.mode) return false;
  if (filter.outcome && !outcomesOf(record).includes(filter.outcome)) return false;
  return true;
}

/** What the turn ended with: the calls returned, the answer, or the error. */
function endText(record: FlightRecord): string {
  if (record.status !== 200) return `${record.status} ${record.error?.code ?? ""}`;
  const message = record.returned?.message;
  const calls = (message?.tool_calls ?? []) as { function?: { name?: string; arguments?: string } }[];
  if (calls.length > 0)
    return calls.map((call) => `${call.function?.name}(${call.function?.arguments ?? ""})`).join("; ");
  const content = message?.content ?? "";
  return content.length > 80 ? `“${content.slice(0, 79)}…”` : `“${content}”`;
}

/** The rows of the Runs table (also sent alone when the page refreshes itself). */
export function runRows(
  records: readonly StoredRecord[],
  places: ReadonlyMap<string, ConversationPlace>,
): string {
  if (records.length === 0) return `<tr><td colspan="10">no records</td></tr>`;
  return records
    .map(({ record }) => {
      const outcomes = outcomesOf(record)
        .map((outcome) => `<span class="badge ${outcome}">${outcome}</span>`)
        .join("");
      const mentor = record.mentor;
      const place = places.get(record.id);
      const conversation = place
        ? `<td class="conversation">${place.position} of ${place.count}${place.latest !== record.id ? ` · <a href="/dashboard/run/${encodeURIComponent(place.latest)}">latest</a>` : ""}</td>`
        : "<td></td>";
      return `<tr class="run" data-id="${escapeHtml(record.id)}"><td>${escapeHtml(record.time)}</td><td><a href="/dashboard/run/${encodeURIComponent(record.id)}">${escapeHtml(record.id)}</a></td>${conversation}<td>${escapeHtml(record.policy ?? "–")}</td><td>${escapeHtml(record.mode ?? "–")}</td><td>${outcomes}</td><td>${mentor?.attempts.length ?? 0}</td><td>${mentor?.blocked ?? 0}</td><td>${escapeHtml(endText(record))}</td><td>${record.ms !== undefined ? Math.round(record.ms) : "–"}</td></tr>`;
    })
    .join("\n");
}

export function runsPage(options: {
  records: readonly StoredRecord[];
  places: ReadonlyMap<string, ConversationPlace>;
  filter: RunFilter;
  policies: readonly string[];
  directory: string | undefined;
  problems: readonly string[];
}): string {
  const { filter } = options;
  const select = (name: string, values: readonly string[], chosen: string | undefined) =>
    `<label>${name} <select name="${name}"><option value="">any</option>${values
      .map(
        (value) =>
          `<option${value === chosen ? " selected" : ""} value="${escapeHtml(value)}">${escapeHtml(value)}</option>`,
      )
      .join("")}</select></label>`;
  const source =
    options.directory === undefined
      ? "<p>No flight recorder directory: start with <code>--recorder DIR</code> to see runs.</p>"
      : `<p>Flight records in <code>${escapeHtml(options.directory)}</code>, newest first; the list follows new records as they are written.</p>`;
  const problems =
    options.problems.length > 0
      ? `<div class="problems"><p>Lines that could not be read:</p><ul>${options.problems.map((problem) => `<li>${escapeHtml(problem)}</li>`).join("")}</ul></div>`
      : "";
  const body = `${source}
<form method="get" action="/dashboard/">${select("policy", options.policies, filter.policy)} ${select("mode", ["none", "prompt", "token"], filter.mode)} ${select("outcome", ["blocked", "refused", "exhausted", "error", "ok"], filter.outcome)} <label><input type="checkbox" name="latest" value="1"${filter.latest ? " checked" : ""}> latest request of each conversation</label> <button>filter</button></form>
${problems}
<table id="runs"><thead><tr><th>time</th><th>request</th><th>conversation</th><th>policy</th><th>mode</th><th>outcome</th><th>generations</th><th>blocked</th><th>ended with</th><th>ms</th></tr></thead>
<tbody>${runRows(options.records, options.places)}</tbody></table>
<p>A conversation is the requests of one agent run: each continues the one before (its messages, then the answer it got). The latest request's page shows the whole run.</p>`;
  // New records arrive as server-sent events; the table is fetched again with the same filter.
  const script = `
const events = new EventSource("/dashboard/events");
events.addEventListener("records", async () => {
  const query = new URLSearchParams(location.search);
  query.set("rows", "1");
  const response = await fetch("/dashboard/?" + query);
  if (response.ok) document.querySelector("#runs tbody").innerHTML = await response.text();
});`;
  return page("Runs", body, script);
}

export function runPage(record: FlightRecord, view: RunView | undefined, why: string | undefined): string {
  const parts: string[] = [];
  const outcomes = outcomesOf(record)
    .map((outcome) => `<span class="badge ${outcome}">${outcome}</span>`)
    .join("");
  parts.push(
    `<p>${escapeHtml(record.time)} · policy <b>${escapeHtml(record.policy ?? "none")}</b> · mode <b>${escapeHtml(record.mode ?? "–")}</b> · status ${record.status} ${outcomes} · ended with <code>${escapeHtml(endText(record))}</code></p>`,
  );
  if (record.error)
    parts.push(
      `<p class="problems">${escapeHtml(record.error.code ?? "")}: ${escapeHtml(record.error.message ?? "")}</p>`,
    );
  if (!view) {
    parts.push(`<p class="problems">${escapeHtml(why ?? "no view")}</p>`);
    return page(`Run ${record.id}`, parts.join("\n"));
  }
  for (const note of view.notes) parts.push(`<p class="problems">${escapeHtml(note)}</p>`);
  parts.push("<h2>Grounding</h2>");
  parts.push(
    view.task.length > 0
      ? `<p>Task: ${view.task.map((call) => `<code>${escapeHtml(callText(call))}</code>`).join(" ")}</p>`
      : "<p>Task: none grounded.</p>",
  );
  if (view.grounding.length > 0)
    parts.push(
      `<table id="grounding"><tr><th>message</th><th>kind</th><th>source</th><th>grounded as</th></tr>${view.grounding
        .map(
          (note) =>
            `<tr><td>${note.message}</td><td>${note.kind}</td><td>${note.source}</td><td>${note.error !== undefined ? `<span class="problems">${escapeHtml(note.error)}</span>` : `<code>${escapeHtml(JSON.stringify(note.value))}</code>`}</td></tr>`,
        )
        .join("")}</table>`,
    );
  parts.push("<h2>Rules × calls</h2>", colourLegend());
  parts.push(
    "<p>Each column is a call (in the conversation, then those the recorded turn proposed, blue-topped; blocked ones on red); each cell the rule's colour after it, for one binding. Click a call or a cell.</p>",
  );
  const header = view.columns
    .map((column, index) => {
      const call = column.call as { name: string; arguments: Record<string, unknown> };
      const label = column.kind === "answer" ? `answer${column.refused ? " (refused)" : ""}` : callText(call);
      // The header names the call and its values; the whole call is the tooltip.
      const short =
        column.kind === "answer"
          ? label
          : `${call.name}(${Object.values(call.arguments)
              .map((value) => (typeof value === "string" ? value : JSON.stringify(value)))
              .join(", ")})`;
      const classes = ["column", column.kind, column.verdict === "block" ? "blocked" : ""].join(" ");
      return `<th class="${classes}" data-column="${index}" title="${escapeHtml(label)}">${index + 1}. ${escapeHtml(short.length > 42 ? `${short.slice(0, 41)}…` : short)}</th>`;
    })
    .join("");
  const cellHtml = (cell: RunView["start"][number], row: number, column: number | "start") => {
    if (!cell) return `<td class="cell none" data-row="${row}" data-column="${column}"></td>`;
    const title = `${view.rows[row]?.key}: ${cell.colour}${cell.broken ? " (broken by this call)" : ""}, state ${cell.states.join(" or ")}`;
    return `<td class="cell ${cell.colour}${cell.broken ? " broken" : ""}" style="background:${colourFill[cell.colour]}" data-row="${row}" data-column="${column}" title="${escapeHtml(title)}">${cell.broken ? "✕" : ""}</td>`;
  };
  const body = view.rows
    .map(
      (row, rowIndex) =>
        `<tr><td class="row" title="${escapeHtml(row.sentence)}">${row.kind === "rule" ? `<a href="/dashboard/policy/${encodeURIComponent(view.policy)}/rule/${encodeURIComponent(row.rule)}?run=${encodeURIComponent(record.id)}&row=${rowIndex}">${escapeHtml(row.key)}</a>` : `${escapeHtml(row.key)} (constraint)`} <span class="badge">${escapeHtml(row.mode)}</span></td>${cellHtml(view.start[rowIndex] ?? null, rowIndex, "start")}${view.columns.map((_, column) => cellHtml(view.cells[rowIndex]?.[column] ?? null, rowIndex, column)).join("")}</tr>`,
    )
    .join("\n");
  parts.push(
    `<table class="matrix" id="matrix"><thead><tr><th>rule (binding)</th><th class="column" data-column="start">start</th>${header}</tr></thead><tbody>${body}</tbody></table>`,
  );
  parts.push('<div id="details"><p>Click a call to see every rule after it.</p></div>');
  parts.push("<h2>Open duties at the end</h2>");
  parts.push(
    view.openDuties.length === 0
      ? '<p id="duties">None: the run may end here.</p>'
      : `<ul id="duties">${view.openDuties
          .map(
            (duty) =>
              `<li><b>${escapeHtml(duty.rule)}</b>${duty.binding ? ` (${escapeHtml(duty.binding)})` : ""}: ${escapeHtml(duty.sentence)}${duty.fulfil ? ` — next: <code>${escapeHtml(callText(duty.fulfil))}</code>` : ""}</li>`,
          )
          .join("")}</ul>`,
  );
  parts.push(
    `<script type="application/json" id="view">${embeddedJson({ run: record.id, ...view })}</script>`,
  );
  return page(`Run ${record.id}`, parts.join("\n"), runScript);
}

/** The run page's one behaviour: selecting a call shows it and every rule's colour after it. */
const runScript = `
const view = JSON.parse(document.getElementById("view").textContent);
const esc = (text) => String(text).replace(/[&<>"]/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"})[c]);
const callText = (call) => call.name + "(" + Object.entries(call.arguments).map(([k, v]) => k + "=" + JSON.stringify(v)).join(", ") + ")";
function select(column) {
  document.querySelectorAll("#matrix .selected").forEach((node) => node.classList.remove("selected"));
  document.querySelectorAll('#matrix [data-column="' + column + '"]').forEach((node) => node.classList.add("selected"));
  const details = document.getElementById("details");
  const sentenceOf = (rule) => (view.rows.find((row) => row.rule === rule) || {}).sentence || "";
  const lines = [];
  let cells;
  if (column === "start") {
    lines.push("<h3>Before any call</h3><p>The task grounded, nothing done yet.</p>");
    cells = view.start;
  } else {
    const c = view.columns[column];
    const what = c.kind === "answer" ? "an answer without a call" : "<code>" + esc(callText(c.call)) + "</code>";
    lines.push("<h3>" + (Number(column) + 1) + ". " + what + "</h3>");
    lines.push("<p>" + (c.kind === "made" ? "made in the conversation" : c.kind === "proposed" ? "proposed in the recorded turn (generation " + (c.attempt + 1) + ")" + (c.returned ? ", returned to the client" : "") : "answer in generation " + (c.attempt + 1)) +
      (c.outcome ? " · outcome: " + esc(c.outcome) : "") + ' · verdict <span class="badge ' + c.verdict + '" id="verdict">' + (c.refused ? "refused" : c.verdict) + "</span></p>");
    if (c.kind === "answer") lines.push("<pre>" + esc(c.content) + "</pre>");
    if (c.rules.length > 0) lines.push("<p>" + (c.kind === "answer" ? "Duties open" : "Breaks") + ":</p><ul>" + c.rules.map((rule) => "<li><b>" + esc(rule) + "</b>: " + esc(sentenceOf(rule)) + "</li>").join("") + "</ul>");
    if (c.warnings.length > 0) lines.push("<p>Warnings: " + c.warnings.map(esc).join(", ") + "</p>");
    if (c.failClosed) lines.push("<p>Failed closed: " + esc(c.failClosed) + "</p>");
    if (c.advice) lines.push("<p>Advice (" + esc(c.advice.kind) + "): <code>" + esc(callText(c.advice.call)) + "</code></p>");
    if (c.feedback) lines.push("<p>Feedback to the model:</p><pre>" + esc(c.feedback) + "</pre>");
    cells = view.rows.map((_, row) => view.cells[row][column]);
  }
  lines.push('<p>Every rule after it:</p><table id="after"><tr><th>rule (binding)</th><th>colour</th><th>state</th></tr>' +
    view.rows.map((row, index) => {
      const cell = cells[index];
      const link = row.kind === "rule" ? ' <a href="/dashboard/policy/' + encodeURIComponent(view.policy) + "/rule/" + encodeURIComponent(row.rule) + "?run=" + encodeURIComponent(view.run) + "&row=" + index + "&column=" + column + '">automaton</a>' : "";
      return "<tr><td>" + esc(row.key) + link + "</td><td>" + (cell ? esc(cell.colour) + (cell.broken ? " ✕" : "") : "–") + "</td><td>" + (cell ? cell.states.join(" or ") : "") + "</td></tr>";
    }).join("") + "</table>");
  details.innerHTML = lines.join("");
  history.replaceState(null, "", "#" + column);
}
document.getElementById("matrix").addEventListener("click", (event) => {
  const target = event.target.closest("[data-column]");
  if (target) select(target.dataset.column);
});
if (location.hash.length > 1) select(location.hash.slice(1));
`;

export function policiesPage(policies: readonly Policy[]): string {
  const rows = policies
    .map(
      (policy) =>
        `<tr><td><a href="/dashboard/policy/${encodeURIComponent(policy.name)}">${escapeHtml(policy.name)}</a></td><td>${escapeHtml(policy.description)}</td><td>${policy.rules.length}</td><td>${policy.constraints.length}</td><td><code>${escapeHtml(policy.file)}</code></td></tr>`,
    )
    .join("");
  return page(
    "Policies",
    policies.length === 0
      ? "<p>No policy loaded: start with <code>--policy FILE</code>.</p>"
      : `<table><tr><th>policy</th><th>description</th><th>rules</th><th>constraints</th><th>file</th></tr>${rows}</table>`,
  );
}

export function policyPage(policy: Policy, findings: readonly LintFinding[] | string): string {
  const manual = Object.entries(policy.manual)
    .map(([id, sentence]) => `<tr><td>${escapeHtml(id)}</td><td>${escapeHtml(sentence)}</td></tr>`)
    .join("");
  const rules = policy.rules
    .map(
      (rule) =>
        `<tr><td><a href="/dashboard/policy/${encodeURIComponent(policy.name)}/rule/${encodeURIComponent(rule.id)}">${escapeHtml(rule.id)}</a></td><td>${escapeHtml(rule.mode)}</td><td>${escapeHtml(rule.appliesTo)}</td><td><code>${escapeHtml(formatFormula(rule.formula))}</code></td><td>${rule.automaton.compile().stateCount}</td><td>${escapeHtml(rule.sentence)}</td></tr>`,
    )
    .join("");
  const constraints = policy.constraints
    .map(
      (constraint) =>
        `<tr><td>${escapeHtml(constraint.id)}</td><td>${escapeHtml(constraint.mode)}</td><td><code>${escapeHtml(constraint.on.key)}</code></td><td><code>${escapeHtml(constraint.requireText)}</code></td><td>${escapeHtml(constraint.sentence)}</td></tr>`,
    )
    .join("");
  const lint =
    typeof findings === "string"
      ? `<p class="problems">${escapeHtml(findings)}</p>`
      : findings.length === 0
        ? "<p>No findings.</p>"
        : `<table id="lint"><tr><th>severity</th><th>kind</th><th>rules</th><th>finding</th><th>counterexample</th></tr>${findings
            .map(
              (finding) =>
                `<tr><td><span class="badge ${finding.severity === "error" ? "error" : ""}">${finding.severity}</span></td><td>${finding.kind}</td><td>${escapeHtml(finding.rules.join(", "))}</td><td>${escapeHtml(finding.message)}</td><td>${finding.example ? `<code>${escapeHtml(finding.example.join(" ; "))}</code>` : ""}</td></tr>`,
            )
            .join("")}</table>`;
  const body = `<p>${escapeHtml(policy.description)} · <code>${escapeHtml(policy.file)}</code></p>
<h2>Manual</h2><table>${manual}</table>
<h2>Rules</h2><table id="rules"><tr><th>rule</th><th>mode</th><th>applies to</th><th>formula</th><th>states</th><th>sentence</th></tr>${rules}</table>
<h2>Argument constraints</h2>${constraints ? `<table><tr><th>constraint</th><th>mode</th><th>on</th><th>require</th><th>sentence</th></tr>${constraints}</table>` : "<p>None.</p>"}
<h2>Lint</h2>${lint}`;
  return page(`Policy ${policy.name}`, body);
}

export function rulePage(options: {
  policy: Policy;
  rule: RuleSpec;
  view: AutomatonView;
  svg: string | undefined;
  path: readonly number[];
  /** Where the path comes from: `P1 for route(…)` in run X, up to call N. */
  pathNote: string | undefined;
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
      ? `<div class="automaton" id="automaton">${options.svg}</div>`
      : `<p>${view.states.length} states: too many to draw; listed below.</p>`;
  const body = `<p>${escapeHtml(rule.sentence)}</p>
<p>Formula: <code>${escapeHtml(view.formula)}</code> · mode ${escapeHtml(rule.mode)} · applies to ${escapeHtml(rule.appliesTo)} · ${rule.entities.length > 0 ? `one instance per ${escapeHtml(rule.entities.join(", "))}` : "one instance"} · ${view.states.length} states over the policy's letters</p>
${options.pathNote ? `<p id="path">Path: ${escapeHtml(options.pathNote)}: states ${path.join(" → ")}</p>` : "<p>Open it from a run's matrix to see the run's path.</p>"}
${colourLegend()}
${drawing}
<h2>States</h2><table id="states"><tr><th>state</th><th>colour</th><th>accepting</th><th>residual formula</th></tr>${states}</table>`;
  return page(`Rule ${rule.id} of ${options.policy.name}`, body);
}

export function comparePage(
  files: readonly {
    file: string;
    results?: ChartResults & { meta?: Record<string, unknown> };
    error?: string;
  }[],
  chosen: number,
): string {
  if (files.length === 0)
    return page(
      "Compare",
      "<p>No results file: start with <code>--results FILE</code> (a benchmark's results.json).</p>",
    );
  const tabs = files
    .map((entry, index) =>
      index === chosen
        ? `<b>${escapeHtml(entry.file)}</b>`
        : `<a href="/dashboard/compare?file=${index}">${escapeHtml(entry.file)}</a>`,
    )
    .join(" · ");
  const entry = files[chosen];
  let body = `<p>${tabs}</p>`;
  if (!entry) body += '<p class="problems">no such file</p>';
  else if (entry.error !== undefined) body += `<p class="problems">${escapeHtml(entry.error)}</p>`;
  else if (entry.results) {
    const meta = entry.results.meta ?? {};
    body += `<p>Agent <b>${escapeHtml(String(meta.agent ?? "?"))}</b>, model <b>${escapeHtml(String(meta.model ?? "?"))}</b>, ${escapeHtml(String(meta.runs ?? "?"))} run(s) per task; command <code>${escapeHtml(String(meta.command ?? ""))}</code>. The same charts and tables as the benchmark's report.html.</p>`;
    const tables = benchmarkTables(entry.results);
    body += benchmarkSections(entry.results).join("\n");
    body += `<h2>Summary</h2>${tables.summary}<h2>Per task</h2>${tables.tasks}<p>Each cell: passing runs / runs · mean calls proposed · mean calls blocked; hover a cell for the first failure's reason.</p>`;
  }
  return page("Compare", body);
}
