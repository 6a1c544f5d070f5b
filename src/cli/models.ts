import { SingleBar } from "cli-progress";
import type { Command } from "commander";
import { MentorError } from "../errors/index.js";
import {
  formatBytes,
  formatDuration,
  listModels,
  loadRegistry,
  makeTinyModel,
  modelsDirectory,
  type PullProgressEvent,
  pullModel,
  type TinyModelFamily,
  tinyModelFamilies,
} from "../models/index.js";

export { formatBytes };

export function registerModelCommands(program: Command): void {
  program
    .command("pull")
    .description(
      "Fetch a model into the cache (MENTOR_MODELS_DIR, default ~/.cache/mentor/models): a registry name, an hf: URI, an http(s) URL or a .gguf path",
    )
    .argument("[model]", "registry name, hf:user/repo/file.gguf, URL or path", loadRegistry().default)
    .option("--json", "print the result as JSON")
    .action(async (model: string, options: { json?: boolean }) => {
      const reporter = new PullReporter();
      try {
        const pulled = await pullModel(model, {
          onProgress: (event) => reporter.report(event),
          toolOutput: process.stderr.isTTY ? "inherit" : "capture",
        });
        reporter.stop();
        if (options.json) {
          const { entry, ...rest } = pulled;
          process.stdout.write(`${JSON.stringify({ ...rest, chatFormat: entry.chatFormat })}\n`);
          return;
        }
        const how = pulled.fetched ? `fetched from ${pulled.source}` : "already present";
        process.stdout.write(`${pulled.path}\n`);
        process.stderr.write(
          `${pulled.name}: ${how}, ${formatBytes(pulled.size)}${pulled.sha256 ? `, sha256 ${pulled.sha256}` : ""}\n`,
        );
      } finally {
        reporter.stop();
      }
    });

  const models = program.command("models").description("Model registry, cache and tiny test models");

  models
    .command("list")
    .description("List the registry's models and what is in the cache")
    .option("--json", "print JSON lines")
    .action(async (options: { json?: boolean }) => {
      const directory = modelsDirectory();
      const listed = await listModels({ directory });
      const registry = loadRegistry();
      if (options.json) {
        for (const model of listed) {
          const { entry, ...rest } = model;
          process.stdout.write(
            `${JSON.stringify({ ...rest, chatFormat: entry?.chatFormat ?? null, sha256: entry?.sha256 ?? null })}\n`,
          );
        }
        return;
      }
      process.stdout.write(`cache: ${directory}\n`);
      const rows = listed.map((model) => [
        `${model.name ?? "(not in registry)"}${model.name === registry.default ? " *" : ""}`,
        model.entry?.chatFormat ?? "-",
        model.size === null ? "size ?" : formatBytes(model.size),
        model.status,
        model.file,
      ]);
      const widths = [0, 1, 2, 3].map((column) =>
        Math.max(...rows.map((row) => (row[column] as string).length)),
      );
      for (const row of rows)
        process.stdout.write(`${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ")}\n`);
      process.stdout.write("* default model\n");
    });

  models
    .command("make-tiny")
    .description(
      "Write a tiny random-weight model with a family's real tokenizer and chat template (for tests)",
    )
    .argument("<family>", tinyModelFamilies.join(" | "))
    .argument("<output>", "the .gguf file to write")
    .option("--layers <n>", "transformer blocks", "2")
    .option("--seed <n>", "seed of the random weights", "1")
    .option("--hidden <n>", "hidden size", "64")
    .option("--f32", "store matrices as f32 instead of f16")
    .action(
      async (
        family: string,
        output: string,
        options: { layers: string; seed: string; hidden: string; f32?: boolean },
      ) => {
        if (!(tinyModelFamilies as readonly string[]).includes(family))
          throw new MentorError(
            "MNT_ERR_BAD_INPUT",
            `unknown family ${family}; choose one of ${tinyModelFamilies.join(", ")}`,
          );
        const summary = await makeTinyModel({
          family: family as TinyModelFamily,
          outputPath: output,
          layers: positiveInteger(options.layers, "--layers"),
          seed: positiveInteger(options.seed, "--seed"),
          embeddingLength: positiveInteger(options.hidden, "--hidden"),
          matrixType: options.f32 ? "f32" : "f16",
        });
        process.stdout.write(
          `${summary.outputPath}: ${summary.architecture}, ${summary.layers} layers, hidden ${summary.embeddingLength}, ${summary.vocabularySize} tokens, ${summary.tensorCount} tensors\n`,
        );
      },
    );
}

function positiveInteger(text: string, option: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new MentorError("MNT_ERR_BAD_INPUT", `${option} must be a positive integer, got ${text}`);
  return value;
}

/** Draws one progress bar per download (bytes, rate, ETA) and a line per step on standard error. */
class PullReporter {
  #bar: SingleBar | undefined;
  #label = "";
  #started = 0;

  report(event: PullProgressEvent): void {
    switch (event.stage) {
      case "source":
        this.stop();
        process.stderr.write(`source ${event.index + 1}/${event.count}: ${event.source}\n`);
        break;
      case "step":
        this.stop();
        process.stderr.write(`  ${event.label}\n`);
        break;
      case "failed":
        this.stop();
        process.stderr.write(`  failed: ${event.reason}\n`);
        break;
      case "download":
        this.#download(event.label, event.downloadedBytes, event.totalBytes);
        break;
    }
  }

  #download(label: string, downloaded: number, total: number | undefined): void {
    if (!this.#bar || this.#label !== label) {
      this.stop();
      this.#label = label;
      this.#started = Date.now();
      this.#bar = new SingleBar({
        format: `  ${label} [{bar}] {percentage}% {done}/{size} {rate} ETA {remaining}`,
        barsize: 30,
        hideCursor: true,
        stream: process.stderr,
        // Without a terminal (logs, CI), print a progress line every 5 s instead of redrawing.
        noTTYOutput: true,
        notTTYSchedule: 5000,
        fps: 10,
      });
      this.#bar.start(total ?? 0, downloaded, this.#payload(downloaded, total));
    }
    if (total !== undefined) this.#bar.setTotal(total);
    this.#bar.update(downloaded, this.#payload(downloaded, total));
  }

  #payload(downloaded: number, total: number | undefined) {
    const seconds = Math.max((Date.now() - this.#started) / 1000, 0.001);
    const rate = downloaded / seconds;
    const eta = total && rate > 0 ? Math.max(0, (total - downloaded) / rate) : undefined;
    return {
      done: formatBytes(downloaded),
      size: total ? formatBytes(total) : "?",
      rate: `${formatBytes(rate)}/s`,
      remaining: eta === undefined ? "?" : formatDuration(eta),
    };
  }

  stop(): void {
    this.#bar?.stop();
    this.#bar = undefined;
    this.#label = "";
  }
}
