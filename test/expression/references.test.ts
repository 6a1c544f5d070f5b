import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseExpression, referencesOf } from "../../src/expression/index.js";

function references(text: string): [string, (string | number)[], string][] {
  return referencesOf(parseExpression(text)).map((reference) => [
    reference.kind,
    reference.path,
    text.slice(reference.offset, reference.offset + reference.length),
  ]);
}

describe("referencesOf", () => {
  test("lists every reference with its path and span, in text order", () => {
    const text =
      "a.items[0].sku == route.origin && o.label == 'short' || task.request_travel.urgent == true && a.items[0].sku != x";
    assert.deepEqual(references(text), [
      ["arguments", ["items", 0, "sku"], "a.items[0].sku"],
      ["variable", ["route", "origin"], "route.origin"],
      ["outcome", ["label"], "o.label"],
      ["task", ["request_travel", "urgent"], "task.request_travel.urgent"],
      ["arguments", ["items", 0, "sku"], "a.items[0].sku"],
      ["variable", ["x"], "x"],
    ]);
  });

  test("lists history functions with their tool, proposition and argument names", () => {
    const text =
      "held('checked') && count('book_flight') < 2 && a.seat in values('check_seat', 'seat') && a.amount <= last('get_order').paid_amount";
    assert.deepEqual(references(text), [
      ["held", ["checked"], "held('checked')"],
      ["count", ["book_flight"], "count('book_flight')"],
      ["arguments", ["seat"], "a.seat"],
      ["values", ["check_seat", "seat"], "values('check_seat', 'seat')"],
      ["arguments", ["amount"], "a.amount"],
      ["last", ["get_order"], "last('get_order')"],
    ]);
  });

  test("finds references inside lists, methods, len and member access", () => {
    assert.deepEqual(references("[a.x, len(y)].contains(o.z.lower())"), [
      ["arguments", ["x"], "a.x"],
      ["variable", ["y"], "y"],
      ["outcome", ["z"], "o.z"],
    ]);
    assert.deepEqual(references("1 + 2 == 3 && 'a' in ['a']"), []);
    assert.deepEqual(references("a"), [["arguments", [], "a"]]);
  });
});
