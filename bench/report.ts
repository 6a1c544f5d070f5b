import type { AgentRun } from "./agent.js";
import type { ConditionSummary, Estimate, RunFigures } from "./metrics.js";

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
    dataDir: string;
  };
  summary: ConditionSummary[];
  runs: RunRecord[];
}

const palette = ["#7a7a7a", "#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b7791f"];

interface Series {
  name: string;
  values: (Estimate | number)[];
}

/** A grouped bar chart as inline SVG: one group per label, one bar per series, ±1 SE whiskers. */
export function barChart(options: {
  title: string;
  unit: string;
  groups: string[];
  series: Series[];
  max?: number;
}): string {
  const { title, unit, groups, series } = options;
  const width = 640;
  const height = 260;
  const left = 56;
  const bottom = 40;
  const top = 28;
  const plotHeight = height - top - bottom;
  const numbers = series.flatMap((one) =>
    one.values.map((value) => (typeof value === "number" ? value : value.mean + (value.standardError || 0))),
  );
  const finite = numbers.filter((value) => Number.isFinite(value));
  const max = options.max ?? Math.max(1e-9, ...finite) * 1.1;
  const groupWidth = (width - left - 10) / Math.max(1, groups.length);
  const barWidth = (groupWidth * 0.8) / Math.max(1, series.length);
  const y = (value: number) => top + plotHeight - (Math.max(0, value) / max) * plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + 18 * series.length}" role="img" aria-label="${escapeHtml(title)}">`,
    `<text x="${left}" y="16" font-weight="bold">${escapeHtml(title)}</text>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}" stroke="#333"/>`,
    `<line x1="${left}" y1="${top + plotHeight}" x2="${width - 10}" y2="${top + plotHeight}" stroke="#333"/>`,
  ];
  for (const tick of [0, 0.5, 1]) {
    const value = tick * max;
    parts.push(
      `<text x="${left - 4}" y="${y(value) + 4}" text-anchor="end" font-size="11">${formatNumber(value)}${tick === 1 ? ` ${escapeHtml(unit)}` : ""}</text>`,
    );
  }
  groups.forEach((group, groupIndex) => {
    const x0 = left + groupIndex * groupWidth + groupWidth * 0.1;
    parts.push(
      `<text x="${x0 + groupWidth * 0.4}" y="${top + plotHeight + 16}" text-anchor="middle" font-size="12">${escapeHtml(group)}</text>`,
    );
    series.forEach((one, seriesIndex) => {
      const value = one.values[groupIndex];
      if (value === undefined) return;
      const mean = typeof value === "number" ? value : value.mean;
      if (!Number.isFinite(mean)) return;
      const x = x0 + seriesIndex * barWidth;
      const color = palette[seriesIndex % palette.length];
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(mean).toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${(top + plotHeight - y(mean)).toFixed(1)}" fill="${color}"><title>${escapeHtml(`${group} ${one.name}: ${formatNumber(mean)}`)}</title></rect>`,
      );
      if (typeof value !== "number" && value.standardError > 0) {
        const middle = x + (barWidth - 2) / 2;
        parts.push(
          `<line x1="${middle.toFixed(1)}" x2="${middle.toFixed(1)}" y1="${y(mean + value.standardError).toFixed(1)}" y2="${y(mean - value.standardError).toFixed(1)}" stroke="#000"/>`,
        );
      }
    });
  });
  series.forEach((one, seriesIndex) => {
    const legendY = height + 18 * seriesIndex;
    parts.push(
      `<rect x="${left}" y="${legendY - 10}" width="12" height="12" fill="${palette[seriesIndex % palette.length]}"/>`,
      `<text x="${left + 18}" y="${legendY}" font-size="12">${escapeHtml(one.name)}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n");
}

/** The self-contained HTML report: summary table, charts, and the per-task table. */
export function renderReport(results: BenchResults): string {
  const { meta, summary, runs } = results;
  const domains = [...new Set(summary.map((row) => row.domain))];
  const conditions = [...new Set(summary.map((row) => row.condition))];
  const cell = (domain: string, condition: string) =>
    summary.find((row) => row.domain === domain && row.condition === condition);
  const seriesOf = (pick: (row: ConditionSummary) => Estimate | number) =>
    conditions.map((condition) => ({
      name: condition,
      values: domains.map((domain) => {
        const row = cell(domain, condition);
        return row ? pick(row) : Number.NaN;
      }),
    }));
  const k = Math.max(...summary.map((row) => row.k), 1);
  const charts = [
    barChart({
      title: `Pass^${k} per domain (±1 SE)`,
      unit: "",
      groups: domains,
      series: seriesOf((row) => row.passHatK),
      max: 1,
    }),
    barChart({
      title: "Tool calls proposed per task",
      unit: "calls",
      groups: domains,
      series: seriesOf((row) => row.proposedPerTask),
    }),
    barChart({
      title: "Calls blocked per task",
      unit: "calls",
      groups: domains,
      series: seriesOf((row) => row.blockedPerTask),
    }),
    barChart({
      title: "Seconds per proposed call",
      unit: "s",
      groups: domains,
      series: seriesOf((row) => row.secondsPerCall),
    }),
  ];
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
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mentor benchmark: ${escapeHtml(meta.model)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}
td.pass{background:#e6ffed}td.fail{background:#ffeef0}td.mixed{background:#fff8e1}
code{background:#f3f3f3;padding:1px 4px}
</style></head><body>
<h1>mentor benchmark</h1>
<p>Agent <b>${escapeHtml(meta.agent)}</b>, model <b>${escapeHtml(meta.model)}</b>${meta.server ? ` via ${escapeHtml(meta.server)}` : ""}; ${meta.runs} run(s) per task, seed ${meta.seed}, temperature ${meta.temperature}, at most ${meta.maxTokens} tokens per generation, grounding by ${escapeHtml(meta.grounding)}; ${escapeHtml(meta.started)} – ${escapeHtml(meta.finished)}.</p>
<p>Command: <code>${escapeHtml(meta.command)}</code></p>
<h2>Summary</h2>
<table id="summary"><tr><th>domain</th><th>condition</th><th>tasks</th><th>runs</th><th>Pass@1</th><th>Pass@k</th><th>Pass^k</th><th>calls/task</th><th>blocked/task</th><th>repaired/task</th><th>s/call</th><th>overhead s/call</th><th>shield s/call</th></tr>
${summaryRows.join("\n")}
</table>
<p>Pass estimates are unbiased over n runs per task (Pass^k = C(c,k)/C(n,k), Pass@k = 1 − C(n−c,k)/C(n,k)), averaged over the solvable tasks, ± one standard error over tasks. Overhead = s/call minus that of condition <code>none</code> of the same domain.</p>
<h2>Charts</h2>
${charts.join("\n")}
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

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "–";
  if (value === 0) return "0";
  const magnitude = Math.abs(value);
  return magnitude >= 100 ? value.toFixed(0) : magnitude >= 1 ? value.toFixed(2) : value.toPrecision(2);
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
