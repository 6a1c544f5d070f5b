import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Policy, parsePolicy } from "../../src/policy/index.js";

/** The travel policy with the LLM labeler allowed for check_seats (the bundled policy forbids it). */
export function travelWithSeatsLlm(): Policy {
  const file = fileURLToPath(new URL("../../../policies/travel/policy.yaml", import.meta.url));
  const text = readFileSync(file, "utf8");
  const declaration = "with a larger labeler.\n      llm: false";
  assert.ok(text.includes(declaration), "the travel policy declares check_seats llm: false");
  return parsePolicy(text.replace(declaration, "with a larger labeler.\n      llm: true"), file);
}
