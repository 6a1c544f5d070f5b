import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  EngineGenerator,
  type Generation,
  type GenerationRequest,
  givenGrounding,
  runTurn,
  type TurnOptions,
  type TurnResult,
  UpstreamGenerator,
} from "../../src/agent/index.js";
import { MentorError } from "../../src/errors/index.js";
import { Evaluator } from "../../src/evaluator/index.js";
import { Judge } from "../../src/evaluator/judge.js";
import { Engine } from "../../src/llm/index.js";
import type { ChatMessage, ChatTool } from "../../src/openai/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { SolverClient } from "../../src/smt/index.js";
import { Conversation } from "../support/conversation.js";
import {
  makeTravelModel,
  travelMessages,
  travelPolicyFile,
  travelTool,
  travelTools,
} from "../support/tiny-travel.js";

// A tiny model and the real evaluator with the travel policy (see test/support/tiny-travel.ts).
const policy = loadPolicy(travelPolicyFile);
const messages = travelMessages;
const directory = mkdtempSync(join(tmpdir(), "mentor-agent-"));
after(() => rmSync(directory, { recursive: true, force: true }));

describe("a shielded turn on a tiny model with the travel policy", () => {
  let engine: Engine;
  let base: Omit<TurnOptions, "mode">;
  const evaluator = new Evaluator(policy);
  before(async () => {
    const path = await makeTravelModel(join(directory, "llama.gguf"));
    engine = await Engine.load({ modelPath: path, contextSize: 2048 });
    base = {
      messages,
      tools: travelTools,
      evaluator,
      grounder: givenGrounding,
      generator: new EngineGenerator(engine),
      maxTokens: 48,
    };
  });
  after(async () => {
    await engine?.dispose();
  });

  const verdictOf = (result: TurnResult) => {
    const call = result.message.tool_calls?.[0]?.function;
    assert.ok(call, JSON.stringify(result.message));
    return evaluator.decide(messages, { name: call.name, arguments: JSON.parse(call.arguments) }).verdict;
  };

  it("prompt mode: a blocked call is not returned; the model regenerates into an allowed one", async () => {
    let regenerated: TurnResult | undefined;
    for (let seed = 0; seed < 40 && regenerated === undefined; seed++) {
      const result = await runTurn({ ...base, mode: "prompt", toolChoice: "required", seed });
      if (result.mentor.exhausted) continue;
      assert.equal(result.finishReason, "tool_calls");
      assert.equal(verdictOf(result), "allow");
      if (result.mentor.blocked > 0) regenerated = result;
    }
    assert.ok(regenerated, "some seed proposes a blocked call first");
    const [first, ...rest] = regenerated.mentor.attempts;
    assert.equal(first?.calls[0]?.verdict, "block");
    // A booking before its route's check (P1); of a route nobody asked for, also P4_only.
    assert.ok(first?.calls[0]?.rules.includes("P1"), JSON.stringify(first));
    assert.match(first?.calls[0]?.feedback ?? "", /^\[SHIELD\] Blocked book_train/);
    const last = rest.at(-1);
    assert.equal(last?.calls[0]?.verdict, "allow");
    assert.equal(regenerated.message.tool_calls?.[0]?.function.name, last?.calls[0]?.call.name);
    // The answer's usage is the generation it comes from; the turn's counts the blocked one too.
    assert.deepEqual(regenerated.usage, last?.usage);
    assert.ok(regenerated.mentor.usage.completionTokens > (last?.usage.completionTokens ?? 0));
  });

  it("prompt mode: ending while a duty is open is refused up to the policy's bound, then allowed", async () => {
    let answered: TurnResult | undefined;
    for (let seed = 0; seed < 40 && answered === undefined; seed++) {
      // Stop strings end the random text early, so that the model answers without a call.
      const result = await runTurn({ ...base, mode: "prompt", seed, stop: ["e", "a", "o"] });
      if (result.mentor.doneRefusals > 0 && result.message.tool_calls === undefined) answered = result;
    }
    assert.ok(answered, "some seed answers without a call until the refusals run out");
    assert.equal(answered.mentor.doneRefusals, policy.maxDoneRefusals);
    assert.equal(answered.finishReason, "stop");
    const refused = answered.mentor.attempts.filter((attempt) => attempt.done?.refused);
    assert.equal(refused.length, policy.maxDoneRefusals);
    assert.match(refused[0]?.done?.feedback ?? "", /^\[SHIELD\] You cannot finish yet\. Open duties: P4/);
    assert.deepEqual(answered.mentor.attempts.at(-1)?.done, { allowed: false, refused: false });
  });

  it("prompt mode: an answer cut by max_tokens is refused like any other while a duty is open", async () => {
    let answered: TurnResult | undefined;
    for (let seed = 0; seed < 40 && answered === undefined; seed++) {
      const result = await runTurn({ ...base, mode: "prompt", seed, maxTokens: 3 }).catch(() => undefined);
      if (result?.finishReason === "length" && result.mentor.doneRefusals > 0) answered = result;
    }
    assert.ok(answered, "some seed writes text until max_tokens, turn after turn");
    assert.equal(answered.mentor.doneRefusals, policy.maxDoneRefusals);
    assert.deepEqual(
      answered.mentor.attempts.map((attempt) => [attempt.finishReason, attempt.done?.refused]),
      [...Array(policy.maxDoneRefusals).fill(["length", true]), ["length", false]],
    );
  });

  it("token mode never returns a blocked call; none mode does and records the verdict", async () => {
    let blockedInNone = 0;
    for (let seed = 0; seed < 12; seed++) {
      const shielded = await runTurn({ ...base, mode: "token", toolChoice: "required", seed });
      if (!shielded.mentor.exhausted) assert.equal(verdictOf(shielded), "allow");
      for (const attempt of shielded.mentor.attempts)
        for (const call of attempt.calls) assert.notEqual(call.call.name, "book_train", "unsafe tool masked");
      const plain = await runTurn({ ...base, mode: "none", toolChoice: "required", seed });
      assert.equal(plain.mentor.attempts.length, 1);
      const recorded = plain.mentor.attempts[0]?.calls[0];
      assert.equal(recorded?.verdict, verdictOf(plain));
      if (recorded?.verdict === "block") {
        blockedInNone++;
        assert.ok(recorded.rules.includes("P1"), JSON.stringify(recorded));
      }
    }
    assert.ok(blockedInNone > 0, "none mode returns calls the evaluator blocks");
  });

  it("token mode steers a repeat of the answered distance check to the booking; none mode repeats it", async () => {
    const checked = new Conversation(
      [{ name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } }],
      "Book me a train from Toronto to Chicago.",
    ).call("check_distance", { origin: "Toronto", destination: "Chicago" }, { text: "720 km", label: "long" })
      .messages as ChatMessage[];
    let repeatsInNone = 0;
    for (let seed = 0; seed < 12; seed++) {
      const turn = (mode: "token" | "none") =>
        runTurn({ ...base, messages: checked, mode, toolChoice: "required", seed });
      const names = (result: TurnResult) =>
        (result.message.tool_calls ?? []).map((call) => call.function.name);
      assert.deepEqual(names(await turn("token")), ["book_train"]);
      if (names(await turn("none")).includes("check_distance")) repeatsInNone++;
    }
    assert.ok(repeatsInNone > 0, "unshielded, the model repeats the check");
  });

  it("refuses with a clear code when tool_choice asks for what the policy forbids", async () => {
    await assert.rejects(
      runTurn({
        ...base,
        mode: "prompt",
        toolChoice: { type: "function", function: { name: "book_train" } },
      }),
      (error: unknown) => error instanceof MentorError && error.code === "MNT_ERR_NOTHING_ALLOWED",
    );
  });

  it("refuses the token shield with a generator that cannot apply it", async () => {
    await assert.rejects(
      runTurn({
        ...base,
        mode: "token",
        generator: {
          tokenShield: false,
          generate: () => Promise.reject(new Error("the turn must not generate")),
        },
      }),
      (error: unknown) => error instanceof MentorError && error.code === "MNT_ERR_TOKEN_SHIELD_UNAVAILABLE",
    );
  });
});

describe("parallel calls in one message", () => {
  // An OpenAI-compatible upstream that proposes the same booking twice in one message, then once.
  const route = { origin: "Toronto", destination: "Chicago" };
  const booking = (id: string) => ({
    id,
    type: "function",
    function: { name: "book_train", arguments: JSON.stringify(route) },
  });
  let requests = 0;
  const upstream = createServer((_request, response) => {
    requests++;
    const toolCalls = requests === 1 ? [booking("u1"), booking("u2")] : [booking("u3")];
    response.setHeader("content-type", "application/json");
    response.end(
      JSON.stringify({
        id: "up",
        object: "chat.completion",
        created: 0,
        model: "scripted",
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: { role: "assistant", content: null, tool_calls: toolCalls },
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  let url = "";
  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  after(() => upstream.close());

  const evaluator = new Evaluator(policy);
  const checked: ChatMessage[] = [
    ...messages,
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "c1",
          type: "function",
          function: { name: "check_distance", arguments: JSON.stringify(route) },
        },
      ],
    },
    { role: "tool", tool_call_id: "c1", content: "Toronto to Chicago: 702 km.", mentor: { label: "long" } },
  ];
  const turn = (mode: "none" | "prompt") =>
    runTurn({
      messages: checked,
      tools: travelTools,
      mode,
      evaluator,
      grounder: givenGrounding,
      generator: new UpstreamGenerator({ url, model: "scripted" }),
    });

  it("judges each call after the ones before it: the second booking of a route is blocked (P6)", async () => {
    requests = 0;
    const result = await turn("prompt");
    const [first, second] = result.mentor.attempts;
    assert.deepEqual(
      first?.calls.map((call) => [call.verdict, call.rules]),
      [
        ["allow", []],
        ["block", ["P6"]],
      ],
    );
    assert.equal(result.mentor.blocked, 1);
    assert.deepEqual(
      second?.calls.map((call) => call.verdict),
      ["allow"],
    );
    assert.equal(result.message.tool_calls?.length, 1);
  });

  it("judges the calls on the run itself: no kept prefix per call, the verdicts of a conversation that ends in their message", async () => {
    requests = 0;
    const fresh = new Evaluator(policy);
    fresh.next(checked);
    const kept = fresh.cachedMessages;
    const result = await runTurn({
      messages: checked,
      tools: travelTools,
      mode: "none",
      evaluator: fresh,
      grounder: givenGrounding,
      generator: new UpstreamGenerator({ url, model: "scripted" }),
    });
    assert.equal(fresh.cachedMessages, kept);
    const calls = result.message.tool_calls ?? [];
    const proposed = calls.map((call) => ({
      name: call.function.name,
      arguments: JSON.parse(call.function.arguments),
    }));
    const sequential = proposed.map((call, index) =>
      fresh.decide(
        index === 0
          ? checked
          : [...checked, { role: "assistant", content: null, tool_calls: calls.slice(0, index) }],
        call,
      ),
    );
    assert.deepEqual(
      result.mentor.attempts[0]?.calls.map((call) => [call.verdict, call.rules]),
      sequential.map((decision) => [decision.verdict, decision.violations.map((finding) => finding.rule)]),
    );
  });

  it("none mode returns both calls and records the second one's violation", async () => {
    requests = 0;
    const result = await turn("none");
    assert.equal(result.message.tool_calls?.length, 2);
    assert.deepEqual(
      result.mentor.attempts[0]?.calls.map((call) => call.verdict),
      ["allow", "block"],
    );
  });
});

describe("the token shield's sets for a turn", () => {
  const evaluator = new Evaluator(policy);
  /** Answers with the distance check and keeps the token shield it was asked to apply. */
  class RecordingGenerator {
    readonly tokenShield = true;
    readonly seen: GenerationRequest["tokenShield"][] = [];
    async generate(request: GenerationRequest): Promise<Generation> {
      this.seen.push(request.tokenShield);
      return {
        content: null,
        toolCalls: [{ name: "check_distance", arguments: { origin: "Toronto", destination: "Chicago" } }],
        finishReason: "tool_calls",
        usage: { promptTokens: 0, completionTokens: 0 },
      };
    }
  }

  it("fails closed: a request tool the policy does not declare is masked, and a turn without tools may not end with duties open", async () => {
    const generator = new RecordingGenerator();
    const extra = { ...travelTool("delete_all_bookings") };
    await runTurn({
      messages,
      tools: [...travelTools, extra],
      evaluator,
      grounder: givenGrounding,
      generator,
      mode: "token",
    });
    assert.ok(generator.seen[0]?.sets.unsafeTools?.includes("delete_all_bookings"));
    const answering = {
      tokenShield: true,
      async generate(): Promise<Generation> {
        return {
          content: "Done.",
          toolCalls: [],
          finishReason: "stop",
          usage: { promptTokens: 0, completionTokens: 0 },
        };
      },
    };
    const base = {
      messages,
      evaluator,
      grounder: givenGrounding,
      generator: answering,
      mode: "prompt" as const,
    };
    const withoutTools = await runTurn(base);
    assert.equal(withoutTools.mentor.doneRefusals, policy.maxDoneRefusals);
    // A client that asks for text (tool_choice none) may end.
    const asked = await runTurn({ ...base, tools: travelTools, toolChoice: "none" });
    assert.equal(asked.mentor.doneRefusals, 0);
  });

  it("redirects a wanted booking, and the end of the turn, to the check it needs; mentor.intent false turns that off", async () => {
    const turn = async (intent?: boolean) => {
      const generator = new RecordingGenerator();
      await runTurn({
        messages,
        tools: travelTools,
        evaluator,
        grounder: givenGrounding,
        generator,
        mode: "token",
        ...(intent !== undefined ? { intent } : {}),
      });
      return generator.seen[0]?.sets;
    };
    const route = { origin: "Toronto", destination: "Chicago" };
    const on = await turn();
    assert.deepEqual(on?.redirects, [
      { tool: "book_train", to: "check_distance", arguments: route },
      { tool: "book_flight", to: "check_distance", arguments: route },
    ]);
    assert.deepEqual(on?.doneRedirect, { to: "check_distance", arguments: route });
    const off = await turn(false);
    assert.equal(off?.redirects, undefined);
    assert.equal(off?.doneRedirect, undefined);
    assert.deepEqual(off?.unsafeTools, ["book_train", "book_flight"]);
  });
});

describe("argument repair by the solver in a turn", () => {
  const intake = loadPolicy(
    fileURLToPath(new URL("../../../test/evaluator/fixtures/patient-intake.yaml", import.meta.url)),
  );
  const evaluator = new Evaluator(intake);
  const conversation = new Conversation([{ name: "admit", arguments: { patient_id: "p1" } }])
    .call("validate_insurance", { patient_id: "p1" }, { json: { status: "active" } })
    .call("check_allergies", { patient_id: "p1" }, { json: { allergies: "penicillin" } })
    .call("lookup_balance", { patient_id: "p1" }, { json: { outstanding: 120 } });
  /** Proposes a registration no candidate value repairs (the notes lack the allergy), then gives up. */
  const scripted = (): TurnOptions["generator"] => {
    let attempt = 0;
    return {
      tokenShield: false,
      async generate(): Promise<Generation> {
        attempt++;
        return attempt === 1
          ? {
              content: null,
              toolCalls: [
                {
                  name: "register_patient",
                  arguments: { patient_id: "p1", insurance_status: "premium", notes: "walk-in" },
                },
              ],
              finishReason: "tool_calls",
              usage: { promptTokens: 0, completionTokens: 0 },
            }
          : {
              content: "ok",
              toolCalls: [],
              finishReason: "stop",
              usage: { promptTokens: 0, completionTokens: 0 },
            };
      },
    };
  };
  const registerPatient: ChatTool = {
    type: "function",
    function: {
      name: "register_patient",
      parameters: {
        type: "object",
        properties: {
          patient_id: { type: "string" },
          insurance_status: { type: "string" },
          notes: { type: "string" },
        },
      },
    },
  };
  const solver = new SolverClient({ timeoutMs: 20_000 });
  after(() => solver.close());

  const turn = (withSolver: boolean) =>
    runTurn({
      messages: conversation.messages as ChatMessage[],
      tools: [registerPatient],
      evaluator,
      grounder: givenGrounding,
      generator: scripted(),
      mode: "prompt",
      ...(withSolver ? { solver: () => solver } : {}),
    });

  it("a call only the solver can repair gets the solver's repair as advice", async () => {
    const without = await turn(false);
    assert.deepEqual(without.mentor.repairs, []);
    const withSolver = await turn(true);
    const repair = withSolver.mentor.repairs[0];
    assert.equal(repair?.kind, "repair");
    assert.equal(repair?.call.arguments.insurance_status, "active");
    assert.match(String(repair?.call.arguments.notes), /allergy: penicillin/);
    assert.match(withSolver.mentor.attempts[0]?.calls[0]?.feedback ?? "", /Instead: register_patient\(/);
  });

  it("the solver repairs the turn's own decision: the call is judged once either way", async () => {
    // Counts the judge's decisions on proposed calls (the advice searches' hypothetical ones pass false).
    const decide = Judge.prototype.decide;
    let judged = 0;
    Judge.prototype.decide = function (this: Judge, ...args: Parameters<Judge["decide"]>) {
      if (args[2]) judged++;
      return decide.apply(this, args);
    };
    const judgedIn = async (withSolver: boolean) => {
      judged = 0;
      const result = await turn(withSolver);
      return { judged, repairs: result.mentor.repairs.length };
    };
    try {
      const without = await judgedIn(false);
      const withSolver = await judgedIn(true);
      assert.deepEqual([without.repairs, withSolver.repairs], [0, 1]);
      assert.equal(withSolver.judged, without.judged);
    } finally {
      Judge.prototype.decide = decide;
    }
  });
});
