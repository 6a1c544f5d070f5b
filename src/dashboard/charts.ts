/**
 * Bar charts as inline SVG, shared by the benchmark's report.html (bench/report.ts) and the
 * dashboard's Compare page, so both show a results.json the same way.
 */

export interface Estimate {
  mean: number;
  standardError: number;
}

export function meanWithError(values: readonly number[]): Estimate {
  if (values.length === 0) return { mean: Number.NaN, standardError: Number.NaN };
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  if (values.length === 1) return { mean, standardError: 0 };
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1);
  return { mean, standardError: Math.sqrt(variance / values.length) };
}

/** The parts of a benchmark's results.json the charts read (bench/report.ts has the whole shape). */
export interface ChartResults {
  summary: {
    domain: string;
    condition: string;
    tasks: number;
    runs: number;
    k: number;
    passAt1: Estimate;
    passAtK: Estimate;
    passHatK: Estimate;
    proposedPerTask: Estimate;
    blockedPerTask: Estimate;
    repairedPerTask: Estimate;
    secondsPerCall: number;
    overheadPerCall: number;
    shieldSecondsPerCall: number;
  }[];
  runs: {
    domain: string;
    task: string;
    condition: string;
    /** The run's index among the task's runs under its condition (0 for the first). */
    run: number;
    solvable: boolean;
    unsolvableReason?: string;
    pass: boolean;
    /** Why the run failed (the evaluator's reasons), or the request's error. */
    reasons: string[];
    error?: string;
    proposed: number;
    blocked: number;
    /** Proposed calls the evaluator judged `block` (blocked, or under `none` made); older files lack it. */
    violations?: number;
    doneRefusals: number;
  }[];
}

/**
 * Calls of a run that were made although they broke a block rule: the violations not blocked
 * (under `none` every one; bench/RESULTS.md counts these as "executed calls that break a block rule").
 */
export function brokeOf(run: ChartResults["runs"][number]): number {
  return Math.max(0, (run.violations ?? 0) - run.blocked);
}

/** The calls that broke a block rule, over runs: how many, and in how many runs. */
function brokeText(runs: readonly ChartResults["runs"][number][]): string {
  if (runs.every((run) => run.violations === undefined)) return "–";
  const calls = runs.reduce((sum, run) => sum + brokeOf(run), 0);
  return `${calls} in ${runs.filter((run) => brokeOf(run) > 0).length}/${runs.length} runs`;
}

/** Colours by position; the report gives each condition its own, the same in every chart. */
export const palette = ["#7a7a7a", "#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b7791f"];

export interface Series {
  name: string;
  values: (Estimate | number)[];
  /** Default: the palette's colour at the series' position. */
  color?: string;
}

/** Room left of a plot (tick labels) and right of it. */
const left = 64;
const right = 12;
/** Widest chart in the report; more groups wrap onto further rows. */
const widest = 1180;

const fixed = (value: number) => value.toFixed(1);

/** Top of a value's bar and whisker. */
function upper(value: Estimate | number): number {
  if (typeof value === "number") return value;
  return value.mean + (Number.isFinite(value.standardError) ? value.standardError : 0);
}

/** A y scale from 0 with round ticks (steps of 1, 2 or 5 × 10^n) reaching `top`; `max` fixes its end. */
function yScale(top: number, max?: number): { max: number; ticks: number[] } {
  const wanted = max ?? (Number.isFinite(top) && top > 0 ? top : 1);
  const raw = wanted / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const residual = raw / magnitude;
  const step = (residual <= 1 ? 1 : residual <= 2 ? 2 : residual <= 5 ? 5 : 10) * magnitude;
  const end = max ?? Math.ceil(wanted / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let index = 0; index * step <= end * (1 + 1e-9); index++)
    ticks.push(Number((index * step).toPrecision(6)));
  return { max: end, ticks };
}

function dataTop(series: Series[]): number {
  return Math.max(
    0,
    ...series.flatMap((one) => one.values.map(upper)).filter((value) => Number.isFinite(value)),
  );
}

/** A row of coloured keys, wrapped to the width. */
function legend(series: Series[], y0: number, width: number): { svg: string[]; height: number } {
  const svg: string[] = [];
  let x = left;
  let y = y0;
  series.forEach((one, index) => {
    const itemWidth = 18 + one.name.length * 7 + 18;
    if (x > left && x + itemWidth > width - right) {
      x = left;
      y += 18;
    }
    svg.push(
      `<rect x="${x}" y="${y}" width="12" height="12" fill="${one.color ?? palette[index % palette.length]}"/>`,
      `<text x="${x + 17}" y="${y + 11}" font-size="12">${escapeHtml(one.name)}</text>`,
    );
    x += itemWidth;
  });
  return { svg, height: series.length > 0 ? y - y0 + 18 : 0 };
}

interface PanelOptions {
  /** Drawn above the plot, smaller than a chart's title. */
  title?: string;
  unit: string;
  groups: string[];
  series: Series[];
  /** The y axis' end (default: a round number above the data). */
  max?: number;
  /** Slots along x (default: one per group), so that rows of one chart line up. */
  slots?: number;
  /** Each bar's value written above it. */
  valueLabels?: boolean;
}

/** One plot at y0: ticks and grid lines, a group of bars per label, ±1 SE whiskers (SE > 0). */
function panel(options: PanelOptions, y0: number, width: number, plotHeight: number) {
  const { groups, series, unit } = options;
  const svg: string[] = [];
  let top = y0;
  if (options.title !== undefined) {
    svg.push(
      `<text x="${left}" y="${top + 13}" font-size="13" font-weight="bold">${escapeHtml(options.title)}</text>`,
    );
    top += 22;
  }
  if (options.valueLabels) top += 12;
  const { max, ticks } = yScale(dataTop(series), options.max);
  const base = top + plotHeight;
  const y = (value: number) => base - (Math.min(max, Math.max(0, value)) / max) * plotHeight;
  const groupWidth = (width - left - right) / Math.max(1, options.slots ?? groups.length);
  const barWidth = (groupWidth * 0.8) / Math.max(1, series.length);
  for (const tick of ticks) {
    svg.push(
      `<line x1="${left}" x2="${width - right}" y1="${fixed(y(tick))}" y2="${fixed(y(tick))}" stroke="#e4e4e4"/>`,
      `<text x="${left - 5}" y="${fixed(y(tick) + 4)}" text-anchor="end" font-size="11">${tickText(tick)}</text>`,
    );
  }
  if (unit) {
    // Beside the widest tick label.
    const x = Math.max(8, left - 14 - 6.2 * Math.max(...ticks.map((tick) => tickText(tick).length)));
    const middle = fixed(top + plotHeight / 2);
    svg.push(
      `<text x="${fixed(x)}" y="${middle}" text-anchor="middle" font-size="11" fill="#555" transform="rotate(-90 ${fixed(x)} ${middle})">${escapeHtml(unit)}</text>`,
    );
  }
  svg.push(
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${base}" stroke="#333"/>`,
    `<line x1="${left}" y1="${base}" x2="${fixed(left + groupWidth * groups.length)}" y2="${base}" stroke="#333"/>`,
  );
  // Long labels keep their start and end (ids often differ only there); the whole one is the tooltip.
  const shown = (group: string) => (group.length > 24 ? `${group.slice(0, 12)}…${group.slice(-11)}` : group);
  const longest = Math.max(0, ...groups.map((group) => shown(group).length));
  const rotate = longest * 6.6 > groupWidth - 4;
  groups.forEach((group, groupIndex) => {
    const x0 = left + groupIndex * groupWidth + groupWidth * 0.1;
    const middle = fixed(x0 + groupWidth * 0.4);
    const label = `<title>${escapeHtml(group)}</title>${escapeHtml(shown(group))}`;
    svg.push(
      rotate
        ? `<text x="${middle}" y="${base + 12}" text-anchor="end" font-size="11" transform="rotate(-45 ${middle} ${base + 12})">${label}</text>`
        : `<text x="${middle}" y="${base + 15}" text-anchor="middle" font-size="12">${label}</text>`,
    );
    series.forEach((one, seriesIndex) => {
      const value = one.values[groupIndex];
      if (value === undefined) return;
      const mean = typeof value === "number" ? value : value.mean;
      if (!Number.isFinite(mean)) return;
      const error = typeof value === "number" ? 0 : value.standardError;
      const x = x0 + seriesIndex * barWidth;
      const barSpan = Math.max(1, barWidth - 2);
      // A measured 0 still shows as a sliver, unlike a missing value.
      const barTop = Math.min(y(mean), base - 1.5);
      const color = one.color ?? palette[seriesIndex % palette.length];
      const tip = `${group} · ${one.name}: ${formatNumber(mean)}${error > 0 ? ` ± ${formatNumber(error)}` : ""}${unit ? ` ${unit}` : ""}`;
      svg.push(
        `<rect x="${fixed(x)}" y="${fixed(barTop)}" width="${fixed(barSpan)}" height="${fixed(base - barTop)}" fill="${color}"><title>${escapeHtml(tip)}</title></rect>`,
      );
      const centre = x + barSpan / 2;
      if (error > 0) {
        const high = fixed(y(mean + error));
        const low = fixed(y(mean - error));
        const cap = Math.min(4, barSpan / 3);
        svg.push(
          `<path class="se" d="M${fixed(centre)} ${high}V${low}M${fixed(centre - cap)} ${high}H${fixed(centre + cap)}M${fixed(centre - cap)} ${low}H${fixed(centre + cap)}" stroke="#000" fill="none"/>`,
        );
      }
      if (options.valueLabels) {
        svg.push(
          `<text x="${fixed(centre)}" y="${fixed(y(mean + (Number.isFinite(error) ? Math.max(error, 0) : 0)) - 4)}" text-anchor="middle" font-size="11">${formatNumber(mean)}</text>`,
        );
      }
    });
  });
  const labelRoom = rotate ? longest * 6.6 * 0.71 + 18 : 22;
  return { svg, height: base + labelRoom - y0 };
}

/** Room for a chart's title (14px bold, at most about 9px a character). */
function titleWidth(title: string): number {
  return Math.ceil(left + right + title.length * 9);
}

function svgOpen(title: string, width: number, height: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${Math.ceil(height)}" viewBox="0 0 ${width} ${Math.ceil(height)}" font-family="system-ui, sans-serif" overflow="visible" role="img" aria-label="${escapeHtml(title)}">
<text x="${left}" y="18" font-size="14" font-weight="bold">${escapeHtml(title)}</text>`;
}

/**
 * A grouped bar chart as inline SVG: one group per label, one bar per series (its colour), ±1 SE
 * whiskers where an Estimate's SE > 0, a legend under the title. Widens to `minGroupWidth` per group.
 * Bars start at 0: a value of 0 or below is a sliver (its tooltip tells the value); NaN draws nothing.
 */
export function barChart(options: {
  title: string;
  unit: string;
  groups: string[];
  series: Series[];
  max?: number;
  /** Default 640. */
  width?: number;
  /** Height of the plot area; default 180. */
  plotHeight?: number;
  minGroupWidth?: number;
  valueLabels?: boolean;
}): string {
  const { title, groups } = options;
  const width = Math.max(
    options.width ?? 640,
    left + right + groups.length * (options.minGroupWidth ?? 0),
    titleWidth(title),
  );
  const key = legend(options.series, 28, width);
  const body = panel(
    {
      unit: options.unit,
      groups,
      series: options.series,
      max: options.max,
      valueLabels: options.valueLabels,
    },
    28 + key.height + 6,
    width,
    options.plotHeight ?? 180,
  );
  const height = 28 + key.height + 6 + body.height;
  return [svgOpen(title, width, height), ...key.svg, ...body.svg, "</svg>"].join("\n");
}

/**
 * Small multiples over many groups (tasks): one panel per measure, stacked, sharing the x labels and
 * the series' colours; more groups than fit in `widest` wrap onto further rows of panels, each
 * measure on the same y scale in every row.
 */
export function multiPanelChart(options: {
  title: string;
  groups: string[];
  panels: { title: string; unit: string; series: Series[] }[];
  plotHeight?: number;
}): string {
  const { title, groups, panels } = options;
  const seriesCount = Math.max(1, ...panels.map((one) => one.series.length));
  const minGroupWidth = seriesCount * 12 + 12;
  const perRowMost = Math.max(1, Math.floor((widest - left - right) / minGroupWidth));
  const rows = Math.max(1, Math.ceil(groups.length / perRowMost));
  const perRow = Math.max(1, Math.ceil(groups.length / rows));
  const width = Math.max(
    titleWidth(title),
    Math.min(widest, Math.max(640, left + right + perRow * minGroupWidth)),
  );
  const key = legend(panels[0]?.series ?? [], 28, width);
  const parts: string[] = [...key.svg];
  let y = 28 + key.height + 6;
  const scales = panels.map((one) => yScale(dataTop(one.series)).max);
  for (let row = 0; row < rows; row++) {
    const from = row * perRow;
    const chunk = groups.slice(from, from + perRow);
    if (chunk.length === 0) break;
    const span = rows > 1 ? ` (${chunk[0]} – ${chunk[chunk.length - 1]})` : "";
    panels.forEach((one, panelIndex) => {
      const drawn = panel(
        {
          title: `${one.title}${span}`,
          unit: one.unit,
          groups: chunk,
          series: one.series.map((each) => ({ ...each, values: each.values.slice(from, from + perRow) })),
          max: scales[panelIndex],
          slots: perRow,
        },
        y,
        width,
        options.plotHeight ?? 110,
      );
      parts.push(...drawn.svg);
      y += drawn.height + 4;
    });
  }
  return [svgOpen(title, width, y), ...parts, "</svg>"].join("\n");
}

/** A section of charts per domain: Pass figures and seconds per call by condition, and per-task figures. */
export function benchmarkSections(results: ChartResults): string[] {
  const { summary, runs } = results;
  const domains = [...new Set(summary.map((row) => row.domain))];
  const conditions = [...new Set(summary.map((row) => row.condition))];
  const colorOf = (condition: string) => palette[conditions.indexOf(condition) % palette.length] as string;
  const cell = (domain: string, condition: string) =>
    summary.find((row) => row.domain === domain && row.condition === condition);
  return domains.map((domain, domainIndex) => {
    const rows = summary.filter((row) => row.domain === domain);
    const k = Math.max(1, ...rows.map((row) => row.k));
    const passGroups = k > 1 ? ["Pass@1", `Pass@${k}`, `Pass^${k}`] : ["Pass^1 (= Pass@1)"];
    const passChart = barChart({
      title: `${domain}: ${k > 1 ? `Pass@1, Pass@${k}, Pass^${k}` : "Pass^1"} (±1 SE over tasks)`,
      unit: "",
      groups: passGroups,
      series: conditions.map((condition) => {
        const row = cell(domain, condition);
        return {
          name: condition,
          color: colorOf(condition),
          values: row
            ? k > 1
              ? [row.passAt1, row.passAtK, row.passHatK]
              : [row.passHatK]
            : passGroups.map(() => Number.NaN),
        };
      }),
      max: 1,
      width: 560,
      valueLabels: true,
    });
    const secondsChart = barChart({
      title: `${domain}: seconds per proposed call`,
      unit: "s",
      groups: ["model turns", "of which shield"],
      series: conditions.map((condition) => {
        const row = cell(domain, condition);
        return {
          name: condition,
          color: colorOf(condition),
          values: row ? [row.secondsPerCall, row.shieldSecondsPerCall] : [Number.NaN, Number.NaN],
        };
      }),
      width: 480,
      valueLabels: true,
    });
    const ofDomain = runs.filter((run) => run.domain === domain);
    const tasks = [...new Set(ofDomain.map((run) => run.task))];
    const perTask = (value: (run: ChartResults["runs"][number]) => number) =>
      conditions.map((condition) => ({
        name: condition,
        color: colorOf(condition),
        values: tasks.map((task) => {
          const group = ofDomain.filter((run) => run.task === task && run.condition === condition);
          return group.length > 0 ? meanWithError(group.map(value)) : Number.NaN;
        }),
      }));
    const taskChart = multiPanelChart({
      title: `${domain}: per task, mean per run (±1 SE over runs)`,
      groups: tasks,
      panels: [
        { title: "Tool calls proposed", unit: "calls", series: perTask((run) => run.proposed) },
        { title: "Calls blocked", unit: "calls", series: perTask((run) => run.blocked) },
        { title: "Calls that broke a block rule", unit: "calls", series: perTask(brokeOf) },
        { title: "done refusals", unit: "refusals", series: perTask((run) => run.doneRefusals) },
      ],
    });
    const unscored = tasks.filter((task) => ofDomain.some((run) => run.task === task && !run.solvable));
    const runsPerTask = [...new Set(rows.map((row) => row.runs))].join("/");
    return `<section class="domain" id="domain-${domainIndex}">
<h2>${escapeHtml(domain)}</h2>
<p>${tasks.length} task(s), ${Math.max(0, ...rows.map((row) => row.tasks))} scored; ${runsPerTask || 0} run(s) per task.${unscored.length > 0 ? ` Not scored (left out of the Pass figures, still in the per-task chart): ${unscored.map(escapeHtml).join(", ")}.` : ""}</p>
<div class="row">
${passChart}
${secondsChart}
</div>
${taskChart}
</section>`;
  });
}

/**
 * The summary table (a row per domain and condition) and the per-task table (passing runs per
 * condition; with `runHref`, each run linked to its page).
 */
export function benchmarkTables(
  results: ChartResults,
  runHref?: (run: ChartResults["runs"][number]) => string,
): { summary: string; tasks: string } {
  const { summary, runs } = results;
  const conditions = [...new Set(summary.map((row) => row.condition))];
  const summaryRows = summary.map(
    (row) =>
      `<tr><td>${escapeHtml(row.domain)}</td><td>${escapeHtml(row.condition)}</td><td>${row.tasks}</td><td>${row.runs}</td><td>${estimateText(row.passAt1)}</td><td>${estimateText(row.passAtK)}</td><td>${estimateText(row.passHatK)}</td><td>${estimateText(row.proposedPerTask)}</td><td>${estimateText(row.blockedPerTask)}</td><td class="broke">${brokeText(runs.filter((run) => run.domain === row.domain && run.condition === row.condition))}</td><td>${estimateText(row.repairedPerTask)}</td><td>${formatNumber(row.secondsPerCall)}</td><td>${formatNumber(row.overheadPerCall)}</td><td>${formatNumber(row.shieldSecondsPerCall)}</td></tr>`,
  );
  const taskRows: string[] = [];
  const taskKeys = [...new Set(runs.map((run) => `${run.domain}\u0000${run.task}`))];
  for (const key of taskKeys) {
    const [domain, task] = key.split("\u0000") as [string, string];
    const ofTask = runs.filter((run) => run.domain === domain && run.task === task);
    const first = ofTask[0] as ChartResults["runs"][number];
    const cells = conditions.map((condition) => {
      const group = ofTask.filter((run) => run.condition === condition);
      if (group.length === 0) return "<td>–</td>";
      const passes = group.filter((run) => run.pass).length;
      const proposed = group.reduce((sum, run) => sum + run.proposed, 0) / group.length;
      const blocked = group.reduce((sum, run) => sum + run.blocked, 0) / group.length;
      const broke = group.reduce((sum, run) => sum + brokeOf(run), 0) / group.length;
      const failure = group.find((run) => !run.pass);
      const why = failure ? (failure.error ?? failure.reasons[0] ?? "") : "";
      const css = passes === group.length ? "pass" : passes === 0 ? "fail" : "mixed";
      const links = runHref
        ? ` · runs ${group.map((run) => `<a class="run-link ${run.pass ? "pass" : "fail"}" href="${escapeHtml(runHref(run))}" title="run ${run.run + 1}: ${run.pass ? "passed" : "failed"}">${run.run + 1}</a>`).join(" ")}`
        : "";
      return `<td class="${css}" title="${escapeHtml(why)}">${passes}/${group.length} · ${formatNumber(proposed)} calls · ${formatNumber(blocked)} blocked${broke > 0 ? ` · ${formatNumber(broke)} broke` : ""}${links}</td>`;
    });
    const note = first.solvable
      ? ""
      : ` <em>(not scored: ${escapeHtml(first.unsolvableReason ?? "not solvable")})</em>`;
    taskRows.push(
      `<tr><td>${escapeHtml(domain)}</td><td>${escapeHtml(task)}${note}</td>${cells.join("")}</tr>`,
    );
  }
  return {
    summary: `<table id="summary"><tr><th>domain</th><th>condition</th><th>tasks</th><th>runs</th><th>Pass@1</th><th>Pass@k</th><th>Pass^k</th><th>calls/task</th><th>blocked/task</th><th title="calls made although they broke a block rule (the violations not blocked)">calls that broke a block rule</th><th>repaired/task</th><th>s/call</th><th>overhead s/call</th><th>shield s/call</th></tr>
${summaryRows.join("\n")}
</table>`,
    tasks: `<table id="tasks"><tr><th>domain</th><th>task</th>${conditions.map((condition) => `<th>${escapeHtml(condition)}</th>`).join("")}</tr>
${taskRows.join("\n")}
</table>`,
  };
}

function estimateText(estimate: Estimate): string {
  if (!Number.isFinite(estimate.mean)) return "–";
  return `${formatNumber(estimate.mean)} ± ${formatNumber(estimate.standardError)}`;
}

/** A tick's value as written: no trailing zeros. */
function tickText(value: number): string {
  return String(Number(value.toPrecision(4)));
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "–";
  if (value === 0) return "0";
  const magnitude = Math.abs(value);
  return magnitude >= 100 ? value.toFixed(0) : magnitude >= 1 ? value.toFixed(2) : value.toPrecision(2);
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
