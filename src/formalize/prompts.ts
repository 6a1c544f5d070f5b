import type OpenAI from "openai";
import type { Disagreement } from "./checker.js";
import { disagreementText } from "./checker.js";
import { conversationText, labelText, type TestConversation } from "./conversation.js";

/** An example policy (another domain than any the agents formalize) that loads clean: the format by example. */
export const formatExample = `policy: refunds
manual:            # sentence id -> the manual's sentence, verbatim
  R1: Look up an order before refunding it.
  R2: Never refund an order that was not delivered; open a claim instead.
  R3: Refunds over 100 dollars need a manager's approval stated in the request.
tools:             # the agent's tools (keep them as given; add output and labels for text outputs)
  get_order:
    parameters: {order_id: string}
    output: text                       # json (default) or text
    labels: {delivered: the order was delivered, lost: the order was not delivered}
    labeler: {rules: [{label: lost, regex: 'not delivered|lost'}], llm: true}
  refund:
    parameters: {order_id: string, amount: number}
  open_claim:
    parameters: {order_id: string}
task:              # facts read from the user's request, as pseudo calls
  request_refund:
    parameters: {order_id: string, approved: boolean}
    grounding: {llm: true}
entities:          # what rules are tracked per: variable -> task call field
  order: {from: {request_refund: {x: order_id}}}
propositions:      # name(entities): a call of a tool, a predicate on its arguments a, on its outcome o
  looked_up(order): {tool: get_order, when: "a.order_id == x"}
  lost(order): {tool: get_order, when: "a.order_id == x", outcome: "o.label == 'lost'"}
  refunded(order): {tool: refund, when: "a.order_id == x"}
  claimed(order): {tool: open_claim, when: "a.order_id == x"}
  any_refund: {tool: refund}           # a proposition without entities
rules:             # LTLf with past operators; id = the sentence id, or ID_suffix with a sentence
  - {id: R1, template: precedence, a: "looked_up(order)", b: "refunded(order)"}   # = G(b -> O a)
  - {id: R2, ltl: "G(lost(order) -> G !refunded(order))"}
  - id: R2_claim
    ltl: "G(lost(order) -> F claimed(order))"
    applies_to: requested              # a duty only for the orders the user asked about
    sentence: "R2: Never refund an order that was not delivered; open a claim instead."
constraints:       # a rule on the arguments of one call (cannot read o)
  - {id: R3, on: refunded(order), require: "a.amount <= 100 || task.request_refund.approved == true"}
`;

/** The policy format in brief: what the translator writes (docs/policy.md is the full text). */
export const policyFormat = `A mentor policy is YAML, for example:
${formatExample}
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

/**
 * How the translator answers: a YAML block, or, where the endpoint decodes under the policy's
 * grammar (`json`), the same policy as one JSON object (JSON is YAML; the loader reads both).
 */
function translatorSystem(json: boolean): string {
  return `You are the translator. You formalize a procedural manual into a mentor policy that a
runtime monitor enforces on an agent's tool calls.
${policyFormat}
${json ? "Answer with the whole policy as one JSON object with the same fields (JSON is YAML)." : "Answer with the whole policy in one ```yaml block."}`;
}

/** The last line of a translator request: the policy in the form the answer takes. */
function wholePolicy(json: boolean, what: string): string {
  return json
    ? `Answer with the whole ${what} as one JSON object.`
    : `Answer with the whole ${what} in one \`\`\`yaml block.`;
}

export function translatorFirst(input: {
  manual: string;
  tools: string;
  task?: string;
  json?: boolean;
}): AgentPrompt {
  return {
    messages: [
      { role: "system", content: translatorSystem(input.json === true) },
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
  /** The propositions the candidate declares, listed when a problem is a reference. */
  atoms?: readonly string[];
  json?: boolean;
}): AgentPrompt {
  const references = input.problems.some((problem) => /REFERENCE|DUPLICATE/.test(problem));
  return translatorFollowUp(input, [
    "mentor could not use it:",
    ...input.problems.map((problem) => `- ${problem}`),
    ...(references && input.atoms && input.atoms.length > 0
      ? [declaredLine(input.atoms), "Each rule and constraint id is used once."]
      : []),
    "",
    `Fix these problems. ${wholePolicy(input.json === true, "corrected policy")}`,
  ]);
}

function declaredLine(atoms: readonly string[]): string {
  return `The declared propositions, the only names a formula or a constraint's \`on\` may use: ${atoms.join(", ")}.`;
}

/**
 * The rules step (src/formalize/rules-step.ts): the candidate's declarations loaded, its rules did
 * not; the rules and constraints again, filed under the sentences they formalize, under a grammar
 * that admits only the declared propositions.
 */
export function translatorRules(input: {
  manual: string;
  candidate: string;
  problems: readonly string[];
  atoms: readonly string[];
}): AgentPrompt {
  return translatorFollowUp({ ...input, json: true }, [
    "Its declarations load, but its rules and constraints do not:",
    ...input.problems.map((problem) => `- ${problem}`),
    "",
    declaredLine(input.atoms),
    "Write the rules and constraints again as one JSON object: each manual sentence id that rules formalize",
    "maps to a list of them (the ids are numbered for you; a rule has no `id`). For the example manual:",
    '{"R1": [{"template": "precedence", "a": "looked_up(order)", "b": "refunded(order)"}],',
    ' "R2": [{"ltl": "G(lost(order) -> G !refunded(order))"}, {"ltl": "G(lost(order) -> F claimed(order))", "applies_to": "requested"}],',
    ' "R3": [{"on": "refunded(order)", "require": "a.amount <= 100 || task.request_refund.approved == true"}]}',
  ]);
}

/** The checker found disagreements: fix the policy, or contest a label with a quoted sentence. */
export function translatorDisagreements(input: {
  manual: string;
  candidate: string;
  disagreements: readonly Disagreement[];
  conversations: ReadonlyMap<string, TestConversation>;
  json?: boolean;
}): AgentPrompt {
  const cases = input.disagreements.flatMap((entry) => {
    const conversation = input.conversations.get(entry.conversation);
    return [`${disagreementText(entry)}`, ...(conversation ? [conversationText(conversation)] : []), ""];
  });
  return translatorFollowUp(input, [
    "An evaluator wrote test conversations from the manual and labelled them. Your policy disagrees on these:",
    ...cases,
    "For each one, either change the policy so that it agrees, or, if the label is wrong by the manual,",
    input.json === true
      ? "contest it: quote the manual sentence that shows it, word for word, and answer with this JSON instead of a policy:"
      : "contest it: quote the manual sentence that shows it, word for word, in a ```json block:",
    '{"contests": [{"conversation": "c3", "label": "compliant", "quote": "…", "reason": "…"}]}',
    '("label" is what the conversation should be: "compliant", or "violation" with "sentence": an id).',
    input.json === true
      ? "Answer with the whole changed policy as one JSON object, or with the contests."
      : "Answer with the whole policy in one ```yaml block (unchanged if you only contest), then the json block if you contest.",
  ]);
}

/** A later translator turn: the manual, its last policy, and what to do about it. */
function translatorFollowUp(
  input: { manual: string; candidate: string; json?: boolean },
  request: string[],
): AgentPrompt {
  return {
    messages: [
      { role: "system", content: translatorSystem(input.json === true) },
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
          ...request,
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

/** A translator's contests (the answer to disagreements that changes no rule). */
export const contestsSchema = {
  type: "object",
  properties: {
    contests: {
      type: "array",
      items: {
        type: "object",
        properties: {
          conversation: { type: "string" },
          label: { type: "string", enum: ["compliant", "violation"] },
          sentence: { type: "string" },
          quote: { type: "string" },
          reason: { type: "string" },
        },
        required: ["conversation", "label", "quote", "reason"],
        additionalProperties: false,
      },
    },
  },
  required: ["contests"],
  additionalProperties: false,
};

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
