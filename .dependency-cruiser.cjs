// The folder boundaries of src/, checked by `npm run lint` (dependency-cruiser).
//
// `layers` is the one place the allowed direction is written: a folder may import from the
// folders listed before it (and from itself), never from one listed after it. docs/architecture.md's
// "The folders" table lists them in this order (test/lint/layers.test.ts keeps the two in step).
// Every folder under src/ must be listed: a new one makes the lint fail until it gets a place.
const { readdirSync } = require("node:fs");
const { join } = require("node:path");

const layers = [
  "base", // what every part shares: the defaults, the seeded generator, the persistent list
  "errors", // MentorError and the code registry
  "openai", // the OpenAI chat shapes (messages, tools, tool_choice)
  "logic", // LTLf formulas, automata
  "expression", // predicates and constraints
  "smt", // argument constraints in Z3 (needs only expressions)
  "policy", // policy files → rule automata
  "run", // messages → trace; the run (Run: bindings, instances, beliefs)
  "game", // strategy template, policy lint
  "evaluator", // verdicts
  "shield", // prompt texts; a turn's sets, the call decoder, token masks; the upstream request
  "labeler", // grounding: rules, the LabelModel interface, the endpoint model
  "formalize", // manual → policy: translator, evaluator, orchestrator around the conflict checker
  "middleware", // the prompt shield around an agent framework's own tools (AI SDK, LangChain)
  "llm", // the local engine; the only importer of node-llama-cpp
  "models", // registry, pull, cache, tiny models (loads llm's downloader on demand)
  "agent", // one shielded turn
  "dashboard", // the dashboard's pages: flight records, rules × calls, automata, charts
  "server", // the HTTP server
  "cli", // the command line
];

const unlisted = readdirSync(join(__dirname, "src"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !layers.includes(entry.name))
  .map((entry) => `src/${entry.name}/`);
if (unlisted.length > 0)
  throw new Error(`.dependency-cruiser.cjs: give ${unlisted.join(", ")} a place in \`layers\``);

const upward = layers.slice(0, -1).map((layer, index) => ({
  name: `layer-${layer}`,
  comment: `src/${layer}/ imports only from folders listed before it in .dependency-cruiser.cjs (layers)`,
  severity: "error",
  from: { path: `^src/${layer}/` },
  to: { path: `^src/(${layers.slice(index + 1).join("|")})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...upward,
    {
      name: "no-circular",
      comment:
        "Modules import each other in a cycle: break it by moving the shared part down. A cycle held together only by type imports (a class that hands itself to a helper it creates) has no run-time effect and is allowed.",
      severity: "error",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "node-llama-cpp-only-in-llm",
      comment:
        "node-llama-cpp (native) is loaded by src/llm/ only, so proxy mode and the tools never load it.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/llm/" },
      to: { path: "node_modules/node-llama-cpp/" },
    },
    {
      name: "library-entry-without-engine-or-server",
      comment:
        "src/index.ts (the package's `.` entry) reaches neither the engine nor the server: mentor/engine (src/engine-entry.ts) and mentor/server (src/server-entry.ts) load those. test/lint/entry-points.test.ts checks the same at run time.",
      severity: "error",
      from: { path: "^src/index\\.ts$" },
      to: {
        path: "^src/(llm|agent|server|dashboard|cli)/|node_modules/(node-llama-cpp|fastify)/",
        reachable: true,
      },
    },
    {
      name: "src-not-to-bench-or-test",
      comment: "The package does not import benchmarks or tests (they are not shipped).",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(bench|test)/" },
    },
    {
      name: "not-to-unresolvable",
      comment: "An import that resolves to nothing (a typo, or a package missing from package.json).",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports count: they are dependencies of the design even when erased.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|node_modules)/" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
  },
};

// For test/lint/layers.test.ts; not enumerable, so dependency-cruiser's schema does not see it.
Object.defineProperty(module.exports, "layers", { value: layers, enumerable: false });
