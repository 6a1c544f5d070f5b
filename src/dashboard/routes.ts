import { readFileSync } from "node:fs";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { LRUCache } from "lru-cache";
import { MentorError } from "../errors/index.js";
import { type LintFinding, lintConstraints, lintPolicy } from "../game/index.js";
import type { Policy } from "../policy/index.js";
import { SolverClient } from "../smt/index.js";
import { type RulebookDrawing, rulebookPage, rulePage } from "./automaton-page.js";
import { automatonDot, automatonView, MAX_DRAWN_STATES, SvgRenderer } from "./automaton-view.js";
import { type BenchRun, benchRecords, benchRunId, parseBenchRunId } from "./bench-runs.js";
import type { ChartResults } from "./charts.js";
import { escapeHtml, page } from "./html.js";
import {
  comparePage,
  matchesFilter,
  policiesPage,
  policyPage,
  type RunFilter,
  runRows,
  runsPage,
} from "./pages.js";
import {
  type ConversationPlace,
  conversations,
  countsOf,
  type FlightRecord,
  type Outcome,
  outcomeNames,
  RecordStore,
} from "./records.js";
import { runPage } from "./run-page.js";
import { type RunView, runView } from "./run-view.js";

export interface DashboardOptions {
  /** The flight recorder's directory (`serve --recorder DIR`); none: the Runs page says how to get one. */
  recorderDirectory?: string;
  /** Policies by name: a run is shown with the policy its record names. */
  policies: readonly Policy[];
  /** Benchmark results.json files for the Compare page. */
  results?: readonly string[];
  /** How often the recorder directory is read for new records while a page listens. Default 1000 ms. */
  pollMs?: number;
  /** The solver for the constraint lint; default: one of the dashboard's own, closed with it. */
  solver?: () => SolverClient;
}

/** The cookie that carries an API key for the dashboard's pages (a browser cannot send a header on a link). */
export const DASHBOARD_KEY_COOKIE = "mentor_dashboard_key";

/**
 * The API key a dashboard request carries in the `key` query parameter (the first visit) or the
 * cookie the dashboard sets from it; undefined for other routes.
 */
export function dashboardKey(request: FastifyRequest): string | undefined {
  if (!request.url.startsWith("/dashboard")) return undefined;
  const query = request.query as Record<string, unknown> | undefined;
  if (typeof query?.key === "string") return query.key;
  const cookie = request.headers.cookie ?? "";
  const match = new RegExp(`(?:^|;\\s*)${DASHBOARD_KEY_COOKIE}=([^;]*)`).exec(cookie);
  return match?.[1] !== undefined ? decodeURIComponent(match[1]) : undefined;
}

/**
 * The dashboard's pages and their JSON, under the prefix it is registered with (`/dashboard`):
 * Runs, a run, a policy, a rule, Compare; `api/runs`, `api/run/:id`; `events` (server-sent
 * events when new records arrive). Everything is rendered here: the automata by Graphviz in
 * WebAssembly, the charts as inline SVG; the pages fetch nothing from elsewhere.
 */
export const dashboardRoutes: FastifyPluginAsync<DashboardOptions> = async (app, options) => {
  const store =
    options.recorderDirectory !== undefined ? new RecordStore(options.recorderDirectory) : undefined;
  const policies = new Map(options.policies.map((policy) => [policy.name, policy]));
  const renderer = new SvgRenderer();
  const lints = new Map<string, Promise<LintFinding[] | string>>();
  let ownSolver: SolverClient | undefined;
  const solver = options.solver ?? (() => (ownSolver ??= new SolverClient()));
  const views = new LRUCache<string, RunView>({ max: 200 });
  const pollMs = options.pollMs ?? 1000;
  const resultFiles = (options.results ?? []).map((file) => ({ file, ...readChartResults(file) }));
  // Event streams stay open while a page is; they end when the server closes (else its close would wait for them).
  const streams = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const end of streams) end();
  });
  app.addHook("onClose", async () => {
    await ownSolver?.close();
  });
  // The first visit with ?key= keeps the key in a cookie for the other pages' links and requests.
  app.addHook("onRequest", async (request, reply) => {
    const key = (request.query as Record<string, unknown> | undefined)?.key;
    if (typeof key === "string")
      reply.header(
        "set-cookie",
        `${DASHBOARD_KEY_COOKIE}=${encodeURIComponent(key)}; Path=/dashboard; HttpOnly; SameSite=Strict`,
      );
  });

  const html = (reply: FastifyReply, text: string) => reply.type("text/html; charset=utf-8").send(text);
  // A page that fails is a page saying why; the JSON routes answer `{error: {message, code}}`.
  app.setErrorHandler((error, request, reply) => {
    const known = error instanceof MentorError;
    const status = known ? error.status : 500;
    const code = known ? error.code : "MNT_ERR_INTERNAL";
    const message = (error as Error).message;
    reply.status(status);
    if (request.url.includes("/api/")) return reply.send({ error: { message, code } });
    return html(
      reply,
      page(
        `Error ${status}`,
        `<p class="problems" id="error">${escapeHtml(code)}: ${escapeHtml(message)}</p>`,
      ),
    );
  });
  const filterOf = (query: Record<string, string | undefined>): RunFilter => {
    const filter: RunFilter = {};
    if (query.policy) filter.policy = query.policy;
    if (query.mode) filter.mode = query.mode;
    if (query.outcome) {
      if (!outcomeNames.includes(query.outcome as Outcome))
        throw new MentorError("MNT_ERR_BAD_INPUT", `outcome must be one of ${outcomeNames.join(", ")}`);
      filter.outcome = query.outcome as Outcome;
    }
    if (query.latest) filter.latest = true;
    return filter;
  };
  // The conversations, grouped again only when records were added.
  let grouped: { size: number; places: Map<string, ConversationPlace> } = { size: -1, places: new Map() };
  const placesNow = () => {
    store?.refresh();
    const all = store?.newestFirst() ?? [];
    if (grouped.size !== all.length)
      grouped = { size: all.length, places: conversations(all.map((one) => one.record)) };
    return { all, places: grouped.places };
  };
  /** The requests of the record's conversation, first to last. */
  const conversationOf = (id: string): FlightRecord[] => {
    const ids = placesNow().places.get(id)?.requests ?? [id];
    return ids.map((one) => store?.get(one)?.record).filter((one) => one !== undefined);
  };
  const listed = (filter: RunFilter) => {
    const { all, places } = placesNow();
    const records = all.filter((stored) =>
      matchesFilter(stored.record, filter, places.get(stored.record.id), conversationOf(stored.record.id)),
    );
    return { records, places };
  };
  const stored = (id: string) => {
    store?.refresh();
    const found = store?.get(id);
    if (!found) throw new MentorError("MNT_ERR_NOT_FOUND", `no flight record ${id}`);
    return found;
  };
  /** The run view of a conversation, or why there is none (its policy not loaded, no policy). */
  const viewOfRequests = (conversation: FlightRecord[]): { view?: RunView; why?: string } => {
    const name = conversation.at(-1)?.policy;
    if (!name) return { why: "the request used no policy: there are no rules to show" };
    const policy = policies.get(name);
    if (!policy) return { why: `policy ${name} is not loaded here (start the dashboard with --policy FILE)` };
    const key = conversation.map((one) => one.id).join(" ");
    let view = views.get(key);
    if (!view) {
      try {
        view = runView(policy, conversation);
      } catch (error) {
        // A conversation the policy cannot read (a tool or task call it does not know): say so on the page.
        if (!(error instanceof MentorError)) throw error;
        return { why: `the run cannot be rebuilt with policy ${name}: ${error.code}: ${error.message}` };
      }
      views.set(key, view);
    }
    return { view };
  };
  /** A results.json run's requests (none, and why, when the file did not keep its conversation). */
  const benchRunOf = (id: string): { requests: FlightRecord[]; why?: string; intro: string } => {
    const named = parseBenchRunId(id);
    const entry = named && resultFiles[named.file];
    if (!named || !entry)
      throw new MentorError(
        "MNT_ERR_NOT_FOUND",
        `no results file ${named?.file} (files: ${resultFiles.length})`,
      );
    if (!entry.results)
      throw new MentorError("MNT_ERR_BAD_INPUT", entry.error ?? `${entry.file}: unreadable`);
    const run = entry.results.runs.find(
      (one) =>
        one.domain === named.domain &&
        one.task === named.task &&
        one.condition === named.condition &&
        one.run === named.run,
    );
    if (!run)
      throw new MentorError(
        "MNT_ERR_NOT_FOUND",
        `${entry.file} has no run ${named.run} of task ${named.task} (${named.domain}) under ${named.condition}`,
      );
    const records = benchRecords(run, id, String(entry.results.meta?.command ?? ""));
    const reason = run.error ?? run.reasons[0];
    const score = run.pass ? "passed" : reason ? `failed: ${reason}` : "failed";
    const intro = `<p id="bench-run"><a href="/dashboard/compare?file=${named.file}">${escapeHtml(entry.file)}</a>: task <b>${escapeHtml(run.task)}</b> (${escapeHtml(run.domain)}), condition <b>${escapeHtml(run.condition)}</b>, run ${run.run + 1}: ${escapeHtml(score)}</p>`;
    return typeof records === "string"
      ? { requests: [], why: `${entry.file}: ${records}`, intro }
      : { requests: records, intro };
  };
  /** The run view of a record's conversation, or of a results.json run (`benchRunId`). */
  const viewOf = (id: string): { view?: RunView; why?: string } => {
    if (parseBenchRunId(id) === undefined) return viewOfRequests(conversationOf(stored(id).record.id));
    const { requests, why } = benchRunOf(id);
    return why !== undefined ? { why } : viewOfRequests(requests);
  };
  const policyNamed = (name: string) => {
    const policy = policies.get(name);
    if (!policy)
      throw new MentorError(
        "MNT_ERR_NOT_FOUND",
        `no policy ${name} (loaded: ${[...policies.keys()].join(", ") || "none"})`,
      );
    return policy;
  };

  app.get("/", async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const filter = filterOf(query);
    const { records, places } = listed(filter);
    if (query.rows) return html(reply, runRows(records, places, conversationOf));
    return html(
      reply,
      runsPage({
        records,
        places,
        filter,
        policies: [...policies.keys()],
        directory: options.recorderDirectory,
        problems: store?.problems ?? [],
        conversationOf,
      }),
    );
  });

  app.get("/api/runs", async (request) => {
    const { records, places } = listed(filterOf(request.query as Record<string, string | undefined>));
    return {
      runs: records.map(({ record, file, line }) => ({
        id: record.id,
        time: record.time,
        conversation: places.get(record.id) ?? null,
        policy: record.policy ?? null,
        mode: record.mode ?? null,
        status: record.status,
        blocked: record.mentor?.blocked ?? 0,
        doneRefusals: record.mentor?.doneRefusals ?? 0,
        exhausted: record.mentor?.exhausted ?? false,
        run: countsOf(conversationOf(record.id)),
        file,
        line,
      })),
      problems: store?.problems ?? [],
    };
  });

  app.get("/api/run/:id", async (request) => {
    const { id } = request.params as { id: string };
    const { view, why } = viewOf(id);
    return { record: stored(id).record, view: view ?? null, ...(why ? { why } : {}) };
  });

  app.get("/run/:id", async (request, reply) => {
    const { id } = request.params as { id: string };
    const { view, why } = viewOf(id);
    return html(reply, runPage({ record: stored(id).record, conversation: conversationOf(id), view, why }));
  });

  app.get("/results/:file/run/:domain/:task/:condition/:run", async (request, reply) => {
    const params = request.params as Record<string, string>;
    const id = benchRunId(Number(params.file), {
      domain: params.domain as string,
      task: params.task as string,
      condition: params.condition as string,
      run: Number(params.run),
    });
    const { requests, why, intro } = benchRunOf(id);
    const record = requests.at(-1);
    if (!record)
      return html(
        reply,
        page(`Run ${id}`, `${intro}<p class="problems" id="why">${escapeHtml(why ?? "")}</p>`),
      );
    const { view, why: noView } = viewOfRequests(requests);
    return html(reply, runPage({ record, conversation: requests, view, why: noView, runId: id, intro }));
  });

  app.get("/api/conversation/:id", async (request) => {
    const { id } = request.params as { id: string };
    stored(id);
    return { requests: conversationOf(id).map((one) => one.id) };
  });

  app.get("/events", (request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    reply.raw.write(": mentor dashboard\n\n");
    const timer = setInterval(() => {
      const added = store?.refresh() ?? 0;
      if (added > 0) reply.raw.write(`event: records\ndata: ${JSON.stringify({ added })}\n\n`);
    }, pollMs);
    const end = (): void => {
      clearInterval(timer);
      streams.delete(end);
      reply.raw.end();
    };
    streams.add(end);
    request.raw.on("close", end);
  });

  app.get("/policies", async (_request, reply) => html(reply, policiesPage([...policies.values()])));

  app.get("/policy/:name", async (request, reply) => {
    const policy = policyNamed((request.params as { name: string }).name);
    let findings = lints.get(policy.name);
    if (!findings) {
      findings = lintOf(policy, solver);
      lints.set(policy.name, findings);
    }
    return html(reply, policyPage(policy, await findings));
  });

  app.get("/policy/:name/rule/:rule", async (request, reply) => {
    const params = request.params as { name: string; rule: string };
    const policy = policyNamed(params.name);
    const rule = policy.rules.find((one) => one.id === params.rule);
    if (!rule)
      throw new MentorError(
        "MNT_ERR_NOT_FOUND",
        `policy ${policy.name} has no rule ${params.rule} (its rules: ${policy.rules.map((one) => one.id).join(", ")})`,
      );
    const query = request.query as Record<string, string | undefined>;
    let path: number[] = [];
    let pathNote: string | undefined;
    let blockedLast = false;
    if (query.run !== undefined && query.row !== undefined) {
      const { view } = viewOf(query.run);
      const rowIndex = Number(query.row);
      const row = view?.rows[rowIndex];
      if (!view || !row || row.rule !== rule.id)
        throw new MentorError(
          "MNT_ERR_BAD_INPUT",
          `row ${query.row} of run ${query.run} is not an instance of ${rule.id}`,
        );
      const upTo =
        query.column === undefined || query.column === ""
          ? view.columns.length - 1
          : query.column === "start"
            ? -1
            : Number(query.column);
      path = pathOf(view, rowIndex, upTo);
      const column = view.columns[upTo];
      blockedLast = column?.kind === "proposed" && column.verdict === "block";
      pathNote = `${row.key} in run ${query.run}, ${upTo < 0 ? "before any call" : `up to call ${upTo + 1}`}${blockedLast ? " (blocked: the last step, dashed, was not taken)" : ""}`;
    }
    const view = automatonView(rule);
    const svg =
      view.states.length <= MAX_DRAWN_STATES
        ? await renderer.render(automatonDot(view, path, { blockedLast }))
        : undefined;
    return html(
      reply,
      rulePage({
        policy,
        rule,
        view,
        svg,
        path,
        pathNote,
        ...(query.run !== undefined ? { run: query.run } : {}),
      }),
    );
  });

  app.get("/policy/:name/automata", async (request, reply) => {
    const policy = policyNamed((request.params as { name: string }).name);
    const run = (request.query as Record<string, string | undefined>).run;
    const runView = run !== undefined ? viewOf(run) : undefined;
    if (runView && !runView.view)
      throw new MentorError("MNT_ERR_BAD_INPUT", `run ${run} cannot be drawn: ${runView.why}`);
    const drawings: RulebookDrawing[] = [];
    for (const rule of policy.rules) {
      const automaton = automatonView(rule);
      const draw = async (path: number[]) =>
        automaton.states.length <= MAX_DRAWN_STATES
          ? await renderer.render(automatonDot(automaton, path))
          : undefined;
      const view = runView?.view;
      const rows = view ? view.rows.flatMap((row, index) => (row.rule === rule.id ? [index] : [])) : [];
      if (rows.length === 0) {
        drawings.push({ rule, states: automaton.states.length, path: [], svg: await draw([]) });
        continue;
      }
      // The run's end: its last made (or returned) call; a blocked call is not a step.
      const end = (view as RunView).columns.findLastIndex(
        (column) => column.kind === "made" || column.returned,
      );
      for (const row of rows) {
        const path = pathOf(view as RunView, row, end);
        drawings.push({
          rule,
          key: (view as RunView).rows[row]?.key as string,
          states: automaton.states.length,
          path,
          svg: await draw(path),
        });
      }
    }
    return html(reply, rulebookPage({ policy, run, drawings }));
  });

  app.get("/compare", async (request, reply) => {
    const query = request.query as { file?: string; with?: string };
    const chosen = Number(query.file ?? 0);
    const against = query.with !== undefined ? Number(query.with) : undefined;
    return html(
      reply,
      comparePage(
        resultFiles,
        Number.isInteger(chosen) ? chosen : 0,
        against !== undefined && Number.isInteger(against) ? against : undefined,
      ),
    );
  });
};

/**
 * The states an instance went through: where it started, then after each made call up to
 * `upTo`; a proposed call or an answer there adds where it would lead (blocked calls are not
 * made, so the path does not go on from them).
 */
export function pathOf(view: RunView, row: number, upTo: number): number[] {
  const path: number[] = [];
  const push = (states: readonly number[] | undefined) => {
    const state = states?.[0];
    if (state !== undefined && path.at(-1) !== state) path.push(state);
  };
  push(view.start[row]?.states);
  view.columns.forEach((column, index) => {
    if (index > upTo) return;
    const cell = view.cells[row]?.[index];
    if (column.kind === "made" || index === upTo) push(cell?.states);
  });
  return path;
}

async function lintOf(policy: Policy, solver: () => SolverClient): Promise<LintFinding[] | string> {
  try {
    const findings = lintPolicy(policy);
    findings.push(...(await lintConstraints(policy, solver())));
    return findings;
  } catch (error) {
    return `the lint failed: ${(error as Error).message}`;
  }
}

/** What the dashboard reads of a results.json: the charts' figures, the meta, each run's conversation. */
type ResultsFile = ChartResults & {
  meta?: Record<string, unknown>;
  runs: (ChartResults["runs"][number] & BenchRun)[];
};

/** A results.json for the Compare page and the runs' pages, or what is wrong with it (named by file and field). */
function readChartResults(file: string): { results?: ResultsFile; error?: string } {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    return { error: `${file}: ${(error as Error).message}` };
  }
  const results = value as Record<string, unknown>;
  if (typeof results !== "object" || results === null) return { error: `${file}: not a JSON object` };
  if (!Array.isArray(results.summary))
    return { error: `${file}: field summary is missing (not a benchmark results.json)` };
  if (!Array.isArray(results.runs))
    return { error: `${file}: field runs is missing (not a benchmark results.json)` };
  return { results: results as unknown as ResultsFile };
}
