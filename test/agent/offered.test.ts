import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { offeredCall } from "../../src/agent/offered.js";
import type { ChatTool } from "../../src/openai/index.js";
import { travelTool, travelTools } from "../support/tiny-travel.js";

const route = { origin: "Toronto", destination: "Chicago" };
const ping: ChatTool = { type: "function", function: { name: "ping" } };

describe("offeredCall: only calls the request offers are judged", () => {
  it("keeps a call of an offered tool with declared arguments (fewer than declared too)", () => {
    const call = { name: "book_train", arguments: route };
    assert.equal(offeredCall(call, travelTools, "auto"), call);
    assert.equal(
      offeredCall({ name: "book_train", arguments: {} }, travelTools, "required").invalid,
      undefined,
    );
  });

  it("marks a tool outside tools or tool_choice, naming what is offered", () => {
    const flight = offeredCall({ name: "book_flight", arguments: route }, travelTools, "auto");
    assert.equal(
      flight.invalid,
      "book_flight is not a tool this request offers (it offers check_distance, book_train)",
    );
    const named = offeredCall({ name: "book_train", arguments: route }, travelTools, {
      type: "function",
      function: { name: "check_distance" },
    });
    assert.match(named.invalid ?? "", /it offers check_distance\)$/);
    assert.match(
      offeredCall({ name: "book_train", arguments: route }, travelTools, "none").invalid ?? "",
      /it offers none/,
    );
  });

  it("marks an argument the tool's parameters do not declare", () => {
    const upgraded = offeredCall(
      { name: "book_train", arguments: { ...route, upgrade: "business" } },
      [travelTool("book_train")],
      "auto",
    );
    assert.equal(
      upgraded.invalid,
      "book_train has no parameter upgrade (its parameters: origin, destination)",
    );
    // A tool without parameters takes none; an inherited name is not a declared one.
    assert.match(
      offeredCall({ name: "ping", arguments: { x: 1 } }, [ping], "auto").invalid ?? "",
      /takes none/,
    );
    assert.match(
      offeredCall({ name: "ping", arguments: { toString: 1 } }, [ping], "auto").invalid ?? "",
      /no parameter toString/,
    );
  });

  it("leaves a call whose arguments could not be read as it is", () => {
    const unreadable = { name: "book_flight", arguments: {}, invalid: "the arguments are not valid JSON" };
    assert.equal(offeredCall(unreadable, travelTools, "auto"), unreadable);
  });
});
