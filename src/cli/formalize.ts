import { appendFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import type { Command } from "commander";
import { MentorError } from "../errors/index.js";
import {
  AgentEndpoint,
  formalize,
  readTools,
  reportData,
  reportMarkdown,
  suiteFile,
} from "../formalize/index.js";
import { OpenAILabelModel } from "../labeler/index.js";
import { SolverClient } from "../smt/index.js";
import { readText } from "./input.js";
import { integer } from "./options.js";

interface FormalizeCommandOptions {
  manual: string;
  tools: string;
  taskDescription?: string;
  endpoint: string;
  model: string;
  key?: string;
  iterations: string;
  repairs: string;
  conversations: string;
  maxTokens: string;
  timeout: string;
  jsonSchema: boolean;
  labeler: string;
  out: string;
  review?: boolean;
}

/** The files written next to `--out`: `travel.yaml` → `travel.suite.json`, `travel.report.md`, … */
export function formalizeOutputs(out: string): {
  suite: string;
  report: string;
  json: string;
  transcript: string;
} {
  const base = out.replace(/\.ya?ml$/i, "");
  return {
    suite: `${base}.suite.json`,
    report: `${base}.report.md`,
    json: `${base}.report.json`,
    transcript: `${base}.transcript.jsonl`,
  };
}

export function registerFormalizeCommand(program: Command): void {
  program
    .command("formalize")
    .description(
      "Write a policy from a manual with three LLM agents (translator, evaluator, orchestrator) around a deterministic conflict checker; exits 0 on agreement, 1 when disagreements remain, 2 when no candidate loaded",
    )
    .requiredOption("--manual <file>", "the procedural manual (Markdown or text)")
    .requiredOption("--tools <file>", "the agent's tools: a JSON array of OpenAI tools (or {tools: [...]})")
    .option("--task-description <text>", "what the agent's users ask for, in a sentence")
    .requiredOption(
      "--endpoint <url>",
      "OpenAI-compatible base URL with its /v1 (e.g. http://127.0.0.1:8080/v1)",
    )
    .requiredOption("--model <name>", "the endpoint's model id (all three agents)")
    .option("--key <key>", "API key for the endpoint")
    .option("--iterations <n>", "rounds of translate → check → contest", "3")
    .option("--repairs <n>", "translator answers per round to make a candidate load and lint clean", "3")
    .option("--conversations <n>", "test conversations to ask the evaluator for", "8")
    .option("--max-tokens <n>", "tokens per answer", "2048")
    .option("--timeout <ms>", "per request", "600000")
    .option(
      "--no-json-schema",
      "never send response_format: json_schema (it is dropped anyway when the endpoint rejects it)",
    )
    .option(
      "--labeler <who>",
      "who grounds requests and text outputs in the checker where the policy lets a model: endpoint (the agents' one) or rules",
      "endpoint",
    )
    .requiredOption(
      "--out <file>",
      "the policy to write (YAML); the suite, report and transcript are written beside it",
    )
    .option("--review", "paraphrase each rule back without its sentence, print both and flag mismatches")
    .action(async (options: FormalizeCommandOptions) => {
      if (options.labeler !== "endpoint" && options.labeler !== "rules")
        throw new MentorError(
          "MNT_ERR_BAD_INPUT",
          `--labeler must be endpoint or rules, not ${options.labeler}`,
        );
      const manual = readText(options.manual, "--manual");
      let tools: ReturnType<typeof readTools>;
      try {
        tools = readTools(JSON.parse(readText(options.tools, "--tools")));
      } catch (error) {
        if (error instanceof MentorError) throw error;
        throw new MentorError("MNT_ERR_BAD_INPUT", `--tools ${options.tools}: ${(error as Error).message}`);
      }
      const outputs = formalizeOutputs(options.out);
      writeFileSync(outputs.transcript, "");
      const timeoutMs = integer(options.timeout, "--timeout", 1);
      const endpoint = new AgentEndpoint({
        url: options.endpoint,
        model: options.model,
        ...(options.key !== undefined ? { key: options.key } : {}),
        maxTokens: integer(options.maxTokens, "--max-tokens", 1),
        timeoutMs,
        jsonSchema: options.jsonSchema,
        onExchange: (exchange) => appendFileSync(outputs.transcript, `${JSON.stringify(exchange)}\n`),
      });
      const solver = new SolverClient();
      const started = new Date().toISOString();
      let result: Awaited<ReturnType<typeof formalize>>;
      try {
        result = await formalize({
          manual,
          tools,
          ...(options.taskDescription !== undefined ? { taskDescription: options.taskDescription } : {}),
          endpoint,
          iterations: integer(options.iterations, "--iterations", 1),
          repairs: integer(options.repairs, "--repairs", 0),
          conversations: integer(options.conversations, "--conversations", 1),
          file: basename(options.out),
          review: options.review === true,
          ...(options.labeler === "endpoint"
            ? {
                labelModel: new OpenAILabelModel({
                  url: options.endpoint,
                  model: options.model,
                  ...(options.key !== undefined ? { key: options.key } : {}),
                  jsonSchema: options.jsonSchema,
                  timeoutMs,
                }),
              }
            : {}),
          solver,
          onProgress: (line) => process.stderr.write(`mentor formalize: ${line}\n`),
        });
      } finally {
        await solver.close();
      }
      const settings = {
        manual: options.manual,
        tools: options.tools,
        endpoint: options.endpoint,
        model: options.model,
        iterations: options.iterations,
        started,
      };
      if (result.policyText !== undefined) writeFileSync(options.out, result.policyText);
      writeFileSync(outputs.suite, `${JSON.stringify(suiteFile(result), null, 2)}\n`);
      writeFileSync(outputs.json, `${JSON.stringify(reportData(result, settings), null, 2)}\n`);
      writeFileSync(outputs.report, reportMarkdown(result, settings));
      const written = [
        ...(result.policyText !== undefined ? [options.out] : []),
        outputs.suite,
        outputs.report,
        outputs.json,
        outputs.transcript,
      ];
      const lines = [
        `outcome: ${result.outcome}`,
        `rounds: ${result.rounds.length}, disagreements per round: ${result.rounds
          .map((round) => (round.checked ? String(round.disagreements.length) : "-"))
          .join(
            " ",
          )}, contests: ${result.rulings.length} (${result.rulings.filter((ruling) => ruling.winner === "translator").length} won by the translator), ${result.seconds.toFixed(1)} s`,
      ];
      if (result.review) {
        lines.push("review (sentence | paraphrase without the sentence):");
        for (const entry of result.review)
          lines.push(
            `  ${entry.verdict === "different" ? "MISMATCH" : entry.verdict === "same" ? "ok      " : "unjudged"} ${entry.rule}: ${entry.sentence}\n           ${entry.paraphrase}${entry.difference && entry.verdict === "different" ? `\n           difference: ${entry.difference}` : ""}`,
          );
      }
      lines.push(`wrote ${written.join(", ")}`);
      process.stdout.write(`${lines.join("\n")}\n`);
      process.exitCode = result.outcome === "agreed" ? 0 : result.outcome === "no-policy" ? 2 : 1;
    });
}
