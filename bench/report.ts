import {
  barChart,
  benchmarkSections,
  type Estimate,
  escapeHtml,
  formatNumber,
  multiPanelChart,
  type Series,
} from "../src/dashboard/charts.js";
import type { AgentRun } from "./agent.js";
import type { ConditionSummary, RunFigures } from "./metrics.js";

// The charts are drawn by the dashboard's code (its Compare page shows the same charts).
export { barChart, formatNumber, multiPanelChart, type Series };

/** One run of one task under one condition, as results.json keeps it (the trace, not the calls). */
export interface RunRecord extends RunFigures, Omit<AgentRun, "calls"> {
  run: number;
  seed: number;
  unsolvableReason?: string;
  /** The evaluator's reasons for a failure. */
  reasons: string[];
  secondsPerCall: number;
  /** The request failed (server error, network): the run counts as failed. */
  error?: string;
}

export interface BenchResults {
  meta: {
    command: string;
    started: string;
    finished: string;
    agent: string;
    model: string;
    server?: string;
    domains: string[];
    conditions: string[];
    runs: number;
    seed: number;
    temperature: number;
    grounding: string;
    maxTokens: number;
    /** Token shield boost sent (`mentor.eta`); absent: the server's default. */
    eta?: number;
    /** False when the token shield's intent-keeping redirects were off. */
    intent?: boolean;
    /** The commit that ran (`+dirty`: with uncommitted changes); shards may list several. */
    build?: string;
    dataDir: string;
  };
  summary: ConditionSummary[];
  runs: RunRecord[];
}

/** The self-contained HTML report: a section of charts per domain, the summary table, the per-task table. */
export function renderReport(results: BenchResults): string {
  const { meta, summary, runs } = results;
  const domains = [...new Set(summary.map((row) => row.domain))];
  const conditions = [...new Set(summary.map((row) => row.condition))];
  const sections = benchmarkSections(results);
  const summaryRows = summary.map(
    (row) =>
      `<tr><td>${escapeHtml(row.domain)}</td><td>${escapeHtml(row.condition)}</td><td>${row.tasks}</td><td>${row.runs}</td><td>${estimateText(row.passAt1)}</td><td>${estimateText(row.passAtK)}</td><td>${estimateText(row.passHatK)}</td><td>${estimateText(row.proposedPerTask)}</td><td>${estimateText(row.blockedPerTask)}</td><td>${estimateText(row.repairedPerTask)}</td><td>${formatNumber(row.secondsPerCall)}</td><td>${formatNumber(row.overheadPerCall)}</td><td>${formatNumber(row.shieldSecondsPerCall)}</td></tr>`,
  );
  const taskRows: string[] = [];
  const taskKeys = [...new Set(runs.map((run) => `${run.domain}\u0000${run.task}`))];
  for (const key of taskKeys) {
    const [domain, task] = key.split("\u0000") as [string, string];
    const ofTask = runs.filter((run) => run.domain === domain && run.task === task);
    const first = ofTask[0] as RunRecord;
    const cells = conditions.map((condition) => {
      const group = ofTask.filter((run) => run.condition === condition);
      if (group.length === 0) return "<td>–</td>";
      const passes = group.filter((run) => run.pass).length;
      const proposed = group.reduce((sum, run) => sum + run.proposed, 0) / group.length;
      const blocked = group.reduce((sum, run) => sum + run.blocked, 0) / group.length;
      const failure = group.find((run) => !run.pass);
      const why = failure ? (failure.error ?? failure.reasons[0] ?? "") : "";
      const css = passes === group.length ? "pass" : passes === 0 ? "fail" : "mixed";
      return `<td class="${css}" title="${escapeHtml(why)}">${passes}/${group.length} · ${formatNumber(proposed)} calls · ${formatNumber(blocked)} blocked</td>`;
    });
    const note = first.solvable
      ? ""
      : ` <em>(not scored: ${escapeHtml(first.unsolvableReason ?? "not solvable")})</em>`;
    taskRows.push(
      `<tr><td>${escapeHtml(domain)}</td><td>${escapeHtml(task)}${note}</td>${cells.join("")}</tr>`,
    );
  }
  const contents = domains
    .map((domain, index) => `<a href="#domain-${index}">${escapeHtml(domain)}</a>`)
    .concat(['<a href="#summary">summary table</a>', '<a href="#tasks">per-task table</a>']);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mentor benchmark: ${escapeHtml(meta.model)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1240px}
table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}
td.pass{background:#e6ffed}td.fail{background:#ffeef0}td.mixed{background:#fff8e1}
code{background:#f3f3f3;padding:1px 4px}
section.domain{border-top:2px solid #ddd;margin-top:1.5em}
.row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
svg{display:block;margin:8px 0}
</style></head><body>
<h1>mentor benchmark</h1>
<p>Agent <b>${escapeHtml(meta.agent)}</b>, model <b>${escapeHtml(meta.model)}</b>${meta.server ? ` via ${escapeHtml(meta.server)}` : ""}; ${meta.runs} run(s) per task, seed ${meta.seed}, temperature ${meta.temperature}, at most ${meta.maxTokens} tokens per generation, grounding by ${escapeHtml(meta.grounding)}${meta.eta !== undefined ? `, η ${meta.eta}` : ""}${meta.intent === false ? ", intent-keeping redirects off" : ""}${meta.build ? `, build ${escapeHtml(meta.build)}` : ""}; ${escapeHtml(meta.started)} – ${escapeHtml(meta.finished)}.</p>
<p>Command: <code>${escapeHtml(meta.command)}</code></p>
<p>Contents: ${contents.join(" · ")}. Each condition keeps its colour in every chart; hover a bar for its value.</p>
${sections.join("\n")}
<h2>Summary</h2>
<table id="summary"><tr><th>domain</th><th>condition</th><th>tasks</th><th>runs</th><th>Pass@1</th><th>Pass@k</th><th>Pass^k</th><th>calls/task</th><th>blocked/task</th><th>repaired/task</th><th>s/call</th><th>overhead s/call</th><th>shield s/call</th></tr>
${summaryRows.join("\n")}
</table>
<p>Pass estimates are unbiased over n runs per task (Pass^k = C(c,k)/C(n,k), Pass@k = 1 − C(n−c,k)/C(n,k)), averaged over the solvable tasks, ± one standard error over tasks. Overhead = s/call minus that of condition <code>none</code> of the same domain. In the per-task charts, <code>done</code> refusals are answers without a tool call that the shield refused while duties were open.</p>
<h2>Per task</h2>
<table id="tasks"><tr><th>domain</th><th>task</th>${conditions.map((condition) => `<th>${escapeHtml(condition)}</th>`).join("")}</tr>
${taskRows.join("\n")}
</table>
<p>Each cell: passing runs / runs · mean calls proposed · mean calls blocked; hover a cell for the first failure's reason. The traces are in results.json.</p>
</body></html>
`;
}

function estimateText(estimate: Estimate): string {
  if (!Number.isFinite(estimate.mean)) return "–";
  return `${formatNumber(estimate.mean)} ± ${formatNumber(estimate.standardError)}`;
}
