import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Evaluator } from "../../src/evaluator/index.js";
import type { ChatTool, ParameterSchema } from "../../src/openai/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { shieldSetsFor } from "../../src/shield/token/index.js";
import {
  hermesSyntax,
  readTextCalls,
  toolCallGrammar,
  upstreamShield,
} from "../../src/shield/upstream/index.js";
import { Conversation } from "../support/conversation.js";
import { Gbnf } from "../support/gbnf.js";

const policyFile = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
const evaluator = new Evaluator(loadPolicy(policyFile));
const toronto = { origin: "Toronto", destination: "Chicago" };
const request = { name: "request_travel", arguments: { ...toronto, urgent: false } };

function tool(
  name: string,
  properties: Record<string, ParameterSchema>,
  required = Object.keys(properties),
): ChatTool {
  return { type: "function", function: { name, parameters: { type: "object", properties, required } } };
}
const route = { origin: { type: "string" }, destination: { type: "string" } };
const travelTools = [
  tool("check_distance", route),
  tool("check_seats", route),
  tool("book_train", route),
  tool("book_flight", { ...route, travel_class: { type: "string", enum: ["economy", "business"] } }),
];

/** A call as the upstream writes it under the grammar. */
const call = (name: string, args: Record<string, unknown>) =>
  `${hermesSyntax.prefix}${name}${hermesSyntax.paramsPrefix}${JSON.stringify(args).replaceAll('":', '": ').replaceAll(',"', ', "')}${hermesSyntax.suffix}`;

describe("the token shield over an upstream (request fields)", () => {
  test("at the start: only the safe tools, tool_choice required, bookings out of the grammar", () => {
    const start = new Conversation([request]).messages;
    const sets = shieldSetsFor(evaluator, start);
    const plain = upstreamShield({ sets, tools: travelTools, toolChoice: "auto" });
    assert.equal(plain.refusal, undefined);
    if (plain.refusal !== undefined) return;
    assert.deepEqual(
      plain.tools.map((entry) => entry.function.name),
      ["check_distance", "check_seats"],
    );
    assert.equal(plain.toolChoice, "required");
    assert.equal(plain.grammar, undefined);

    const shielded = upstreamShield({ sets, tools: travelTools, toolChoice: "auto", grammar: "gbnf" });
    if (shielded.refusal !== undefined) return assert.fail(shielded.refusal);
    // llama.cpp's server refuses a grammar together with tools unless tool_choice is none.
    assert.equal(shielded.toolChoice, "none");
    const grammar = new Gbnf(shielded.grammar as string);
    assert.ok(grammar.matches(call("check_distance", toronto)));
    // As the local engine, a required call starts the answer: text first is where models put calls as text.
    assert.equal(grammar.matches(`Let me check.\n${call("check_distance", toronto)}`), false);
    assert.ok(grammar.matches(`${call("check_distance", toronto)}\n${call("check_seats", toronto)}`));
    // Ending the turn is not allowed: text alone is not in the language.
    assert.equal(grammar.matches("Your trip is booked."), false);
    // No string of the grammar starts a booking.
    for (const name of ["book_train", "book_flight", "book", "check_d1"])
      assert.equal(grammar.viablePrefix(`${hermesSyntax.prefix}${name}`), false, name);
    assert.ok(grammar.viablePrefix(`${hermesSyntax.prefix}check_d`));
    // Calls hidden in text are not possible either.
    assert.equal(grammar.viablePrefix('Sure: <tool_call>\n{"name": "book_flight'), false);
    assert.equal(grammar.viablePrefix('```json\n{"name": "book_flight'), false);
    assert.equal(grammar.viablePrefix('{"name": "book_flight'), false);
  });

  test("seats available, no urgent need: business class is narrowed out of the enum and the grammar", () => {
    const ready = new Conversation([request])
      .call("check_distance", toronto, { label: "long" })
      .call("check_seats", toronto, { label: "available" }).messages;
    const sets = shieldSetsFor(evaluator, ready);
    const shielded = upstreamShield({ sets, tools: travelTools, toolChoice: "auto", grammar: "gbnf" });
    if (shielded.refusal !== undefined) return assert.fail(shielded.refusal);
    const flight = shielded.tools.find((entry) => entry.function.name === "book_flight");
    assert.deepEqual(flight?.function.parameters?.properties?.travel_class?.enum, ["economy"]);
    // The request's own tools are not changed.
    assert.deepEqual(travelTools[3]?.function.parameters?.properties?.travel_class?.enum, [
      "economy",
      "business",
    ]);
    const grammar = new Gbnf(shielded.grammar as string);
    assert.ok(grammar.matches(call("book_flight", { ...toronto, travel_class: "economy" })));
    assert.equal(grammar.matches(call("book_flight", { ...toronto, travel_class: "business" })), false);
    assert.equal(
      grammar.viablePrefix(
        `${hermesSyntax.prefix}book_flight", "arguments": {"origin": "Toronto", "destination": "Chicago", "travel_class": "b`,
      ),
      false,
    );
  });

  test("an argument's limits go up as JSON Schema's, and allowed values stay within the enum", () => {
    const tools = [
      tool("dispense", { days: { type: "integer" }, items: { type: "array" }, kind: { enum: ["a", "b"] } }),
    ];
    const narrowed = (kind: string[]) => {
      const shielded = upstreamShield({
        sets: {
          arguments: [
            { tool: "dispense", argument: "days", exclusiveMinimum: 0, maximum: 30 },
            {
              tool: "dispense",
              argument: "items",
              minItems: 1,
              itemsAllowed: ["i1", "i2"],
              itemsAtMost: { i1: 1, i2: 2 },
            },
            { tool: "dispense", argument: "kind", allowed: kind },
          ],
        },
        tools,
        toolChoice: "auto",
      });
      if (shielded.refusal !== undefined) return assert.fail(shielded.refusal);
      return shielded.tools[0]?.function.parameters?.properties;
    };
    assert.deepEqual(narrowed(["b", "c"]), {
      days: { type: "integer", exclusiveMinimum: 0, maximum: 30 },
      items: { type: "array", minItems: 1, items: { enum: ["i1", "i2"] }, maxItems: 3 },
      kind: { enum: ["b"] },
    });
    assert.deepEqual(narrowed(["c"])?.kind, { enum: ["a", "b"] }, "c is no value of the enum");
  });

  test("a free string with unsafe values gets not-enum, and the grammar admits every other string", () => {
    const tools = [tool("book_train", route)];
    const sets = {
      arguments: [{ tool: "book_train", argument: "destination", unsafe: ["Chicago", "Chi", "Ch\u00e9"] }],
      doneAllowed: true,
    };
    const shielded = upstreamShield({
      sets,
      tools,
      toolChoice: "auto",
      grammar: "gbnf",
      parallelToolCalls: false,
    });
    if (shielded.refusal !== undefined) return assert.fail(shielded.refusal);
    assert.deepEqual(shielded.tools[0]?.function.parameters?.properties?.destination, {
      type: "string",
      not: { enum: ["Chicago", "Chi", "Ch\u00e9"] },
    });
    assert.equal(shielded.toolChoice, "none");
    const grammar = new Gbnf(shielded.grammar as string);
    const to = (destination: string) => call("book_train", { origin: "Toronto", destination });
    for (const value of ["Chicago", "Chi", "Ch\u00e9"])
      assert.equal(grammar.matches(to(value)), false, value);
    for (const value of ["", "C", "Ch", "Chic", "Chicago2", "Chicag", "Boston", "Ch\u00e8", "chicago"])
      assert.ok(grammar.matches(to(value)), value);
    // Escapes would spell a masked value in other characters: not in shielded strings.
    assert.equal(grammar.matches(to("Chic_go").replace("Chic_go", "Chic\\u0061go")), false);
    // Done is allowed: text alone is fine; one call only.
    assert.ok(grammar.matches("Done."));
    assert.equal(grammar.matches(`${to("Boston")}\n${to("Boston")}`), false);
  });

  test("optional properties may be left out, in declared order", () => {
    const grammar = new Gbnf(
      toolCallGrammar({
        tools: [
          tool(
            "search",
            { query: { type: "string" }, limit: { type: "integer" }, exact: { type: "boolean" } },
            ["query"],
          ),
          tool("ping", {}),
        ],
        mustCall: true,
        parallel: true,
        syntax: hermesSyntax,
      }),
    );
    assert.ok(grammar.matches(call("search", { query: "x" })));
    assert.ok(grammar.matches(call("search", { query: "x", exact: true })));
    assert.ok(grammar.matches(call("search", { query: "x", limit: 3, exact: false })));
    assert.equal(grammar.matches(call("search", { limit: 3 })), false);
    assert.equal(grammar.matches(call("search", { exact: true, query: "x" })), false);
    assert.ok(
      grammar.matches(`${hermesSyntax.prefix}ping${hermesSyntax.paramsPrefix}{}${hermesSyntax.suffix}`),
    );
  });

  test("where the turn may end: text, or text then calls, and no call hidden in the text", () => {
    const grammar = new Gbnf(
      toolCallGrammar({ tools: [tool("ping", {})], mustCall: false, parallel: false, syntax: hermesSyntax }),
    );
    const ping = `${hermesSyntax.prefix}ping${hermesSyntax.paramsPrefix}{}${hermesSyntax.suffix}`;
    assert.ok(grammar.matches("All done."));
    assert.ok(grammar.matches(`Pinging.\n${ping}`));
    assert.equal(grammar.viablePrefix('```json\n{"name": "ping"'), false);
    assert.equal(grammar.viablePrefix('Sure.\n{"name": "ping"'), false);
  });

  test("nothing allowed: a refusal, as the local engine's plan gives", () => {
    const sets = { unsafeTools: ["book_train"], doneAllowed: false };
    const tools = [tool("book_train", route)];
    assert.match(upstreamShield({ sets, tools, toolChoice: "required" }).refusal ?? "", /required/);
    assert.match(upstreamShield({ sets, tools, toolChoice: "auto" }).refusal ?? "", /nothing is allowed/);
    assert.deepEqual(upstreamShield({ sets, tools, toolChoice: "none" }), { tools: [], toolChoice: "none" });
  });

  test("calls written as text are read back", () => {
    const names = new Set(["check_distance", "check_seats", "x"]);
    const text = `I will check.\n${call("check_distance", toronto)}\n${call("check_seats", toronto)}`;
    assert.deepEqual(readTextCalls(text, names), {
      content: "I will check.",
      calls: [
        { name: "check_distance", arguments: toronto },
        { name: "check_seats", arguments: toronto },
      ],
    });
    assert.deepEqual(readTextCalls("Hello.", names), { content: "Hello.", calls: [] });
    assert.deepEqual(readTextCalls('<tool_call>\n{"name": "check_seats", "argu', names).calls, [
      { name: "check_seats", arguments: {}, incomplete: true },
    ]);
    // Without the newlines the syntax has (a model writing on its own, without the grammar).
    assert.deepEqual(
      readTextCalls('<tool_call>{"name": "check_seats", "arguments": {}}</tool_call>', names),
      {
        content: null,
        calls: [{ name: "check_seats", arguments: {} }],
      },
    );
    assert.equal(
      readTextCalls(`${hermesSyntax.prefix}x", "arguments": [1]}\n</tool_call>`, names).calls[0]?.invalid,
      "the arguments are not a JSON object",
    );
  });
});
