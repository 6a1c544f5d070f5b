import type { Colour } from "../logic/index.js";
import { escapeHtml } from "./charts.js";

export { escapeHtml };

/**
 * The four colours of a rule's verdict (RV-LTL), as fills: the matrix, the automaton and the
 * legend use these. The two final verdicts differ in lightness too (light green, dark red: 4:1
 * contrast, kept under deuteranopia), and each has a glyph (`colourGlyph`), so none is told by hue alone.
 */
export const colourFill: Record<Colour, string> = {
  PERM_SAT: "#68d391",
  CURR_SAT: "#e6fffa",
  CURR_VIOL: "#f6ad55",
  PERM_VIOL: "#9b2c2c",
};

/** The text colour on each fill. */
export const colourInk: Record<Colour, string> = {
  PERM_SAT: "#1a202c",
  CURR_SAT: "#1a202c",
  CURR_VIOL: "#1a202c",
  PERM_VIOL: "#ffffff",
};

/** Each verdict's glyph: the second cue besides colour (cells, automaton states, legend). */
export const colourGlyph: Record<Colour, string> = {
  PERM_SAT: "✓",
  CURR_SAT: "○",
  CURR_VIOL: "◔",
  PERM_VIOL: "✗",
};

export const colourMeaning: Record<Colour, string> = {
  PERM_SAT: "permanently satisfied",
  CURR_SAT: "satisfied if the run ends here",
  CURR_VIOL: "open duty: violated if the run ends here",
  PERM_VIOL: "permanently violated",
};

const style = `

body{font-family:system-ui,sans-serif;margin:0;color:#1a202c}
header{background:#1a202c;color:#fff;padding:8px 20px;display:flex;gap:18px;align-items:baseline}
header a{color:#e2e8f0;text-decoration:none}header a:hover{text-decoration:underline}
header b{font-size:17px;margin-right:12px}
main{padding:12px 20px;max-width:1500px}
table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #cbd5e0;padding:3px 7px;font-size:13px;text-align:left;vertical-align:top}
th{background:#edf2f7}
code,pre{background:#f7fafc;font-size:12px;overflow-wrap:anywhere}pre{padding:6px;white-space:pre-wrap}
.badge{display:inline-block;border-radius:3px;padding:0 5px;margin-right:3px;font-size:12px;background:#e2e8f0}
.badge.blocked,.badge.block,.badge.error{background:#fed7d7;color:#822727}
.badge.refused,.badge.exhausted{background:#feebc8;color:#7b341e}
.badge.ok,.badge.allow{background:#c6f6d5;color:#22543d}
.chip{display:inline-block;width:14px;height:14px;font-size:10px;line-height:14px;text-align:center;font-style:normal;border:1px solid #718096;vertical-align:middle;margin-right:4px}
.legend span{margin-right:14px;font-size:13px}
.problems{color:#822727}
td.pass{background:#e6ffed}td.fail{background:#ffeef0}td.mixed{background:#fff8e1}
.row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.frame{overflow:auto;max-width:100%;max-height:75vh;border:1px solid #cbd5e0}
.run-grid{display:grid;grid-template-columns:minmax(0,1fr) minmax(300px,380px);gap:14px;align-items:start}
.run-grid>#details{position:sticky;top:8px;max-height:calc(100vh - 16px);overflow:auto;margin:0}
.clip{display:inline-block;max-width:100%;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom}
table.matrix{margin:0}
table.matrix td.cell{width:34px;min-width:34px;height:24px;text-align:center;cursor:pointer;font-weight:bold;color:#1a202c}
table.matrix td.cell.PERM_VIOL{color:#fff}
table.matrix td.cell::after{font-weight:normal;font-size:11px}
${(Object.keys(colourGlyph) as Colour[]).map((colour) => `td.cell.${colour}::after{content:"${colourGlyph[colour]}"}`).join("")}
table.matrix td.cell.broken::after{content:none}
table.matrix td.cell.rearmed{box-shadow:inset 0 0 0 4px ${colourFill.PERM_VIOL}}
table.matrix td.none{background:repeating-linear-gradient(45deg,#fff,#fff 3px,#edf2f7 3px,#edf2f7 6px)}
table.matrix th.column{cursor:pointer;font-size:11px;writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;text-align:left;padding:6px 3px;max-height:160px;overflow:hidden;text-overflow:ellipsis}
table.matrix th.column.blocked{background:#fed7d7}
table.matrix th.column.broke{background:#9b2c2c;color:#fff}
table.matrix th.column.stopped{background:#1a202c;color:#fff}
table.matrix th.column.asked{background:#e9d8fd}
table.matrix th.column.proposed{border-top:3px solid #2b6cb0}
table.matrix th.request{font-size:11px;text-align:center;background:#e2e8f0;border-left:3px solid #4a5568}
table.matrix .first{border-left:3px solid #4a5568}
table.matrix .selected{outline:3px solid #2b6cb0;outline-offset:-2px}
table.matrix td.row{display:table-cell;white-space:nowrap;max-width:260px;overflow:hidden;text-overflow:ellipsis;position:sticky;left:0;background:#fff;z-index:1}
table.matrix thead th{position:sticky;top:0;z-index:2}
.stop{border:2px solid #1a202c;background:#fff5f5;padding:6px 10px}
.badge.broke{background:#9b2c2c;color:#fff}.badge.stopped,.badge.stop{background:#1a202c;color:#fff}
.badge.ask,.badge.asked{background:#e9d8fd;color:#44337a}
#runs{table-layout:fixed;width:100%}#runs td{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#details{border:1px solid #cbd5e0;padding:8px 12px;margin:10px 0;background:#f7fafc;overflow-wrap:anywhere}
.automaton{overflow:auto;max-height:75vh;max-width:100%;border:1px solid #e2e8f0;cursor:grab}
.automaton svg{max-width:none;height:auto;display:block}
.zoom button{min-width:32px}
#after{table-layout:fixed;width:100%}#after td,#after th{overflow-wrap:normal}#after th:first-child{width:50%}#after th:nth-child(2){width:34%}
.side-by-side{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px}
`;

/** A dashboard page: the navigation, the title, the body (already HTML). */
export function page(title: string, body: string, script = ""): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · mentor dashboard</title><link rel="icon" href="data:,">
<style>${style}</style></head><body>
<header><b>mentor</b><a href="/dashboard/">Runs</a><a href="/dashboard/policies">Policies</a><a href="/dashboard/compare">Compare</a></header>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
${script ? `<script>${script}</script>` : ""}
</body></html>
`;
}

export function colourLegend(): string {
  return `<p class="legend">${(Object.keys(colourFill) as Colour[])
    .map(
      (colour) =>
        `<span><i class="chip" style="background:${colourFill[colour]};color:${colourInk[colour]}">${colourGlyph[colour]}</i>${colour}: ${colourMeaning[colour]}</span>`,
    )
    .join(
      "",
    )}<span>✕ the call breaks the rule</span><span><i class="chip" style="box-shadow:inset 0 0 0 3px ${colourFill.PERM_VIOL}"></i>broken earlier, re-armed (hover: the colour it is judged by now)</span></p>`;
}

/** `name(a="x", b=1)`. */
export function callText(call: { name: string; arguments: Record<string, unknown> }): string {
  const args = Object.entries(call.arguments).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return `${call.name}(${args.join(", ")})`;
}

/** JSON to embed in a `<script type="application/json">` (no `</script>` inside). */
export function embeddedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}
