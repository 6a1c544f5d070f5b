import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Command } from "commander";
import { MentorError } from "../errors/index.js";
import { policySkeleton, readTools, splitManual } from "../formalize/index.js";
import { lintPolicy } from "../game/index.js";
import { parsePolicy } from "../policy/index.js";
import { readText } from "./input.js";

export function registerInitCommand(program: Command): void {
  program
    .command("init")
    .description(
      "Write a policy skeleton from an OpenAI tools file (and a manual): the tools, the manual's sentences with ids, no rules yet",
    )
    .requiredOption(
      "--tools <file>",
      "a JSON array of OpenAI tools, or {tools: [...]}; bare {name, parameters} objects too",
    )
    .option("--manual <file>", "the manual (Markdown or text), split into sentences with ids")
    .option("--out <dir>", "where to write policy.yaml", ".")
    .option("--name <name>", "the policy's name (default: the folder's name)")
    .action((options: { tools: string; manual?: string; out: string; name?: string }) => {
      const file = join(options.out, "policy.yaml");
      if (existsSync(file))
        throw new MentorError("MNT_ERR_BAD_INPUT", `${file} exists; mentor init does not overwrite it`);
      let tools: ReturnType<typeof readTools>;
      try {
        tools = readTools(JSON.parse(readText(options.tools, "--tools")));
      } catch (error) {
        if (error instanceof MentorError) throw error;
        throw new MentorError("MNT_ERR_BAD_INPUT", `${options.tools}: ${(error as Error).message}`);
      }
      const name =
        options.name ??
        basename(resolve(options.out))
          .replace(/[^A-Za-z0-9_]/g, "_")
          .replace(/^(?=\d|$)/, "p");
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
        throw new MentorError(
          "MNT_ERR_BAD_INPUT",
          `--name ${JSON.stringify(name)} must be a name (letters, digits, _)`,
        );
      const text = policySkeleton({
        policy: name,
        tools,
        sentences: options.manual !== undefined ? splitManual(readText(options.manual, "--manual")) : [],
        file: options.tools,
      });
      // What is written loads and has no lint errors (its warnings are the sentences still to formalize).
      const findings = lintPolicy(parsePolicy(text, file));
      const errors = findings.filter((finding) => finding.severity === "error");
      if (errors.length > 0)
        throw new MentorError("MNT_ERR_INTERNAL", `the skeleton does not lint: ${errors[0]?.message}`);
      mkdirSync(options.out, { recursive: true });
      writeFileSync(file, text);
      process.stdout.write(
        `wrote ${file}: ${tools.length} tool(s), ${Object.keys(parsePolicy(text, file).manual).length} sentence(s), no rules yet (mentor lint ${file})\n`,
      );
    });
}
