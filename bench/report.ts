import {
  barChart,
  benchmarkSections,
  benchmarkTables,
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
  const { meta, summary } = results;
  const domains = [...new Set(summary.map((row) => row.domain))];
  const sections = benchmarkSections(results);
  const tables = benchmarkTables(results);
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
${tables.summary}
<p>Pass estimates are unbiased over n runs per task (Pass^k = C(c,k)/C(n,k), Pass@k = 1 − C(n−c,k)/C(n,k)), averaged over the solvable tasks, ± one standard error over tasks. Overhead = s/call minus that of condition <code>none</code> of the same domain. In the per-task charts, <code>done</code> refusals are answers without a tool call that the shield refused while duties were open.</p>
<h2>Per task</h2>
${tables.tasks}
<p>Each cell: passing runs / runs · mean calls proposed · mean calls blocked · mean calls that broke a block rule (made although the policy's evaluator judged them <code>block</code>: under <code>none</code>, every violation); hover a cell for the first failure's reason. The traces are in results.json.</p>
</body></html>
`;
}
