import type { Colour } from "../logic/index.js";
import { escapeHtml } from "./charts.js";

export { escapeHtml };

/** The four colours of a rule's verdict (RV-LTL), as fills: the matrix, the automaton and the legend use these. */
export const colourFill: Record<Colour, string> = {
  PERM_SAT: "#38a169",
  CURR_SAT: "#c6f6d5",
  CURR_VIOL: "#fbd38d",
  PERM_VIOL: "#e53e3e",
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
code,pre{background:#f7fafc;font-size:12px}pre{padding:6px;white-space:pre-wrap}
.badge{display:inline-block;border-radius:3px;padding:0 5px;margin-right:3px;font-size:12px;background:#e2e8f0}
.badge.blocked,.badge.block,.badge.error{background:#fed7d7;color:#822727}
.badge.refused,.badge.exhausted{background:#feebc8;color:#7b341e}
.badge.ok,.badge.allow{background:#c6f6d5;color:#22543d}
.chip{display:inline-block;width:14px;height:14px;border:1px solid #718096;vertical-align:middle;margin-right:4px}
.legend span{margin-right:14px;font-size:13px}
.problems{color:#822727}
td.pass{background:#e6ffed}td.fail{background:#ffeef0}td.mixed{background:#fff8e1}
.row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
table.matrix td.cell{width:34px;min-width:34px;height:24px;text-align:center;cursor:pointer;font-weight:bold;color:#1a202c}
table.matrix td.none{background:repeating-linear-gradient(45deg,#fff,#fff 3px,#edf2f7 3px,#edf2f7 6px)}
table.matrix th.column{cursor:pointer;font-size:11px;writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;text-align:left;padding:6px 3px}
table.matrix th.column.blocked{background:#fed7d7}
table.matrix th.column.proposed{border-top:3px solid #2b6cb0}
table.matrix .selected{outline:3px solid #2b6cb0;outline-offset:-2px}
table.matrix td.row{white-space:nowrap}
#details{border:1px solid #cbd5e0;padding:8px 12px;margin:10px 0;background:#f7fafc}
.automaton svg{max-width:100%;height:auto;border:1px solid #e2e8f0}
`;

/** A dashboard page: the navigation, the title, the body (already HTML). */
export function page(title: string, body: string, script = ""): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · mentor dashboard</title>
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
        `<span><i class="chip" style="background:${colourFill[colour]}"></i>${colour}: ${colourMeaning[colour]}</span>`,
    )
    .join("")}<span>✕ the call breaks the rule</span></p>`;
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
