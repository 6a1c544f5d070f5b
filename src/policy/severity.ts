import type { Report } from "./labeling.js";
import type { RawEscalate } from "./schema.js";
import type { YamlPath } from "./source.js";
import type { Mode, Severity } from "./types.js";

/** A rule's or constraint's severity: from `severity` (with `escalate`), or from `mode` (default `block`). */
export function severityOf(
  raw: {
    mode?: Mode | undefined;
    severity?: Severity["kind"] | undefined;
    escalate?: RawEscalate | undefined;
  },
  path: YamlPath,
  id: string,
  report: Report,
): Severity | undefined {
  if (raw.mode !== undefined && raw.severity !== undefined) {
    report("MNT_ERR_POLICY_SCHEMA", "give `severity` or `mode`, not both", [...path, "mode"], {
      rule: id,
    });
    return undefined;
  }
  const kind = raw.severity ?? raw.mode ?? "block";
  if (kind !== "escalate") {
    if (raw.escalate === undefined) return { kind };
    report("MNT_ERR_POLICY_SCHEMA", "`escalate` needs `severity: escalate`", [...path, "escalate"], {
      rule: id,
    });
    return undefined;
  }
  const escalate = raw.escalate;
  if (escalate === undefined) {
    report(
      "MNT_ERR_POLICY_SCHEMA",
      "`severity: escalate` needs `escalate: {after: N}` (how many refusals before it escalates)",
      [...path, "severity"],
      { rule: id },
    );
    return undefined;
  }
  if (escalate.total !== undefined && escalate.counting !== "hybrid") {
    report(
      "MNT_ERR_POLICY_SCHEMA",
      "`escalate.total` is only for `counting: hybrid`",
      [...path, "escalate", "total"],
      {
        rule: id,
      },
    );
    return undefined;
  }
  return {
    kind,
    after: escalate.after,
    counting: escalate.counting,
    total: escalate.total ?? 2 * escalate.after,
    to: escalate.to,
  };
}

/** The mode the game and the findings use: every refusing severity counts as `block`. */
export function modeOf(severity: Severity): Mode {
  return severity.kind === "warn" || severity.kind === "record" ? severity.kind : "block";
}
