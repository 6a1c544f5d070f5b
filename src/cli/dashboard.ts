import { type Command, Option } from "commander";
import { buildDashboard } from "../dashboard/index.js";
import { loadPolicy } from "../policy/index.js";
import { listen, policyFile } from "../server/index.js";
import { integer } from "./options.js";

interface DashboardCommandOptions {
  recorder?: string;
  policy: string[];
  results: string[];
  host: string;
  port: string;
}

export function registerDashboardCommand(program: Command): void {
  program
    .command("dashboard")
    .description(
      "Serve the dashboard: the flight recorder's runs (rules × calls), the policies' rules, automata and lint, benchmark charts",
    )
    .addOption(
      new Option("--recorder <dir>", "flight recorder directory (serve --recorder)").env("MENTOR_RECORDER"),
    )
    .addOption(
      new Option(
        "--policy <id-or-path...>",
        "policies the runs used (shipped ids or paths); repeat for more",
      ).default(["travel"]),
    )
    .addOption(
      new Option(
        "--results <file...>",
        "benchmark results.json files for the Compare page and their runs' pages",
      ).default([]),
    )
    .addOption(new Option("--host <host>", "address to listen on").default("127.0.0.1"))
    .addOption(new Option("--port <port>", "port to listen on (0: any free one)").default("8090"))
    .action(async (options: DashboardCommandOptions) => {
      const policies = options.policy.map((id) => loadPolicy(policyFile(id)));
      const app = await buildDashboard({
        ...(options.recorder !== undefined ? { recorderDirectory: options.recorder } : {}),
        policies,
        results: options.results,
      });
      const address = await listen(app, options.host, integer(options.port, "--port", 0));
      process.stdout.write(`mentor dashboard: ${address}/dashboard/\n`);
      const stop = (): void => {
        app.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    });
}
