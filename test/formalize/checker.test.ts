import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  checkSuite,
  contests,
  formatExample,
  policyText,
  quotesManual,
  readConversations,
  sentencesOfPolicy,
  splitManual,
  type TestConversation,
  toolsSection,
} from "../../src/formalize/index.js";
import type { ChatTool } from "../../src/openai/index.js";
import { loadPolicy, parsePolicy } from "../../src/policy/index.js";
import * as transcript from "./transcripts.js";

const travel = loadPolicy(fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url)));
const sentences = Object.entries(travel.manual).map(([id, text]) => ({ id, text }));
const sentenceIds = new Set(sentences.map((sentence) => sentence.id));

/** The evaluator's compact conversations, read as the loop reads them. */
function suite(items: unknown[]): TestConversation[] {
  const { conversations, problems } = readConversations({ conversations: items }, sentenceIds);
  assert.deepEqual(problems, []);
  return conversations;
}

const toChicago = { origin: "Toronto", destination: "Chicago" };
const distance = (km: number) => ({
  name: "check_distance",
  arguments: toChicago,
  output: `It is ${km} km.`,
});
const seats = { name: "check_seats", arguments: toChicago, output: "12 seats available" };
const flight = (travel_class: string) => ({
  name: "book_flight",
  arguments: { ...toChicago, travel_class },
  output: '{"status": "confirmed"}',
});
const request = "Please book a trip from Toronto to Chicago.";

describe("the conflict checker", () => {
  it("agrees where the travel policy's verdict is the label, and lists each disagreement with its kind and rules", async () => {
    const conversations = suite([
      { request, calls: [distance(840), seats, flight("economy")], label: "compliant" },
      { request, calls: [seats, flight("economy")], label: "violation", sentence: "P1" },
      // Wrong labels: a compliant run labelled a violation, a violation labelled compliant,
      // and a violation of P3 labelled as one of P2.
      { request, calls: [distance(840), seats, flight("economy")], label: "violation", sentence: "P5" },
      { request, calls: [distance(840), flight("economy")], label: "compliant" },
      { request, calls: [distance(840), seats, flight("business")], label: "violation", sentence: "P2" },
      // A duty left open: P4 (book the requested trip) is broken at the end.
      { request, calls: [distance(840)], label: "violation", sentence: "P4" },
    ]);
    const { disagreements, verdicts } = await checkSuite(travel, conversations, sentences);
    assert.deepEqual(
      disagreements.map((entry) => [
        entry.conversation,
        entry.kind,
        entry.got.compliant,
        entry.got.sentences,
      ]),
      [
        ["c3", "verdict", true, []],
        ["c4", "verdict", false, ["P5"]],
        ["c5", "sentence", false, ["P3"]],
      ],
    );
    assert.deepEqual(verdicts.get("c2")?.rules, ["P1"]);
    assert.deepEqual(verdicts.get("c6")?.sentences, ["P4"]);
  });

  it("maps split rules to their sentence (P4_mode → P4) and a tool the policy lacks to a disagreement", async () => {
    const map = sentencesOfPolicy(travel, sentences);
    assert.equal(map.get("P4_mode"), "P4");
    assert.equal(map.get("P4_class"), "P4");
    assert.equal(map.get("P3"), "P3");
    const conversations = suite([
      { request, calls: [{ name: "cancel_trip", arguments: toChicago, output: "ok" }], label: "compliant" },
    ]);
    const { disagreements } = await checkSuite(travel, conversations, sentences);
    assert.equal(disagreements[0]?.kind, "verdict");
  });

  it("gives the same result on the same policy and suite (deterministic)", async () => {
    const conversations = suite(transcript.evaluatorSuite.conversations.map((item) => ({ ...item })));
    const policy = parsePolicy(transcript.fixedPolicy, "travel.yaml");
    const manual = splitManual(transcript.manual);
    const first = await checkSuite(policy, conversations, manual);
    const second = await checkSuite(policy, conversations, manual);
    assert.deepEqual(second.disagreements, first.disagreements);
    assert.deepEqual(
      first.disagreements.map((entry) => entry.conversation),
      ["c3"],
    );
  });
});

describe("formalize helpers", () => {
  it("splits a manual into sentences with ids: written ids, numbered items, bullets and prose", () => {
    assert.deepEqual(
      splitManual(transcript.manual).map((sentence) => sentence.id),
      ["P1", "P2", "P3"],
    );
    const mock = splitManual(
      '# Mock Domain Policy\n\n1. Each task must have a title\n2. Task status can only be "pending" or "completed"\n',
    );
    assert.deepEqual(mock, [
      { id: "S1", text: "Each task must have a title" },
      { id: "S2", text: 'Task status can only be "pending" or "completed"' },
    ]);
    assert.deepEqual(
      splitManual("Greet the user. Then look up the order.\n- Refund only once.").map(
        (sentence) => sentence.id,
      ),
      ["S1", "S2", "S3"],
    );
  });

  it("finds the policy and the contests in an answer, and checks quotes against the manual", () => {
    assert.equal(policyText(transcript.translatorFixAnswer), transcript.fixedPolicy);
    assert.equal(policyText('{"policy": "policy: x\\n"}'), "policy: x\n");
    assert.equal(policyText("no policy here"), undefined);
    const [contest] = contests(transcript.translatorContestAnswer);
    assert.deepEqual([contest?.conversation, contest?.compliant], ["c3", true]);
    assert.ok(quotesManual("never fly a route shorter than 500 km", transcript.manual));
    assert.ok(!quotesManual("trains are always fine", transcript.manual));
  });

  it("the translator's format example loads clean, and a tools section from OpenAI tools loads", () => {
    const example = parsePolicy(formatExample, "example.yaml");
    assert.deepEqual(
      example.rules.map((rule) => rule.id),
      ["R1", "R2", "R2_claim"],
    );
    const section = toolsSection(transcript.tools as ChatTool[]);
    const policy = parsePolicy(
      `policy: t\nmanual: {X1: Do it.}\n${section}\npropositions: {train: {tool: book_train}}\nrules: [{id: X1, ltl: "F train"}]\n`,
      "tools.yaml",
    );
    assert.deepEqual([...policy.tools.keys()], ["check_distance", "book_train", "book_flight"]);
  });

  it("skips malformed evaluator items with a reason", () => {
    const { conversations, problems } = readConversations(
      { conversations: [{ request: "hi", calls: [], label: "violation", sentence: "Z9" }, { calls: [] }] },
      sentenceIds,
    );
    assert.equal(conversations.length, 0);
    assert.equal(problems.length, 2);
  });
});
