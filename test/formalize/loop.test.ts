import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { jsonSchemaGrammar } from "../../src/base/json-grammar.js";
import { AgentEndpoint, type FormalizeResult, formalize, reviewPolicy } from "../../src/formalize/index.js";
import { declarationsOf, rulesSchema } from "../../src/formalize/rules-step.js";
import type { ChatTool } from "../../src/openai/index.js";
import { parsePolicy, policyJsonSchema } from "../../src/policy/index.js";
import { Gbnf } from "../support/gbnf.js";
import { reply, type Script, ScriptedEndpoint } from "../support/scripted-endpoint.js";
import * as transcript from "./transcripts.js";

// The loop's control flow against a real HTTP server that answers from recorded transcripts.
const endpoint = new ScriptedEndpoint();
let url = "";
const directory = mkdtempSync(join(tmpdir(), "mentor-formalize-"));
before(async () => {
  url = `${await endpoint.start()}/v1`;
});
beforeEach(() => endpoint.reset());
after(async () => {
  await endpoint.close();
  rmSync(directory, { recursive: true, force: true });
});

/** A chat completion whose message says `content`. */
function answer(content: string): Script {
  return reply(200, {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 0,
    model: "scripted",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  });
}

/** The system prompt of the i-th request the endpoint received. */
function systemPrompt(index: number): string {
  const messages = (endpoint.requests[index]?.body.messages ?? []) as { content: string }[];
  return messages[0]?.content ?? "";
}

/** The text of the last message of the i-th request the endpoint received. */
function lastMessage(index: number): string {
  const messages = endpoint.requests[index]?.body.messages as { content: string }[];
  return messages[messages.length - 1]?.content ?? "";
}

function run(options: { iterations?: number; repairs?: number } = {}): Promise<FormalizeResult> {
  return formalize({
    manual: transcript.manual,
    tools: transcript.tools as ChatTool[],
    endpoint: new AgentEndpoint({ url, model: "scripted" }),
    file: "travel.yaml",
    ...options,
  });
}

describe("mentor formalize: the loop against a scripted endpoint", () => {
  it("repairs a load error, checks the suite, rules on a contest and stops on agreement", async () => {
    endpoint.script = [
      answer(transcript.translatorFirstAnswer),
      answer(transcript.translatorFixAnswer),
      answer(transcript.evaluatorAnswer),
      answer(transcript.translatorContestAnswer),
      answer(transcript.orchestratorAnswer),
    ];
    const result = await run();
    assert.equal(result.outcome, "agreed");
    assert.deepEqual(
      endpoint.requests.map(
        (request) =>
          /^You are the (\w+)/.exec((request.body.messages as { content: string }[])[0]?.content ?? "")?.[1],
      ),
      ["translator", "translator", "evaluator", "translator", "orchestrator"],
    );
    // Round 1: the load error went back verbatim (file:line:column, path, rule), then the fix loaded.
    const [first, second] = result.rounds;
    assert.ok(first && second);
    assert.equal(first.candidates.length, 2);
    const problem = first.candidates[0]?.problems.join("\n") ?? "";
    assert.match(problem, /travel\.yaml:\d+:\d+ .*rules\[1\].*shrt/);
    assert.ok(lastMessage(1).includes(problem.split("\n")[0] as string), lastMessage(1));
    assert.deepEqual(first.candidates[1]?.problems, []);
    // The evaluator's wrong label on c3 is the one disagreement of round 1.
    assert.deepEqual(
      first.disagreements.map((entry) => [entry.conversation, entry.kind, entry.got.compliant]),
      [["c3", "verdict", true]],
    );
    assert.ok(
      lastMessage(3).includes("c3: expected violation of P2, the policy says compliant"),
      lastMessage(3),
    );
    // The contest: quoted from the manual, decided by the orchestrator for the translator.
    assert.equal(result.rulings.length, 1);
    assert.deepEqual(
      [result.rulings[0]?.conversation, result.rulings[0]?.by, result.rulings[0]?.winner],
      ["c3", "orchestrator", "translator"],
    );
    assert.match(lastMessage(4), /The evaluator labelled it: violation of P2/);
    assert.deepEqual(result.suite.find((conversation) => conversation.id === "c3")?.expected, {
      compliant: true,
    });
    assert.equal(second.contests, 1);
    assert.deepEqual(second.disagreements, []);
    assert.equal(result.policyText, transcript.fixedPolicy);
    assert.deepEqual(Object.keys(result.agents).sort(), ["evaluator", "orchestrator", "translator"]);
  });

  it("gives up after the repairs when no candidate loads: outcome no-policy, every problem kept", async () => {
    endpoint.script = [
      answer("I am not sure how to write this policy."),
      answer(transcript.translatorFirstAnswer),
      answer(transcript.translatorFirstAnswer),
    ];
    const result = await run({ iterations: 1, repairs: 2 });
    assert.equal(result.outcome, "no-policy");
    assert.equal(result.policyText, undefined);
    assert.equal(result.rounds[0]?.candidates.length, 3);
    assert.match(result.rounds[0]?.candidates[0]?.problems[0] ?? "", /no ```yaml block/);
    assert.match(result.rounds[0]?.candidates[2]?.problems[0] ?? "", /shrt/);
    assert.equal(endpoint.requests.length, 3);
  });

  it("rejects a contest whose quote is not in the manual without asking the orchestrator", async () => {
    const forged = transcript.translatorContestAnswer.replace(
      `"quote": "${transcript.contestQuote}"`,
      '"quote": "Trains are always compliant."',
    );
    endpoint.script = [
      answer(transcript.translatorFixAnswer),
      answer(transcript.evaluatorAnswer),
      answer(forged),
    ];
    const result = await run({ iterations: 2 });
    assert.equal(result.outcome, "disagreements");
    assert.deepEqual(
      result.rulings.map((ruling) => [ruling.by, ruling.winner]),
      [["checker", "evaluator"]],
    );
    assert.equal(endpoint.requests.length, 3);
    assert.deepEqual(
      result.rounds.map((round) => round.disagreements.length),
      [1, 1],
    );
  });

  it("--review: paraphrases each rule without its sentence and flags what the judge finds different", async () => {
    const policy = parsePolicy(transcript.fixedPolicy, "travel.yaml");
    endpoint.script = [
      answer("Book a trip only after checking its distance."),
      answer('{"same": true, "difference": ""}'),
      answer("Never book a flight on a route."),
      answer('{"same": false, "difference": "the sentence forbids flights only on routes under 500 km"}'),
      answer("A flight must be economy unless the request is urgent."),
      answer("not json"),
    ];
    const review = await reviewPolicy(policy, new AgentEndpoint({ url, model: "scripted" }));
    assert.deepEqual(
      review.map((entry) => [entry.rule, entry.verdict]),
      [
        ["P1", "same"],
        ["P2", "different"],
        ["P3", "unjudged"],
      ],
    );
    // The paraphraser never sees the sentence; the judge sees both.
    for (const index of [0, 2, 4]) {
      const text = JSON.stringify(endpoint.requests[index]?.body.messages);
      for (const sentence of Object.values(policy.manual)) assert.ok(!text.includes(sentence), text);
    }
    assert.ok(lastMessage(3).includes(policy.manual.P2 as string));
  });

  it("the command writes the policy, the suite, the report and the transcript; the suite passes mentor verify --suite", async () => {
    endpoint.script = [
      answer(transcript.translatorFirstAnswer),
      answer(transcript.translatorFixAnswer),
      answer(transcript.evaluatorAnswer),
      answer(transcript.translatorContestAnswer),
      answer(transcript.orchestratorAnswer),
    ];
    const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
    const manualFile = join(directory, "manual.md");
    const toolsFile = join(directory, "tools.json");
    writeFileSync(manualFile, transcript.manual);
    writeFileSync(toolsFile, JSON.stringify(transcript.tools));
    const out = join(directory, "travel.yaml");
    const command = async (args: string[]) => {
      const child = spawn(process.execPath, [main, ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.resume();
      const [code] = await once(child, "exit");
      return { code, stdout };
    };
    const formalized = await command([
      "formalize",
      ...["--manual", manualFile, "--tools", toolsFile, "--endpoint", url, "--model", "scripted"],
      ...["--labeler", "rules", "--out", out],
    ]);
    assert.equal(formalized.code, 0, formalized.stdout);
    assert.match(formalized.stdout, /outcome: agreed/);
    assert.equal(readFileSync(out, "utf8"), transcript.fixedPolicy);
    const report = readFileSync(join(directory, "travel.report.md"), "utf8");
    assert.match(report, /\| 1 \| 2 \| 1 \| yes \| 1 \| 0 \|/);
    assert.match(report, /c3: evaluator violation of P2, translator compliant .*\*\*translator\*\* wins/);
    const transcriptLines = readFileSync(join(directory, "travel.transcript.jsonl"), "utf8")
      .trim()
      .split("\n");
    assert.equal(transcriptLines.length, 5);
    const suite = JSON.parse(readFileSync(join(directory, "travel.suite.json"), "utf8")) as {
      conversations: unknown[];
    };
    assert.equal(suite.conversations.length, 5);
    const verified = await command([
      "verify",
      "--policy",
      out,
      "--suite",
      join(directory, "travel.suite.json"),
    ]);
    assert.equal(verified.code, 0, verified.stdout);
    assert.deepEqual(JSON.parse(verified.stdout).disagreements, []);
  });
});

describe("mentor formalize: the translator answers under the policy's schema", () => {
  function runWith(jsonSchema: boolean): Promise<FormalizeResult> {
    return formalize({
      manual: transcript.manual,
      tools: transcript.tools as ChatTool[],
      endpoint: new AgentEndpoint({ url, model: "scripted", jsonSchema }),
      file: "travel.yaml",
      iterations: 1,
    });
  }

  it("asks with the schema derived from the loader's, reads a policy written as JSON and counts the answers that load", async () => {
    const asJson = JSON.stringify(parse(transcript.fixedPolicy));
    endpoint.script = [
      answer("policy: travel\nrules: [{"),
      answer(asJson),
      answer(transcript.evaluatorAnswer),
    ];
    const result = await runWith(true);
    const format = endpoint.requests[0]?.body.response_format as { json_schema: { schema: unknown } };
    assert.deepEqual(format.json_schema.schema, policyJsonSchema());
    assert.match(systemPrompt(0), /as one JSON object/);
    assert.deepEqual(
      endpoint.requests[1]?.body.response_format,
      endpoint.requests[0]?.body.response_format,
      "the repair is asked under the schema too",
    );
    assert.deepEqual(
      result.rounds[0]?.candidates.map((candidate) => [candidate.loaded, candidate.problems.length]),
      [
        [false, 1],
        [true, 0],
      ],
    );
    assert.ok(result.policyText && parsePolicy(result.policyText, "travel.yaml"));
  });

  it("with --no-json-schema asks for YAML, without response_format", async () => {
    endpoint.script = [answer(transcript.translatorFixAnswer), answer(transcript.evaluatorAnswer)];
    const result = await runWith(false);
    assert.equal(endpoint.requests[0]?.body.response_format, undefined);
    assert.match(systemPrompt(0), /```yaml block/);
    assert.equal(result.rounds[0]?.candidates[0]?.loaded, true);
  });

  // Issue 32 item 7: an answer that fails on references (an undeclared proposition, an id used
  // twice) gets its rules written again under a grammar of its own declarations.
  const broken = parse(transcript.brokenPolicy) as { constraints: Record<string, unknown>[] };
  broken.constraints.push({ id: "P1", on: "train(route)", require: "true" });
  const rulesAnswer = {
    P1: [{ ltl: "G((flight(route) | train(route)) -> O checked(route))" }],
    P2: [{ ltl: "G(short(route) -> G !flight(route))" }, { ltl: "F true", applies_to: "requested" }],
    P3: [
      { on: "flight(route)", require: "a.travel_class == 'economy' || task.request_travel.urgent == true" },
    ],
  };

  it("rewrites rules that name undeclared propositions or reuse an id under its declarations' grammar", async () => {
    endpoint.script = [
      answer(JSON.stringify(broken)),
      answer(JSON.stringify(rulesAnswer)),
      answer(transcript.evaluatorAnswer),
    ];
    const result = await runWith(true);
    const format = endpoint.requests[1]?.body.response_format as { json_schema: { schema: unknown } };
    const schema = format.json_schema.schema;
    const declarations = declarationsOf(broken);
    assert.ok(declarations);
    assert.deepEqual(schema, rulesSchema(declarations));
    assert.match(lastMessage(1), /unknown proposition shrt/);
    assert.match(lastMessage(1), /duplicate id P1/);
    assert.match(lastMessage(1), /checked\(route\), short\(route\), flight\(route\), train\(route\)/);
    // What the first answer wrote cannot be written under the grammar; the rewrite can.
    const grammar = new Gbnf(jsonSchemaGrammar(schema));
    assert.equal(
      grammar.matches(JSON.stringify({ P2: [{ ltl: "G(shrt(route) -> G !flight(route))" }] })),
      false,
    );
    assert.ok(grammar.matches(JSON.stringify(rulesAnswer)));
    assert.deepEqual(
      result.rounds[0]?.candidates.map((candidate) => candidate.loaded),
      [false, true],
    );
    const policy = parsePolicy(result.policyText ?? "", "travel.yaml");
    assert.deepEqual(
      [...policy.rules.map((rule) => rule.id), ...policy.constraints.map((constraint) => constraint.id)],
      ["P1", "P2", "P2_2", "P3"],
    );
    assert.equal(systemPrompt(2).startsWith("You are the evaluator"), true);
  });

  it("without a schema, the repair lists the declared propositions with the reference problems", async () => {
    endpoint.script = [answer(transcript.translatorFirstAnswer), answer(transcript.translatorFixAnswer)];
    await runWith(false).catch(() => undefined);
    assert.equal(endpoint.requests[1]?.body.response_format, undefined);
    assert.match(lastMessage(1), /unknown proposition shrt/);
    assert.match(lastMessage(1), /the only names a formula .* may use: checked\(route\), short\(route\)/);
  });
});
