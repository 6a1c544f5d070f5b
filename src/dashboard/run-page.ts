import type { Colour } from "../logic/index.js";
import { callText, colourFill, colourLegend, colourMeaning, embeddedJson, escapeHtml, page } from "./html.js";
import { countsOf, type FlightRecord, outcomesOf } from "./records.js";
import type { MatrixColumn, RunRequest, RunView } from "./run-view.js";

/** What a request ended with: the calls returned, the answer, or the error. */
export function endText(record: FlightRecord): string {
  if (record.status !== 200) return `${record.status} ${record.error?.code ?? ""}`;
  const message = record.returned?.message;
  const calls = (message?.tool_calls ?? []) as { function?: { name?: string; arguments?: string } }[];
  if (calls.length > 0)
    return calls.map((call) => `${call.function?.name}(${call.function?.arguments ?? ""})`).join("; ");
  const content = message?.content ?? "";
  return content.length > 80 ? `“${content.slice(0, 79)}…”` : `“${content}”`;
}

/** A run's blocked calls, calls made although they broke a block rule ("broke"), and stops. */
export function countsText(records: readonly FlightRecord[]): string {
  const counts = countsOf(records);
  return `${counts.blocked} blocked · ${counts.broke} broke · ${counts.stopped} stopped`;
}

export function outcomeBadges(records: FlightRecord | readonly FlightRecord[]): string {
  return outcomesOf(records)
    .map((outcome) => `<span class="badge ${outcome}">${outcome}</span>`)
    .join("");
}

/** How a person takes a stopped run or a held call back (docs/policy.md, "Severities"). */
const resumeText =
  'a person resumes it with a user message carrying <code>"mentor": {"resume": true}</code>; until then every call is refused (action stop) and the run may not end';

/** What a column is: `block`, `stop`, `ask`, `retry`, `refused`, `made, broke P1, P5`, `warn`, `allow`. */
export function columnVerdict(column: MatrixColumn): string {
  if (column.refused) return "refused";
  if (column.broke) return `${column.kind === "made" ? "made" : "returned"}, broke ${brokenNames(column)}`;
  if (column.verdict === "block") return column.action === "block" ? "block" : column.action;
  return column.warnings.length > 0 ? "warn" : "allow";
}

/** The rules a made call broke: the block rules, then those it was allowed with a warning. */
function brokenNames(column: { rules: readonly string[]; warnings: readonly string[] }): string {
  return [...column.rules, ...column.warnings].join(", ") || "an ask rule (a person approved it)";
}

function columnClass(column: MatrixColumn): string {
  if (column.broke) return "broke";
  if (column.action === "stop") return "stopped";
  if (column.action === "ask") return "asked";
  return column.verdict === "block" ? "blocked" : "";
}

function stopText(stop: NonNullable<RunView["stopped"]>): string {
  const by = stop.rules.length > 0 ? ` by ${stop.rules.map(escapeHtml).join(", ")}` : "";
  const call = stop.call ? ` at <code>${escapeHtml(callText(stop.call))}</code>` : "";
  return `The run is stopped${by}${call}: ${resumeText}.`;
}

function requestNote(request: RunRequest, view: RunView, record: FlightRecord | undefined): string {
  const parts: string[] = [];
  if (record && !request.error)
    parts.push(
      `${outcomeBadges(record)} <span class="clip" style="max-width:420px" title="${escapeHtml(endText(record))}">${escapeHtml(endText(record))}</span>`,
    );
  if (request.error)
    parts.push(
      `<span class="problems">${escapeHtml(request.error.code ?? "")}: ${escapeHtml(request.error.message ?? "")}</span>`,
    );
  if (request.stopped) parts.push(`<span class="stop-note">${stopText(request.stopped)}</span>`);
  if (request.unsafe) {
    const tools = request.unsafe.map((tool) => {
      const calls = tool.calls.map((entry) => {
        const why =
          entry.rules.length > 0
            ? `breaks ${entry.rules.map((rule) => `<b>${escapeHtml(rule)}</b>: ${escapeHtml(sentenceOf(view, rule))}`).join("; ")}`
            : "breaks no rule now, but every way on from it breaks one (the game)";
        return `<li><code>${escapeHtml(callText(entry.call))}</code> ${why}</li>`;
      });
      return `<li><b>${escapeHtml(tool.tool)}</b> is unsafe:<ul>${calls.join("")}</ul></li>`;
    });
    parts.push(
      `<div class="unsafe">Nothing the request allowed was safe. ${tools.length > 0 ? `<ul>${tools.join("")}</ul>` : "The policy counts none of its tools unsafe: the request's tool_choice or tools left nothing (see the message)."}</div>`,
    );
  }
  return parts.join("<br>");
}

function sentenceOf(view: RunView, rule: string): string {
  return view.rows.find((row) => row.rule === rule)?.sentence ?? "";
}

/**
 * A run's page: the requests of its conversation as one timeline (`RunView`), the page's own
 * request marked, links to the request before and after it.
 */
export function runPage(options: {
  record: FlightRecord;
  /** The conversation's requests, first to last (the record among them). */
  conversation: readonly FlightRecord[];
  view: RunView | undefined;
  why: string | undefined;
  /**
   * A results.json run (`benchRunId`): its id in the links to its rules, and no pages of its own
   * per request, no live reload. Default: the record's id, a flight record's run.
   */
  runId?: string;
  /** A paragraph above the run (a results.json run: its task, condition and score). */
  intro?: string;
}): string {
  const { record, conversation, view } = options;
  const position = conversation.findIndex((one) => one.id === record.id);
  const runId = options.runId ?? record.id;
  const requestLink = (id: string, text: string, attributes = "") =>
    options.runId === undefined
      ? `<a href="/dashboard/run/${encodeURIComponent(id)}"${attributes}>${escapeHtml(text)}</a>`
      : escapeHtml(text);
  const link = (one: FlightRecord | undefined, text: string) =>
    one && options.runId === undefined ? requestLink(one.id, text, ` id="${text}"`) : "";
  const parts: string[] = options.intro !== undefined ? [options.intro] : [];
  parts.push(
    `<p>Request ${position + 1} of ${conversation.length} of this run ${link(conversation[position - 1], "previous")} ${link(conversation[position + 1], "next")} · ${escapeHtml(record.time)} · policy <b>${escapeHtml(record.policy ?? "none")}</b> · mode <b>${escapeHtml(record.mode ?? "–")}</b> · status ${record.status} ${outcomeBadges(record)} · ended with <code>${escapeHtml(endText(record))}</code></p>`,
    `<p id="run-counts">The whole run: ${outcomeBadges(conversation)} ${countsText(conversation)}</p>`,
  );
  if (!view) {
    if (record.error)
      parts.push(
        `<p class="problems">${escapeHtml(record.error.code ?? "")}: ${escapeHtml(record.error.message ?? "")}</p>`,
      );
    parts.push(`<p class="problems">${escapeHtml(options.why ?? "no view")}</p>`);
    return page(`Run ${record.id}`, parts.join("\n"));
  }
  for (const note of view.notes) parts.push(`<p class="problems">${escapeHtml(note)}</p>`);
  if (view.stopped) parts.push(`<p class="stop" id="stopped">${stopText(view.stopped)}</p>`);
  parts.push(
    `<h2>Requests</h2><table id="requests"><tr><th>#</th><th>request</th><th>mode</th><th>status</th><th>calls</th><th>what happened</th></tr>${view.requests
      .map((request, index) => {
        const own = request.id === record.id ? ' class="current"' : "";
        const range = request.to > request.from ? `${request.from + 1}–${request.to}` : "–";
        return `<tr${own} data-request="${index}"><td>${index + 1}</td><td>${requestLink(request.id, request.id)}</td><td>${escapeHtml(request.mode ?? "–")}</td><td>${request.status}</td><td>${range}</td><td>${requestNote(request, view, conversation[index])}</td></tr>`;
      })
      .join("")}</table>`,
  );
  parts.push(
    `<h2>Rules × calls</h2><p><a id="rulebook" href="/dashboard/policy/${encodeURIComponent(view.policy)}/automata?run=${encodeURIComponent(runId)}">Every rule's automaton in this run</a> (each instance's path and current state).</p>`,
    colourLegend(),
  );
  parts.push(
    "<p>Columns: the calls in order, by the request that proposed them; blue-topped: proposed, not made (on red: blocked); dark red: made although it broke a rule; black: stopped the run; violet: held for a person. Cells: the rule's colour after the call, per binding. Click a call or a cell.</p>",
  );
  parts.push(
    `<div class="run-grid"><div class="frame" id="frame">${matrixTable(runId, view)}</div><div id="details"><p>Click a call to see its verdict, the rules it breaks and every rule after it.</p></div></div>`,
  );
  parts.push("<h2>Grounding</h2>");
  parts.push(
    view.task.length > 0
      ? `<p>Task: ${view.task.map((call) => `<code>${escapeHtml(callText(call))}</code>`).join(" ")}</p>`
      : "<p>Task: none grounded.</p>",
  );
  if (view.grounding.length > 0)
    parts.push(
      `<details><summary>${view.grounding.length} grounding note(s)</summary><table id="grounding"><tr><th>message</th><th>kind</th><th>source</th><th>grounded as</th></tr>${view.grounding
        .map(
          (note) =>
            `<tr><td>${note.message}</td><td>${note.kind}</td><td>${note.source}</td><td>${note.error !== undefined ? `<span class="problems">${escapeHtml(note.error)}</span>` : `<code>${escapeHtml(JSON.stringify(note.value))}</code>`}</td></tr>`,
        )
        .join("")}</table></details>`,
    );
  parts.push("<h2>Open duties at the end</h2>");
  const waiting = view.stopped ? "<p>They wait for the run to be resumed.</p>" : "";
  parts.push(
    view.openDuties.length === 0
      ? `<p id="duties">None: ${view.stopped ? "but the run is stopped (see above)" : "the run may end here"}.</p>`
      : `${waiting}<ul id="duties">${view.openDuties
          .map(
            (duty) =>
              `<li><b>${escapeHtml(duty.rule)}</b>${duty.binding ? ` (${escapeHtml(duty.binding)})` : ""}: ${escapeHtml(duty.sentence)}${duty.fulfil ? ` — next${view.stopped ? " once resumed" : ""}: <code>${escapeHtml(callText(duty.fulfil))}</code>` : ""}</li>`,
          )
          .join("")}</ul>`,
  );
  parts.push(
    `<script type="application/json" id="view">${embeddedJson({ run: runId, live: options.runId === undefined, requestIds: conversation.map((one) => one.id), ...view })}</script>`,
  );
  return page(`Run ${record.id}`, parts.join("\n"), runScript);
}

function matrixTable(runId: string, view: RunView): string {
  const firstOf = new Set(view.requests.filter((one) => one.to > one.from).map((one) => one.from));
  const requestRow = view.requests
    .filter((one) => one.to > one.from)
    .map(
      (one) =>
        `<th class="request" colspan="${one.to - one.from}" title="${escapeHtml(one.id)}">request ${view.requests.indexOf(one) + 1}</th>`,
    )
    .join("");
  const header = view.columns
    .map((column, index) => {
      const call = column.call as { name: string; arguments: Record<string, unknown> };
      const verdict = columnVerdict(column);
      const label = column.kind === "answer" ? `answer${column.refused ? " (refused)" : ""}` : callText(call);
      // The header names the call and its values; the whole call and its verdict are the tooltip.
      const short =
        column.kind === "answer"
          ? label
          : `${call.name}(${Object.values(call.arguments)
              .map((value) => (typeof value === "string" ? value : JSON.stringify(value)))
              .join(", ")})`;
      const classes = ["column", column.kind, columnClass(column), firstOf.has(index) ? "first" : ""].join(
        " ",
      );
      const mark = verdict === "allow" ? "" : `[${verdict}] `;
      return `<th class="${classes}" data-column="${index}" title="${escapeHtml(`${index + 1}. ${label} — ${verdict}, request ${column.request + 1}`)}">${index + 1}. ${escapeHtml(mark)}${escapeHtml(short.length > 30 ? `${short.slice(0, 29)}…` : short)}</th>`;
    })
    .join("");
  const cellHtml = (cell: RunView["start"][number], row: number, column: number | "start") => {
    const first = typeof column === "number" && firstOf.has(column) ? " first" : "";
    if (!cell) return `<td class="cell none${first}" data-row="${row}" data-column="${column}"></td>`;
    const rearmed = cell.rearmed
      ? `; broken by call ${cell.rearmed.by + 1}, then re-armed by the monitor to judge later calls: now ${cell.rearmed.now} (${colourMeaning[cell.rearmed.now]})`
      : "";
    const title = `${view.rows[row]?.key}: ${cell.colour} (${colourMeaning[cell.colour as Colour]})${cell.broken ? ", broken by this call" : ""}${rearmed}, state ${cell.states.join(" or ")}`;
    return `<td class="cell ${cell.colour}${cell.broken ? " broken" : ""}${cell.rearmed ? " rearmed" : ""}${first}" style="background:${colourFill[cell.colour]}" data-row="${row}" data-column="${column}" title="${escapeHtml(title)}">${cell.broken ? "✕" : cell.rearmed ? "↺" : ""}</td>`;
  };
  const body = view.rows
    .map((row, rowIndex) => {
      const name =
        row.kind === "rule"
          ? `<a href="/dashboard/policy/${encodeURIComponent(view.policy)}/rule/${encodeURIComponent(row.rule)}?run=${encodeURIComponent(runId)}&row=${rowIndex}">${escapeHtml(row.key)}</a>`
          : `${escapeHtml(row.key)} (constraint)`;
      return `<tr><td class="row" title="${escapeHtml(`${row.key}: ${row.sentence}`)}">${name} <span class="badge">${escapeHtml(row.severity)}</span></td>${cellHtml(view.start[rowIndex] ?? null, rowIndex, "start")}${view.columns.map((_, column) => cellHtml(view.cells[rowIndex]?.[column] ?? null, rowIndex, column)).join("")}</tr>`;
    })
    .join("\n");
  return `<table class="matrix" id="matrix"><thead><tr><th></th><th></th>${requestRow}</tr><tr><th>rule (binding)</th><th class="column" data-column="start">start</th>${header}</tr></thead><tbody>${body}</tbody></table>`;
}

/**
 * The run page's behaviour: selecting a call shows it and every rule's colour after it (beside the
 * matrix); the page reloads when its conversation gets a new request.
 */
const runScript = `
const view = JSON.parse(document.getElementById("view").textContent);
const esc = (text) => String(text).replace(/[&<>"]/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"})[c]);
const callText = (call) => call.name + "(" + Object.entries(call.arguments).map(([k, v]) => k + "=" + JSON.stringify(v)).join(", ") + ")";
const resume = ${JSON.stringify(resumeText)};
const brokenNames = ${brokenNames.toString()};
function verdictOf(c) {
  if (c.refused) return "refused";
  if (c.broke) return (c.kind === "made" ? "made" : "returned") + ", broke " + brokenNames(c);
  if (c.verdict === "block") return c.action === "block" ? "block" : c.action;
  return c.warnings.length > 0 ? "warn" : "allow";
}
function why(c, request) {
  if (c.broke) return "<p>Made although it breaks " + (request.mode === "none" ? "a block rule: the request had no shield (mode none)" : c.verdict === "allow" && c.warnings.length > 0 ? "a rule: allowed with a warning (a warn rule, or an override rule the model overrode by proposing the call again)" : "a block rule: an override or a person's approval let it through") + ".</p>";
  if (c.action === "stop") return '<p class="stop">A stop rule refused it and stopped the run: ' + resume + ".</p>";
  if (c.action === "ask") return "<p>Held for a person (severity ask): the server answered 409 MNT_ERR_APPROVAL_REQUIRED; a person approves it with a user message carrying <code>\\"mentor\\": {\\"approve\\": " + esc(JSON.stringify(c.call)) + "}</code>, or answers in an ordinary message.</p>";
  if (c.action === "retry") return "<p>Refused; the agent may try again before the rule escalates (severity escalate).</p>";
  if (c.verdict === "allow" && c.warnings.length > 0) return "<p>Allowed with a warning (a warn rule, or an override of a block rule).</p>";
  return "";
}
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
    const request = view.requests[c.request];
    const what = c.kind === "answer" ? "an answer without a call" : "<code>" + esc(callText(c.call)) + "</code>";
    lines.push("<h3>" + (Number(column) + 1) + ". " + what + "</h3>");
    const where = c.kind === "made" ? "made in the conversation" : c.kind === "proposed" ? "proposed in generation " + (c.attempt + 1) + (c.returned ? ", returned to the client" : "") : "answer in generation " + (c.attempt + 1);
    lines.push("<p>Request " + (c.request + 1) + " of " + view.requests.length + " · " + where +
      (c.outcome ? " · outcome: " + esc(c.outcome) : "") + ' · verdict <span class="badge ' + (c.broke ? "broke" : c.action) + '" id="verdict">' + esc(verdictOf(c)) + "</span></p>");
    lines.push(why(c, request));
    if (c.kind === "answer") lines.push("<pre>" + esc(c.content) + "</pre>");
    if (c.rules.length > 0) lines.push("<p>" + (c.kind === "answer" ? "Duties open" : "Breaks") + ':</p><ul id="breaks">' + c.rules.map((rule) => "<li><b>" + esc(rule) + "</b>: " + esc(sentenceOf(rule)) + "</li>").join("") + "</ul>");
    if (c.warnings.length > 0) lines.push("<p>Warnings: " + c.warnings.map(esc).join(", ") + "</p>");
    if (c.failClosed) lines.push("<p>Failed closed: " + esc(c.failClosed) + "</p>");
    if (c.advice) lines.push('<p id="advice">Advice' + (c.action === "stop" ? " once resumed" : "") + " (" + esc(c.advice.kind) + "): <code>" + esc(callText(c.advice.call)) + "</code></p>");
    if (c.feedback) lines.push("<p>Feedback to the model:</p><pre>" + esc(c.feedback) + "</pre>");
    cells = view.rows.map((_, row) => view.cells[row][column]);
  }
  lines.push('<p>Every rule after it:</p><table id="after"><tr><th>rule (binding)</th><th>colour</th><th>state</th></tr>' +
    view.rows.map((row, index) => {
      const cell = cells[index];
      const link = row.kind === "rule" ? ' <a href="/dashboard/policy/' + encodeURIComponent(view.policy) + "/rule/" + encodeURIComponent(row.rule) + "?run=" + encodeURIComponent(view.run) + "&row=" + index + "&column=" + column + '">automaton</a>' : "";
      const colour = cell ? esc(cell.colour) + (cell.broken ? " ✕" : "") + (cell.rearmed ? " (broken by call " + (cell.rearmed.by + 1) + ", re-armed: " + cell.rearmed.now + ")" : "") : "–";
      return '<tr><td><span class="clip" title="' + esc(row.key) + '">' + esc(row.key) + "</span>" + link + "</td><td>" + colour + "</td><td>" + (cell ? cell.states.join(" or ") : "") + "</td></tr>";
    }).join("") + "</table>");
  details.innerHTML = lines.join("");
  history.replaceState(null, "", "#" + column);
}
document.getElementById("matrix").addEventListener("click", (event) => {
  const target = event.target.closest("[data-column]");
  if (target) select(target.dataset.column);
});
if (location.hash.length > 1) select(location.hash.slice(1));
// Live: a new request of this conversation reloads the page (the selected call is kept in the address).
if (view.live) new EventSource("/dashboard/events").addEventListener("records", async () => {
  const response = await fetch("/dashboard/api/conversation/" + encodeURIComponent(view.run));
  if (!response.ok) return;
  const { requests } = await response.json();
  if (requests.length !== view.requestIds.length) location.reload();
});
`;
