import type { LintFinding } from "../game/index.js";
import { formatFormula } from "../logic/index.js";
import type { Policy } from "../policy/index.js";
import { benchRunId } from "./bench-runs.js";
import { benchmarkSections, benchmarkTables, type ChartResults } from "./charts.js";
import { escapeHtml, page } from "./html.js";
import {
  type ConversationPlace,
  type FlightRecord,
  type Outcome,
  outcomeNames,
  outcomesOf,
  type StoredRecord,
} from "./records.js";
import { countsText, endText, outcomeBadges } from "./run-page.js";

export interface RunFilter {
  policy?: string;
  mode?: string;
  outcome?: Outcome;
  /** Only the last request of each conversation (it shows the whole run). */
  latest?: boolean;
}

/** With `latest`, the outcome is the whole run's (`conversation`: its requests). */
export function matchesFilter(
  record: FlightRecord,
  filter: RunFilter,
  place: ConversationPlace | undefined,
  conversation: readonly FlightRecord[],
): boolean {
  if (filter.latest && place && place.latest !== record.id) return false;
  if (filter.policy && (record.policy ?? "") !== filter.policy) return false;
  if (filter.mode && record.mode !== filter.mode) return false;
  if (filter.outcome && !outcomesOf(filter.latest ? conversation : record).includes(filter.outcome))
    return false;
  return true;
}

/** The rows of the Runs table (also sent alone when the page refreshes itself). */
export function runRows(
  records: readonly StoredRecord[],
  places: ReadonlyMap<string, ConversationPlace>,
  conversationOf: (id: string) => readonly FlightRecord[],
): string {
  if (records.length === 0) return `<tr><td colspan="10">no records</td></tr>`;
  return records
    .map(({ record }) => {
      const mentor = record.mentor;
      const place = places.get(record.id);
      const run = conversationOf(record.id);
      const conversation = place
        ? `<td class="conversation">${place.position} of ${place.count}${place.latest !== record.id ? ` · <a href="/dashboard/run/${encodeURIComponent(place.latest)}">latest</a>` : ""}</td>`
        : "<td></td>";
      const ended = endText(record);
      return `<tr class="run" data-id="${escapeHtml(record.id)}"><td title="${escapeHtml(record.time)}">${escapeHtml(record.time.replace("T", " ").slice(5, 19))}</td><td title="${escapeHtml(record.id)}"><a href="/dashboard/run/${encodeURIComponent(record.id)}">${escapeHtml(record.id)}</a></td>${conversation}<td>${escapeHtml(record.policy ?? "–")}</td><td>${escapeHtml(record.mode ?? "–")}</td><td>${outcomeBadges(record)}</td><td>${mentor?.attempts.length ?? 0} · ${mentor?.blocked ?? 0}</td><td class="run-counts" title="${escapeHtml(countsText(run))}">${countsText(run)}</td><td title="${escapeHtml(ended)}">${escapeHtml(ended)}</td><td>${record.ms !== undefined ? Math.round(record.ms) : "–"}</td></tr>`;
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
  conversationOf: (id: string) => readonly FlightRecord[];
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
<form method="get" action="/dashboard/">${select("policy", options.policies, filter.policy)} ${select("mode", ["none", "prompt", "token"], filter.mode)} ${select("outcome", outcomeNames, filter.outcome)} <label><input type="checkbox" name="latest" value="1"${filter.latest ? " checked" : ""}> latest request of each conversation</label> <button>filter</button></form>
${problems}
<table id="runs"><colgroup><col style="width:10%"><col style="width:14%"><col style="width:8%"><col style="width:7%"><col style="width:6%"><col style="width:10%"><col style="width:6%"><col style="width:19%"><col style="width:15%"><col style="width:5%"></colgroup><thead><tr><th>time</th><th>request</th><th>conversation</th><th>policy</th><th>mode</th><th>outcome</th><th title="generations · calls blocked in this request">gen. · blocked</th><th title="calls blocked · calls made although they broke a rule (no shield, a warn rule, an override, an approval) · stops">the whole run</th><th>ended with</th><th>ms</th></tr></thead>
<tbody>${runRows(options.records, options.places, options.conversationOf)}</tbody></table>
<p>A conversation is the requests of one agent run: each continues the one before (its messages, then the answer it got). Every request's page shows the whole run, request by request; "the whole run" counts its blocked calls, the calls made although they broke a rule (no shield, a warn rule, an override, a person's approval), and its stops. With "latest request of each conversation", the outcome filter looks at the whole run.</p>`;
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

type CompareEntry = {
  file: string;
  results?: ChartResults & { meta?: Record<string, unknown> };
  error?: string;
};

/**
 * A results.json as its report.html shows it; with `against`, two side by side (their summary
 * and per-task tables: two shards, two models, two builds).
 */
export function comparePage(files: readonly CompareEntry[], chosen: number, against?: number): string {
  const tablesOf = (index: number, results: ChartResults) =>
    benchmarkTables(results, (run) => `/dashboard/${benchRunId(index, run)}`);
  if (files.length === 0)
    return page(
      "Compare",
      "<p>No results file: start with <code>--results FILE</code> (a benchmark's results.json).</p>",
    );
  const tabs = files
    .map((entry, index) => {
      const name =
        index === chosen
          ? `<b>${escapeHtml(entry.file)}</b>`
          : `<a href="/dashboard/compare?file=${index}">${escapeHtml(entry.file)}</a>`;
      const beside =
        index === chosen || index === against
          ? ""
          : ` (<a href="/dashboard/compare?file=${chosen}&amp;with=${index}" class="beside">beside it</a>)`;
      return `${name}${beside}`;
    })
    .join(" · ");
  const intro = (entry: CompareEntry, results: ChartResults & { meta?: Record<string, unknown> }) => {
    const meta = results.meta ?? {};
    return `<p><code>${escapeHtml(entry.file)}</code>: agent <b>${escapeHtml(String(meta.agent ?? "?"))}</b>, model <b>${escapeHtml(String(meta.model ?? "?"))}</b>, ${escapeHtml(String(meta.runs ?? "?"))} run(s) per task; command <code>${escapeHtml(String(meta.command ?? ""))}</code>.</p>`;
  };
  const problem = (entry: CompareEntry | undefined) =>
    !entry
      ? '<p class="problems">no such file</p>'
      : entry.error !== undefined
        ? `<p class="problems">${escapeHtml(entry.error)}</p>`
        : undefined;
  const legend =
    "<p>Each cell: passing runs / runs · mean calls proposed · mean calls blocked · mean calls that broke a block rule · each run, linked to its rules × calls view (green: passed); hover a cell for the first failure's reason.</p>";
  let body = `<p>${tabs}</p>`;
  const entry = files[chosen];
  if (against !== undefined) {
    const halves = [chosen, against].map((index) => {
      const one = files[index];
      const wrong = problem(one);
      if (wrong || !one?.results) return `<div class="half">${wrong ?? ""}</div>`;
      const tables = tablesOf(index, one.results);
      return `<div class="half">${intro(one, one.results)}<h2>Summary</h2><div class="frame">${tables.summary}</div><h2>Per task</h2><div class="frame">${tables.tasks}</div></div>`;
    });
    body += `<div class="side-by-side" id="side-by-side">${halves.join("")}</div>${legend}`;
  } else {
    const wrong = problem(entry);
    if (wrong) body += wrong;
    else if (entry?.results) {
      const tables = tablesOf(chosen, entry.results);
      body += `${intro(entry, entry.results)}<p>The same charts and tables as the benchmark's report.html.</p>`;
      body += benchmarkSections(entry.results).join("\n");
      body += `<h2>Summary</h2>${tables.summary}<h2>Per task</h2>${tables.tasks}${legend}`;
    }
  }
  return page("Compare", body);
}
