import type OpenAI from "openai";
import type { Disagreement } from "./checker.js";
import { disagreementText } from "./checker.js";
import { conversationText, labelText, type TestConversation } from "./conversation.js";

/** The policy format in brief: what the translator writes (docs/policy.md is the full text). */
export const policyFormat = `A mentor policy is YAML:
policy: NAME
manual:            # sentence id -> the manual's sentence, verbatim
  P1: Check the distance of a route before any booking for it.
tools:             # the agent's tools (given below; keep them, add output/labels for text outputs)
  check_distance:
    parameters: {origin: string, destination: string}
    output: text                       # json (default) or text
    labels: {short: under 500 km, long: 500 km or more}   # text outputs: the labels to read
    labeler: {rules: [{label: short, regex: 'short'}], llm: true}
  book_flight:
    parameters: {origin: string, destination: string, travel_class: {enum: [economy, business]}}
task:              # facts read from the user's request, as pseudo calls
  request_travel:
    parameters: {origin: string, destination: string, urgent: boolean}
    grounding: {llm: true}
entities:          # what rules are tracked per: variable -> task call field
  route: {from: {request_travel: {x: origin, y: destination}}}
propositions:      # name(entities): a tool call, a predicate on its arguments a, its outcome o
  checked(route): {tool: check_distance, when: "a.origin == x && a.destination == y"}
  short(route): {tool: check_distance, when: "a.origin == x && a.destination == y", outcome: "o.label == 'short'"}
  flight(route): {tool: book_flight, when: "a.origin == x && a.destination == y"}
  booked: {tool: book_flight}          # a proposition without entities
rules:             # LTLf with past operators; the id is the sentence id (or ID_suffix with sentence:)
  - {id: P1, ltl: "G(flight(route) -> O checked(route))"}
  - {id: P2, ltl: "G(short(route) -> G !flight(route))"}
  - {id: P4, ltl: "F booked", applies_to: requested}
  - {id: P5, template: precedence, a: "checked(route)", b: "flight(route)"}
constraints:       # argument rules on one call; cannot read o
  - {id: P3, on: flight(route), require: "a.travel_class == 'economy' || task.request_travel.urgent == true"}
LTL: G always, F eventually, X next, U until, O once (in the past), H historically, Y yesterday,
S since; ! & | -> ; true false. Templates: existence, absence, init, response, precedence,
succession, notSuccession, chainResponse, chainPrecedence, respondedExistence, coExistence,
notCoExistence, choice, exclusiveChoice (with a, b, n).
Expressions: a.field, x, task.CALL.FIELD, o.field (outcome only), == != < <= > >= in && || !,
'strings', numbers, true false null, [lists], len(x), s.contains(t), last('tool'), count('tool').
Every rule and constraint cites a manual sentence by id. A sentence about what the assistant
says (not about tool calls) gets no rule.`;

/** One agent's chat request. */
export interface AgentPrompt {
  messages: OpenAI.ChatCompletionMessageParam[];
}

const translatorSystem = `You are the translator. You formalize a procedural manual into a mentor policy that a
runtime monitor enforces on an agent's tool calls.
${policyFormat}
Answer with the whole policy in one \`\`\`yaml block.`;

export function translatorFirst(input: { manual: string; tools: string; task?: string }): AgentPrompt {
  return {
    messages: [
      { role: "system", content: translatorSystem },
      {
        role: "user",
        content: [
          "The manual (sentence ids first):",
          input.manual,
          "",
          "The agent's tools, as the policy's tools section:",
          input.tools,
          ...(input.task ? ["", `What the agent's users ask for: ${input.task}`] : []),
          "",
          "Write the policy.",
        ].join("\n"),
      },
    ],
  };
}

/** The candidate does not load or lint clean: the problems verbatim, and the candidate. */
export function translatorRepair(input: {
  manual: string;
  candidate: string;
  problems: readonly string[];
}): AgentPrompt {
  return {
    messages: [
      { role: "system", content: translatorSystem },
      {
        role: "user",
        content: [
          "The manual:",
          input.manual,
          "",
          "Your policy:",
          "```yaml",
          input.candidate,
          "```",
          "",
          "mentor could not use it:",
          ...input.problems.map((problem) => `- ${problem}`),
          "",
          "Fix these problems. Answer with the whole corrected policy in one ```yaml block.",
        ].join("\n"),
      },
    ],
  };
}

/** The checker found disagreements: fix the policy, or contest a label with a quoted sentence. */
export function translatorDisagreements(input: {
  manual: string;
  candidate: string;
  disagreements: readonly Disagreement[];
  conversations: ReadonlyMap<string, TestConversation>;
}): AgentPrompt {
  const cases = input.disagreements.flatMap((entry) => {
    const conversation = input.conversations.get(entry.conversation);
    return [`${disagreementText(entry)}`, ...(conversation ? [conversationText(conversation)] : []), ""];
  });
  return {
    messages: [
      { role: "system", content: translatorSystem },
      {
        role: "user",
        content: [
          "The manual:",
          input.manual,
          "",
          "Your policy:",
          "```yaml",
          input.candidate,
          "```",
          "",
          "An evaluator wrote test conversations from the manual and labelled them. Your policy disagrees on these:",
          ...cases,
          "For each one, either change the policy so that it agrees, or, if the label is wrong by the manual,",
          "contest it: quote the manual sentence that shows it, word for word, in a ```json block:",
          '{"contests": [{"conversation": "c3", "label": "compliant", "quote": "…", "reason": "…"}]}',
          '("label" is what the conversation should be: "compliant", or "violation" with "sentence": an id).',
          "Answer with the whole policy in one ```yaml block (unchanged if you only contest), then the json block if you contest.",
        ].join("\n"),
      },
    ],
  };
}

export const conversationsSchema = {
  type: "object",
  properties: {
    conversations: {
      type: "array",
      items: {
        type: "object",
        properties: {
          request: { type: "string" },
          calls: {
            type: "array",
            items: {
              type: "object",
              properties: {
                name: { type: "string" },
                arguments: { type: "object" },
                output: { type: "string" },
              },
              required: ["name", "arguments", "output"],
            },
          },
          label: { type: "string", enum: ["compliant", "violation"] },
          sentence: { type: "string" },
        },
        required: ["request", "calls", "label"],
      },
    },
  },
  required: ["conversations"],
};

export function evaluatorPrompt(input: {
  manual: string;
  tools: string;
  task?: string;
  count: number;
}): AgentPrompt {
  return {
    messages: [
      {
        role: "system",
        content: `You are the evaluator. You write test conversations between a user and an agent that uses tools, and
label each by the manual alone: "compliant", or "violation" with the id of the one sentence it breaks.
Mix both: for each sentence about tool calls, one conversation that follows it and one that breaks it.
A conversation is the user's request, then the agent's tool calls in order, each with the tool's output.
Answer with JSON only:
{"conversations": [{"request": "…", "calls": [{"name": "tool", "arguments": {…}, "output": "…"}], "label": "violation", "sentence": "P2"}]}`,
      },
      {
        role: "user",
        content: [
          "The manual:",
          input.manual,
          "",
          "The agent's tools:",
          input.tools,
          ...(input.task ? ["", `What the agent's users ask for: ${input.task}`] : []),
          "",
          `Write ${input.count} conversations.`,
        ].join("\n"),
      },
    ],
  };
}

export const rulingSchema = {
  type: "object",
  properties: {
    winner: { type: "string", enum: ["evaluator", "translator"] },
    reason: { type: "string" },
  },
  required: ["winner", "reason"],
};

export function orchestratorPrompt(input: {
  manual: string;
  conversation: TestConversation;
  proposed: string;
  quote: string;
  reason: string;
}): AgentPrompt {
  return {
    messages: [
      {
        role: "system",
        content: `You are the orchestrator. Two agents disagree on the label of a test conversation. Decide by the manual
alone, not by what either agent wants. Answer with JSON only: {"winner": "evaluator" or "translator", "reason": "…"}`,
      },
      {
        role: "user",
        content: [
          "The manual:",
          input.manual,
          "",
          "The conversation:",
          conversationText(input.conversation),
          "",
          `The evaluator labelled it: ${labelText(input.conversation.expected)}.`,
          `The translator says it is: ${input.proposed}, quoting the manual: "${input.quote}"${input.reason ? ` (${input.reason})` : ""}.`,
          "",
          "Who is right by the manual?",
        ].join("\n"),
      },
    ],
  };
}

export function paraphrasePrompt(rule: string): AgentPrompt {
  return {
    messages: [
      {
        role: "system",
        content: `You read formal rules of a mentor policy (LTLf over tool calls, with past operators; constraints on a call's
arguments) and say in one plain English sentence what the rule requires of an agent. Do not mention formulas.
${policyFormat}`,
      },
      { role: "user", content: `${rule}\n\nWhat does this rule require? One sentence.` },
    ],
  };
}

export const judgeSchema = {
  type: "object",
  properties: { same: { type: "boolean" }, difference: { type: "string" } },
  required: ["same", "difference"],
};

export function judgePrompt(input: { sentence: string; paraphrase: string }): AgentPrompt {
  return {
    messages: [
      {
        role: "system",
        content: `You compare two sentences about what an agent may or must do with its tools. Answer with JSON only:
{"same": true or false, "difference": "what one allows or requires that the other does not, or empty"}`,
      },
      {
        role: "user",
        content: `A: ${input.sentence}\nB: ${input.paraphrase}\nDo A and B require and forbid the same tool calls?`,
      },
    ],
  };
}
