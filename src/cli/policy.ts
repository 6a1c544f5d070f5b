import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { MentorError } from "../errors/index.js";
import { type Decision, Evaluator, needsSolver, type ProposedCall } from "../evaluator/index.js";
import { lintConstraints, lintPolicy } from "../game/index.js";
import { Labeler, ungroundedError } from "../labeler/index.js";
import { parseArguments, Run, traceFromMessages } from "../monitor/index.js";
import { loadPolicy, type Policy } from "../policy/index.js";
import { SolverClient } from "../smt/index.js";

export function registerPolicyCommands(program: Command): void {
  program
    .command("lint")
    .description(
      "Check a policy: contradictions, traps and constraints that can never hold together (errors), vacuous, dead and shadowed rules (warnings)",
    )
    .argument("<policy>", "policy file (YAML)")
    .option("--json", "print the findings as JSON")
    .action(async (file: string, options: { json?: boolean }) => {
      let policy: Policy;
      try {
        policy = loadPolicy(file);
      } catch (error) {
        if (!(options.json && error instanceof MentorError)) throw error;
        // --json answers in JSON in every case: the problems of a policy that does not load.
        const problems = (error.problems.length > 0 ? error.problems : [error]).map((problem) => ({
          code: problem.code,
          message: problem.message,
          ...(problem.location ? { location: problem.location } : {}),
        }));
        print({ file, loaded: false, problems });
        process.exitCode = 2;
        return;
      }
      const findings = lintPolicy(policy);
      if (policy.constraints.length > 0) {
        const solver = new SolverClient();
        try {
          findings.push(...(await lintConstraints(policy, solver)));
        } finally {
          await solver.close();
        }
      }
      if (options.json) {
        print(findings);
      } else {
        for (const finding of findings) {
          const example = finding.example ? `\n    example: ${finding.example.join(" ; ")}` : "";
          process.stdout.write(
            `${file}: ${finding.severity} [${finding.kind}] ${finding.message}${example}\n`,
          );
        }
        const errors = findings.filter((finding) => finding.severity === "error").length;
        process.stdout.write(`${file}: ${errors} error(s), ${findings.length - errors} warning(s)\n`);
      }
      if (findings.some((finding) => finding.severity === "error")) process.exitCode = 1;
    });

  program
    .command("check")
    .description(
      "Print what may come next after a conversation (and, with --call, whether that call may be made) as JSON",
    )
    .requiredOption("-p, --policy <file>", "policy file (YAML)")
    .requiredOption(
      "-m, --messages <file>",
      "OpenAI chat messages (JSON array, or an object with a `messages` field)",
    )
    .option("-c, --call <json>", 'a proposed call: {"name": "book_train", "arguments": {...}}')
    .option("--strict", "a call is unsafe if some outcome (not every outcome) leaves no compliant finish")
    .option(
      "--strict-grounding",
      "fail (exit 2) when the request cannot be grounded, instead of judging it without duties",
    )
    .action(
      async (options: {
        policy: string;
        messages: string;
        call?: string;
        strict?: boolean;
        strictGrounding?: boolean;
      }) => {
        const policy = loadPolicy(options.policy);
        const evaluator = new Evaluator(policy, { strict: options.strict ?? false });
        const { messages, ungrounded } = await grounded(policy, readMessages(options.messages), options);
        const result: Record<string, unknown> = { next: evaluator.next(messages), ungrounded };
        if (options.call !== undefined)
          result.decide = await decideWithSolver(evaluator, messages, parseCall(options.call));
        print(result);
      },
    );

  program
    .command("verify")
    .description(
      "Judge a finished conversation after the fact: every call, every rule and binding, and a compliance score",
    )
    .requiredOption("-p, --policy <file>", "policy file (YAML)")
    .requiredOption(
      "-m, --messages <file>",
      "OpenAI chat messages (JSON array, or an object with a `messages` field)",
    )
    .option(
      "--strict-grounding",
      "fail (exit 2) when the request cannot be grounded, instead of judging it without duties",
    )
    .action(async (options: { policy: string; messages: string; strictGrounding?: boolean }) => {
      const policy = loadPolicy(options.policy);
      const evaluator = new Evaluator(policy);
      const { messages, ungrounded } = await grounded(policy, readMessages(options.messages), options);
      const trace = traceFromMessages(messages, policy);
      // Each call judged on the trace before it (refusals, approvals and stops before it too),
      // as the shield would have judged it.
      const calls = trace.calls.map((call, index) => {
        const notes = (trace.notes ?? []).filter((note) => note.position <= index);
        const decision: Decision = evaluator.decide(
          { task: trace.task, calls: trace.calls.slice(0, index), notes },
          { name: call.name, arguments: call.arguments },
        );
        return {
          call: { name: call.name, arguments: call.arguments },
          verdict: decision.verdict,
          violations: decision.violations.map((finding) => finding.rule),
          warnings: decision.warnings.map((finding) => finding.rule),
          // Why a call was blocked without a broken rule, and what the shield would have advised.
          ...(decision.failClosed !== undefined ? { failClosed: decision.failClosed } : {}),
          ...(decision.advice ? { advice: decision.advice } : {}),
        };
      });
      const run = Run.fromTrace(policy, trace);
      const rules = run.instances.map((instance, index) => {
        // A rule a call broke stays broken (the monitor re-armed it to judge later calls).
        const brokenBy = run.broken.filter((entry) => entry.instance === index).map((entry) => entry.call);
        const colours =
          brokenBy.length > 0
            ? ["PERM_VIOL"]
            : [
                ...new Set(
                  run.beliefs.map((belief) => instance.rule.automaton.colour(belief[index] as number)),
                ),
              ];
        return {
          rule: instance.rule.id,
          mode: instance.rule.mode,
          binding: instance.bindings.map((binding) => binding.values),
          colour: colours.length === 1 ? colours[0] : colours,
          satisfied: run.satisfies(index),
          ...(brokenBy.length > 0 ? { brokenBy } : {}),
        };
      });
      const checks = [
        ...calls.map((call) => call.verdict === "allow"),
        ...rules.filter((rule) => rule.mode !== "record").map((rule) => rule.satisfied),
      ];
      const passed = checks.filter(Boolean).length;
      const violated =
        calls.some((call) => call.verdict === "block") ||
        rules.some((rule) => rule.mode === "block" && !rule.satisfied);
      print({ score: checks.length === 0 ? 1 : passed / checks.length, violated, calls, rules, ungrounded });
      if (violated) process.exitCode = 1;
    });
}

/**
 * The messages grounded by the policy's labeler rules where they carry no `mentor` fields (no
 * model here: what only a model could ground stays ungrounded), and each message that could not
 * be grounded. With `strictGrounding`, an ungrounded request is an error.
 */
async function grounded(
  policy: Policy,
  raw: unknown,
  options: { strictGrounding?: boolean },
): Promise<{ messages: unknown[]; ungrounded: { message: number; kind: string; error: string }[] }> {
  if (!Array.isArray(raw)) throw new MentorError("MNT_ERR_MESSAGES", "messages must be a JSON array");
  const { messages, notes } = await new Labeler(policy).ground(raw);
  const ungrounded = notes.flatMap((note) =>
    note.error === undefined ? [] : [{ message: note.message, kind: note.kind, error: note.error }],
  );
  const refused = options.strictGrounding ? ungroundedError(notes, policy.name) : undefined;
  if (refused) throw refused;
  return { messages, ungrounded };
}

/** `decide`, and the solver's repair where candidate values cannot repair the call. */
async function decideWithSolver(
  evaluator: Evaluator,
  messages: unknown[],
  call: ProposedCall,
): Promise<Decision> {
  const decision = evaluator.decide(messages, call);
  if (!needsSolver(decision)) return decision;
  const solver = new SolverClient();
  try {
    return await evaluator.decideWithRepair(messages, call, solver);
  } finally {
    await solver.close();
  }
}

function readMessages(file: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `cannot read messages from ${file}: ${(error as Error).message}`,
    );
  }
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "messages" in parsed) {
    return (parsed as { messages: unknown }).messages;
  }
  return parsed;
}

function parseCall(text: string): ProposedCall {
  let call: unknown;
  try {
    call = JSON.parse(text);
  } catch (error) {
    throw new MentorError("MNT_ERR_BAD_INPUT", `--call is not valid JSON: ${(error as Error).message}`);
  }
  const { name, arguments: args } = (call ?? {}) as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string") {
    throw new MentorError("MNT_ERR_BAD_INPUT", '--call must look like {"name": "tool", "arguments": {...}}');
  }
  return { name, arguments: parseArguments(args ?? {}, "--call arguments") };
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
