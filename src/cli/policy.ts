import type { Command } from "commander";
import { MentorError } from "../errors/index.js";
import {
  type Decision,
  Evaluator,
  needsSolver,
  type ProposedCall,
  verifyConversation,
} from "../evaluator/index.js";
import {
  checkSuite,
  type Disagreement,
  disagreementText,
  type SuiteFile,
  type TestConversation,
} from "../formalize/index.js";
import { Labeler, ungroundedError } from "../labeler/index.js";
import { type ChatMessage, systemText } from "../openai/index.js";
import { loadPolicy, type Policy, policyForSystem } from "../policy/index.js";
import { parseArguments } from "../run/index.js";
import { SolverClient } from "../smt/index.js";
import { checkDepth, checkedMessages, readJsonFile, readMessagesFile } from "./input.js";
import { lintFindings, refuseLintErrors } from "./lint-gate.js";

export function registerPolicyCommands(program: Command): void {
  program
    .command("lint")
    .description(
      "Check a policy: contradictions, traps, constraints that can never hold together, vacuous rules and dead propositions (errors); shadowed rules, unpinned propositions, unused declarations (warnings)",
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
      const findings = await lintFindings(policy);
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
      "--allow-lint-errors",
      "judge with a policy that mentor lint finds errors in (refused by default)",
    )
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
        allowLintErrors?: boolean;
      }) => {
        const base = loadPolicy(options.policy);
        await refuseLintErrors(base, options.policy, options.allowLintErrors);
        const raw = readMessagesFile(options.messages);
        const policy = policyForSystem(base, systemText(raw));
        const evaluator = new Evaluator(policy, { strict: options.strict ?? false });
        const { messages, ungrounded } = await grounded(policy, raw, options);
        const result: Record<string, unknown> = { next: evaluator.next(messages), ungrounded };
        if (options.call !== undefined)
          result.decide = await decideWithSolver(evaluator, messages, parseCall(options.call));
        print(result);
      },
    );

  program
    .command("verify")
    .description(
      "Judge a finished conversation after the fact: every call, every rule and binding, and a compliance score; or, with --suite, a test suite of labelled conversations (mentor formalize writes one)",
    )
    .requiredOption("-p, --policy <file>", "policy file (YAML)")
    .option(
      "-m, --messages <file>",
      "OpenAI chat messages (JSON array, or an object with a `messages` field)",
    )
    .option(
      "--allow-lint-errors",
      "judge with a policy that mentor lint finds errors in (refused by default)",
    )
    .option(
      "--suite <file>",
      "a test suite ({manual, conversations: [{id, expected: {compliant, sentence?}, messages}]}): exit 1 when the policy disagrees with a label",
    )
    .option(
      "--strict-grounding",
      "fail (exit 2) when the request cannot be grounded, instead of judging it without duties",
    )
    .action(
      async (options: {
        policy: string;
        messages?: string;
        suite?: string;
        strictGrounding?: boolean;
        allowLintErrors?: boolean;
      }) => {
        if ((options.messages === undefined) === (options.suite === undefined))
          throw new MentorError("MNT_ERR_BAD_INPUT", "give either --messages or --suite");
        const policy = loadPolicy(options.policy);
        await refuseLintErrors(policy, options.policy, options.allowLintErrors);
        if (options.suite !== undefined) {
          const disagreements = await verifySuite(policy, options.suite);
          print(disagreements);
          if (disagreements.disagreements.length > 0) process.exitCode = 1;
          return;
        }
        const raw = readMessagesFile(options.messages as string);
        const variant = policyForSystem(policy, systemText(raw));
        const { messages, ungrounded } = await grounded(variant, raw, options);
        const verification = verifyConversation(variant, new Evaluator(variant), messages);
        print({ ...verification, ungrounded });
        if (verification.violated) process.exitCode = 1;
      },
    );
}

/** The conflict checker of `mentor formalize` over a suite file: each disagreement in words and as data. */
async function verifySuite(
  policy: Policy,
  file: string,
): Promise<{ conversations: number; agree: number; disagreements: (Disagreement & { text: string })[] }> {
  const raw = readJsonFile(file) as Partial<SuiteFile>;
  if (!Array.isArray(raw.conversations) || typeof raw.manual !== "object" || raw.manual === null)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `${file}: a suite needs \`manual\` (id → sentence) and \`conversations\``,
    );
  const sentences = Object.entries(raw.manual).map(([id, text]) => ({ id, text: String(text) }));
  const conversations: TestConversation[] = raw.conversations.map((entry, index) => {
    if (!Array.isArray(entry?.messages) || typeof entry.expected?.compliant !== "boolean")
      throw new MentorError(
        "MNT_ERR_BAD_INPUT",
        `${file}: conversations[${index}] needs \`messages\` and \`expected: {compliant, sentence?}\``,
      );
    return {
      id: String(entry.id ?? `c${index + 1}`),
      messages: checkedMessages(entry.messages, ["conversations", index, "messages"]),
      expected: entry.expected,
      source: "evaluator",
    };
  });
  const { disagreements } = await checkSuite(policy, conversations, sentences);
  return {
    conversations: conversations.length,
    agree: conversations.length - disagreements.length,
    disagreements: disagreements.map((entry) => ({ ...entry, text: disagreementText(entry) })),
  };
}

/**
 * The messages grounded by the policy's labeler rules where they carry no `mentor` fields (no
 * model here: what only a model could ground stays ungrounded), and each message that could not
 * be grounded. With `strictGrounding`, an ungrounded request is an error.
 */
async function grounded(
  policy: Policy,
  raw: ChatMessage[],
  options: { strictGrounding?: boolean },
): Promise<{ messages: unknown[]; ungrounded: { message: number; kind: string; error: string }[] }> {
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
  const monitor = evaluator.monitorOf(messages);
  const decision = monitor.decide(call);
  if (!needsSolver(decision)) return decision;
  const solver = new SolverClient();
  try {
    return await monitor.repairWithSolver(decision, solver);
  } finally {
    await solver.close();
  }
}

function parseCall(text: string): ProposedCall {
  let call: unknown;
  try {
    call = JSON.parse(text);
  } catch (error) {
    throw new MentorError("MNT_ERR_BAD_INPUT", `--call is not valid JSON: ${(error as Error).message}`);
  }
  checkDepth(call, "--call");
  const { name, arguments: args } = (call ?? {}) as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string") {
    throw new MentorError("MNT_ERR_BAD_INPUT", '--call must look like {"name": "tool", "arguments": {...}}');
  }
  return { name, arguments: parseArguments(args ?? {}, "--call arguments") };
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
