import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  evaluateExpression,
  type HistoryFunctions,
  holdsIn,
  parseExpression,
  type Scope,
  type Value,
} from "../../src/expression/index.js";
import { expressionArbitrary } from "../support/random-expressions.js";

const scope: Scope = {
  arguments: {
    origin: "Paris",
    destination: "Lyon",
    amount: 40,
    total: 100,
    discount: 12.5,
    items: [{ sku: "A1", quantity: 2 }, { sku: "B2" }],
    tags: ["gift", "fragile"],
    email: "Admin@corp.example",
    note: null,
    flag: true,
    empty: "",
    nested: { deep: { value: 7 } },
  },
  outcome: { label: "short", status: "confirmed", km: 391 },
  variables: { x: "Paris", y: "Lyon", route: { origin: "Paris", destination: "Lyon" }, n: 2 },
  task: { request_travel: { origin: "Paris", destination: "Lyon", urgent: false } },
};

function evaluate(text: string, where: Scope = scope): Value {
  return evaluateExpression(parseExpression(text), where);
}

/** Each row: expression, expected value. */
function table(rows: [string, Value][], where: Scope = scope): void {
  for (const [text, expected] of rows) assert.deepEqual(evaluate(text, where), expected, text);
}

function isJson(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value === "object") return Object.values(value).every(isJson);
  return false;
}

class TestHistory implements HistoryFunctions {
  readonly calls: string[] = [];
  last(tool: string): Value {
    this.calls.push(`last ${tool}`);
    return tool === "get_order" ? { paid_amount: 50, lines: [{ sku: "A1" }] } : null;
  }
  outcomes(tool: string): Value[] {
    this.calls.push(`outcomes ${tool}`);
    return tool === "get_product"
      ? [
          { variants: { V1: { id: "V1", ok: true }, V2: { id: "V2", ok: false } } },
          { error: "no such product" },
        ]
      : [];
  }
  held(proposition: string): boolean {
    this.calls.push(`held ${proposition}`);
    return proposition === "checked";
  }
  count(tool: string): number {
    this.calls.push(`count ${tool}`);
    return tool === "book_flight" ? 1 : 0;
  }
  values(tool: string, argument: string): Value[] {
    this.calls.push(`values ${tool} ${argument}`);
    return tool === "check_seat" && argument === "seat" ? ["12A", "14C"] : [];
  }
}

describe("evaluateExpression", () => {
  test("reads literals and lists", () => {
    table([
      ["42", 42],
      ["-2.5", -2.5],
      ["'text'", "text"],
      ["true", true],
      ["null", null],
      ["[1, 'a', [null], a.amount]", [1, "a", [null], 40]],
    ]);
  });

  test("follows paths; anything missing along a path is null", () => {
    table([
      ["a.origin", "Paris"],
      ["a.items[0].sku", "A1"],
      ["a.items[1]['sku']", "B2"],
      ["a.nested.deep.value", 7],
      ["o.label", "short"],
      ["route.destination", "Lyon"],
      ["task.request_travel.urgent", false],
      ["a.missing", null],
      ["a.missing.deeper[3]", null],
      ["a.items[2]", null],
      ["a.items[1].quantity", null],
      ["a.items.sku", null],
      ["a.origin.length", null],
      ["a.origin[0]", null],
      ["a.nested[0]", null],
      ["a.note.text", null],
      ["unknown_variable", null],
      ["task.other_call.field", null],
      ["o.label.x.y.z", null],
      // Only own fields: nothing leaks from Object.prototype.
      ["a.constructor", null],
      ["a.toString", null],
      ["a['__proto__']", null],
      ["a.items.length", null],
    ]);
    assert.equal(evaluate("a.x"), null);
    assert.deepEqual(evaluate("a", { arguments: [1] }), [1]);
    table(
      [
        ["a.x", null],
        ["o.x", null],
        ["x", null],
        ["task.t.f", null],
        ["a", null],
      ],
      {},
    );
    table([["a.x", null]], { arguments: "not an object" });
    table([["a.x", null]], { arguments: { x: undefined } as unknown as Value });
    table([["a[0]", null]], { arguments: [undefined] as unknown as Value });
  });

  test("== and != are deep equality without coercion", () => {
    table([
      ["a.origin == x", true],
      ["a.origin == y", false],
      ["a.origin != y", true],
      ["null == null", true],
      ["a.missing == null", true],
      ["a.missing != null", false],
      ["a.note == null", true],
      ["1 == 1.0", true],
      ["0 == -0", true],
      ["'1' == 1", false],
      ["1 != '1'", true],
      ["null == false", false],
      ["0 == false", false],
      ["'' == null", false],
      ["true == true", true],
      ["[1, [2, 'x']] == [1, [2, 'x']]", true],
      ["[1, 2] == [2, 1]", false],
      ["[1] == [1, 1]", false],
      ["a.route_missing == []", false],
      ["a.items[0] == a.items[0]", true],
      ["a.tags == ['gift', 'fragile']", true],
      ["a.items == a.tags", false],
      ["route == task.request_travel", false],
      ["a.nested == a.nested", true],
    ]);
    const objects: Scope = {
      arguments: { p: { x: 1, y: [true, null] }, q: { y: [true, null], x: 1 }, r: { x: 1 } },
    };
    table(
      [
        ["a.p == a.q", true],
        ["a.p == a.r", false],
        ["a.r == a.p", false],
        ["a.p != a.q", false],
      ],
      objects,
    );
  });

  test("orderings compare numbers with numbers and strings with strings only", () => {
    table([
      ["1 < 2", true],
      ["2 < 1", false],
      ["2 <= 2", true],
      ["3 > 2.5", true],
      ["2 >= 3", false],
      ["-1 < 0", true],
      ["'apple' < 'banana'", true],
      ["'b' <= 'a'", false],
      ["'a' < 'ab'", true],
      ["'ab' >= 'ab'", true],
      ["'Z' < 'a'", true],
      ["1 < '2'", false],
      ["'1' < 2", false],
      ["null < 1", false],
      ["null <= null", false],
      ["a.missing >= 0", false],
      ["a.missing < 0", false],
      ["true > false", false],
      ["[1] < [2]", false],
      ["a.amount <= 40", true],
      ["a.amount > 40", false],
    ]);
  });

  test("orders strings by code point, not by UTF-16 unit", () => {
    // U+FF5E is one UTF-16 unit above the surrogate 0xD83D that starts U+1F600.
    assert.equal("\uff5e" < "😀", false);
    table([
      ["'\uff5e' < '😀'", true],
      ["'😀' > '\uff5e'", true],
      ["'😀' < '😁'", true],
      ["'😀' <= '😀'", true],
    ]);
  });

  test("arithmetic on numbers, + on strings, null for anything else", () => {
    table([
      ["1 + 2", 3],
      ["a.total - a.discount", 87.5],
      ["2 * 3.5", 7],
      ["7 / 2", 3.5],
      ["7 % 3", 1],
      ["-7 % 3", -1],
      ["7.5 % 2", 1.5],
      ["-a.amount", -40],
      ["--a.amount", 40],
      ["'ab' + 'cd'", "abcd"],
      ["a.origin + '-' + a.destination", "Paris-Lyon"],
      ["'a' + 1", null],
      ["1 + '1'", null],
      ["'a' - 'b'", null],
      ["'a' * 2", null],
      ["1 + null", null],
      ["null + null", null],
      ["a.missing + 1", null],
      ["a.missing * 0", null],
      ["1 / 0", null],
      ["0 / 0", null],
      ["1 % 0", null],
      ["true + 1", null],
      ["[1] + [2]", null],
      ["-'a'", null],
      ["-null", null],
      ["1e308 * 10", null],
      ["1e308 + 1e308", null],
      ["(1 + null) == null", true],
    ]);
  });

  test("in tests list membership by deep equality and substrings", () => {
    table([
      ["a.origin in ['Paris', 'Rome']", true],
      ["a.origin in ['Rome']", false],
      ["a.origin in []", false],
      ["null in [null]", true],
      ["a.missing in [1, null]", true],
      ["a.missing in [1]", false],
      ["1 in [1.0]", true],
      ["'1' in [1]", false],
      ["[1, 2] in [[1, 2], [3]]", true],
      ["a.items[0] in a.items", true],
      ["'gift' in a.tags", true],
      ["'ris' in a.origin", true],
      ["'' in a.origin", true],
      ["'x' in a.origin", false],
      ["1 in '123'", false],
      ["null in 'null'", false],
      ["'a' in null", false],
      ["'a' in a.missing", false],
      ["1 in 1", false],
      ["'origin' in a", false],
      ["a.seat in values('check_seat', 'seat')", false],
    ]);
  });

  test("&&, || and ! treat everything but true as false and return booleans", () => {
    const rows: [string, Value][] = [];
    const operands: [string, boolean][] = [
      ["true", true],
      ["false", false],
      ["null", false],
      ["a.missing", false],
      ["1", false],
      ["'true'", false],
      ["[true]", false],
    ];
    for (const [left, leftTruth] of operands) {
      rows.push([`!${left}`, !leftTruth]);
      for (const [right, rightTruth] of operands) {
        rows.push([`${left} && ${right}`, leftTruth && rightTruth]);
        rows.push([`${left} || ${right}`, leftTruth || rightTruth]);
      }
    }
    table(rows);
    table([
      ["!a.flag", false],
      ["!a.missing", true],
      ["!!a.missing", false],
      ["!a.amount == 1", false],
      ["!(a.amount == 1)", true],
    ]);
  });

  test("&& and || short-circuit", () => {
    const history = new TestHistory();
    const where = { ...scope, history };
    assert.equal(evaluate("false && held('a')", where), false);
    assert.equal(evaluate("true || held('b')", where), true);
    assert.equal(evaluate("a.missing && held('c')", where), false);
    assert.deepEqual(history.calls, []);
    assert.equal(evaluate("true && held('d')", where), false);
    assert.equal(evaluate("false || held('checked')", where), true);
    assert.deepEqual(history.calls, ["held d", "held checked"]);
  });

  test("string methods on strings; null on anything else", () => {
    table([
      ["a.email.startsWith('Admin')", true],
      ["a.email.startsWith('admin')", false],
      ["a.email.lower().startsWith('admin')", true],
      ["a.email.endsWith('@corp.example')", true],
      ["a.email.endsWith('.org')", false],
      ["a.email.contains('corp')", true],
      ["a.email.contains('')", true],
      ["a.email.contains('CORP')", false],
      ["a.email.upper()", "ADMIN@CORP.EXAMPLE"],
      ["'İ'.lower() == 'i̇'", true],
      ["a.note.contains('ignore')", null],
      ["a.missing.lower()", null],
      ["a.amount.contains('4')", null],
      ["a.tags.contains('gift')", null],
      ["a.email.contains(1)", null],
      ["a.email.startsWith(a.missing)", null],
      ["!(a.note.contains('ignore'))", true],
    ]);
  });

  test("len counts code points of strings and elements of lists", () => {
    table([
      ["len(a.items)", 2],
      ["len(a.items) > 0", true],
      ["len(a.origin)", 5],
      ["len('')", 0],
      ["len([])", 0],
      ["len('😀é')", 2],
      ["len(a.missing)", null],
      ["len(a.amount)", null],
      ["len(a.nested)", null],
      ["len(a.missing) == 0", false],
    ]);
  });

  test("subset and pluck read lists: a list's elements all in another, a field of each element", () => {
    table([
      ["pluck(a.items, 'sku')", ["A1", "B2"]],
      ["pluck(a.items, 'quantity')", [2, null]],
      ["pluck(a.tags, 'sku')", [null, null]],
      ["pluck(a.missing, 'sku')", null],
      ["subset(['B2'], pluck(a.items, 'sku'))", true],
      ["subset(['B2', 'A1', 'B2'], pluck(a.items, 'sku'))", true],
      ["subset(['B2', 'C3'], pluck(a.items, 'sku'))", false],
      ["subset([], a.tags)", true],
      ["subset([[1]], [[1], 2])", true],
      ["subset(a.tags, a.missing)", false],
      ["subset(a.missing, a.tags)", false],
      ["subset('gift', a.tags)", false],
    ]);
  });

  test("submultiset counts repeats; same_group pairs two lists position by position", () => {
    table([
      ["submultiset(['B2', 'A1'], pluck(a.items, 'sku'))", true],
      ["submultiset(['B2', 'B2'], pluck(a.items, 'sku'))", false],
      ["submultiset(['B2', 'B2'], ['B2', 'A1', 'B2'])", true],
      ["submultiset(['B2', 'B2', 'B2'], ['B2', 'A1', 'B2'])", false],
      ["submultiset([], [])", true],
      ["submultiset(a.tags, a.missing)", false],
      // A group is a list of its members or an object keyed by them.
      ["same_group(['A1', 'B2'], ['A2', 'B1'], [['A1', 'A2'], ['B1', 'B2']])", true],
      ["same_group(['A1', 'B2'], ['B1', 'A2'], [['A1', 'A2'], ['B1', 'B2']])", false],
      ["same_group(['deep', 'A1'], ['deep', 'A2'], [a.nested, ['A1', 'A2']])", true],
      ["same_group(['deep'], ['value'], [a.nested])", false],
      ["same_group(['A1'], ['A2', 'A2'], [['A1', 'A2']])", false],
      ["same_group([], [], [])", true],
      ["same_group(['A1'], ['A1'], [])", false],
      ["same_group(['A1'], ['A1'], 'A1')", false],
      ["same_group(['A1'], a.missing, [['A1']])", false],
    ]);
  });

  test("except and where filter a list by another; flat spreads lists and objects", () => {
    table([
      ["except(a.tags, ['gift'])", ["fragile"]],
      ["except(pluck(a.items, 'sku'), [])", ["A1", "B2"]],
      ["except(a.tags, a.missing)", null],
      ["where(a.items, 'sku', ['B2', 'C3'])", [{ sku: "B2" }]],
      ["where(a.items, 'quantity', [null])", [{ sku: "B2" }]],
      ["where(a.items, 'sku', [])", []],
      ["where(a.items, 'sku', 'B2')", null],
      ["where(a.missing, 'sku', ['B2'])", null],
      ["flat([[1, 2], [], [[3]], 4])", [1, 2, [3], 4]],
      ["flat([a.nested, [a.origin]])", [{ value: 7 }, "Paris"]],
      ["flat(a.nested)", [{ value: 7 }]],
      ["flat(a.origin)", null],
      ["flat(a.missing)", null],
    ]);
  });

  test("named: the names whose last word the text has, ignoring case, hyphens, a possessive and plurals", () => {
    const names =
      "['Vacuum Cleaner', 'Smart Watch', 'Smart Thermostat', 'T-Shirt', 'Headphones', 'Glass', 'Battery']";
    table([
      [
        `named('Return the cleaner, headphone, and smart watch.', ${names})`,
        ["Vacuum Cleaner", "Smart Watch", "Headphones"],
      ],
      [`named("All my TSHIRTS and the watch's strap", ${names})`, ["Smart Watch", "T-Shirt"]],
      [`named('two glasses and spare batteries', ${names})`, ["Glass", "Battery"]],
      // A modifier is not the thing: "smart" names neither smart product.
      [`named('something smart', ${names})`, []],
      ["named('order 123 and 4567', ['123', 456, null])", ["123"]],
      ["named(a.missing, ['Watch'])", null],
      ["named('watch', 'Watch')", null],
    ]);
  });

  test("named_changes: per item, the the candidates of the same options changing only to named values, the most; else some; else all", () => {
    const where: Scope = {
      arguments: {
        items: [
          { id: "S1", options: { color: "blue", size: "S", material: "cotton" } },
          { id: "K1", options: { switch: "linear", light: "RGB" } },
        ],
        variants: [
          { id: "S1", options: { color: "blue", size: "S", material: "cotton" } },
          { id: "S2", options: { color: "purple", size: "S", material: "polyester" } },
          { id: "S3", options: { color: "purple", size: "XL", material: "cotton" } },
          { id: "S4", options: { color: "red", size: "S", material: "cotton" } },
          { id: "S5", options: { color: "blue", size: "M", material: "none" } },
          { id: "S6", options: { color: "blue", size: "M", material: "cotton" } },
          { id: "K2", options: { switch: "clicky", light: "none" } },
          { id: "K3", options: { switch: "tactile", light: "none" } },
          { id: "X1", options: { kind: "purple" } },
        ],
      },
    };
    table(
      [
        // S2 changes only named values (S3 also the size, S4 nothing named): it alone. No
        // keyboard changes only named values; K2 changes one ("clicky").
        [
          "named_changes('a purple shirt in polyester, and the keyboard clicky', a.items, a.variants, 'id', 'options')",
          [
            ["S1", "S2"],
            ["K1", "K2"],
          ],
        ],
        // "medium" says "M", "no" says "none": S5 changes both, S6 only the size (fewer changes).
        ["named_changes('medium size, no logo', [a.items[0]], a.variants, 'id', 'options')", [["S1", "S5"]]],
        // Only changes to some named value and to others: all of them.
        [
          "named_changes('purple or clicky', a.items, a.variants, 'id', 'options')",
          [
            ["S1", "S2", "S3"],
            ["K1", "K2"],
          ],
        ],
        // Nothing named: every candidate but the items.
        [
          "named_changes('something nicer', a.items, a.variants, 'id', 'options')",
          [
            ["S1", "S2", "S3", "S4", "S5", "S6", "K2", "K3", "X1"],
            ["K1", "S2", "S3", "S4", "S5", "S6", "K2", "K3", "X1"],
          ],
        ],
        ["named_changes(a.missing, a.items, a.variants, 'id', 'options')", null],
        ["named_changes('purple', a.items, 'S2', 'id', 'options')", null],
      ],
      where,
    );
  });

  test("history functions come from the caller", () => {
    const history = new TestHistory();
    const where = { ...scope, history };
    table(
      [
        ["last('get_order')", { paid_amount: 50, lines: [{ sku: "A1" }] }],
        ["last('get_order').paid_amount", 50],
        ["last('get_order').lines[0].sku", "A1"],
        ["last('get_order').missing", null],
        ["last('other')", null],
        ["last('other').paid_amount", null],
        ["a.amount <= last('get_order').paid_amount", true],
        ["held('checked')", true],
        ["held('short')", false],
        ["count('book_flight')", 1],
        ["count('book_train')", 0],
        ["count('book_flight') < 2", true],
        ["values('check_seat', 'seat')", ["12A", "14C"]],
        ["values('check_seat', 'other')", []],
        ["outcomes('other')", []],
        [
          "pluck(outcomes('get_product'), 'variants')",
          [{ V1: { id: "V1", ok: true }, V2: { id: "V2", ok: false } }, null],
        ],
        ["pluck(where(flat(pluck(outcomes('get_product'), 'variants')), 'ok', [true]), 'id')", ["V1"]],
        ["'14C' in values('check_seat', 'seat')", true],
        ["held('checked') && count('book_flight') < 2 && '12A' in values('check_seat', 'seat')", true],
      ],
      where,
    );
    assert.ok(history.calls.includes("values check_seat seat"));
  });

  test("without history, history functions give null, false, 0, [] and []", () => {
    table([
      ["last('get_order')", null],
      ["last('get_order').paid_amount", null],
      ["held('checked')", false],
      ["count('book_flight')", 0],
      ["values('check_seat', 'seat')", []],
      ["outcomes('get_product')", []],
    ]);
  });

  test("holdsIn is true only for exactly true", () => {
    const holds = (text: string) => holdsIn(parseExpression(text), scope);
    assert.equal(holds("a.origin == x && a.destination == y"), true);
    assert.equal(holds("o.label == 'short'"), true);
    assert.equal(holds("a.travel_class == 'economy' || task.request_travel.urgent == true"), false);
    assert.equal(holds("a.missing"), false);
    assert.equal(holds("1"), false);
    assert.equal(holds("'true'"), false);
    assert.equal(holds("[true]"), false);
    assert.equal(holds("a.flag"), true);
    assert.equal(holds("a.amount > a.missing"), false);
    assert.equal(holds("!(a.amount > a.missing)"), true);
  });

  test("never throws and always returns JSON on random expressions", () => {
    const history = new TestHistory();
    fc.assert(
      fc.property(expressionArbitrary(4), (expression) => {
        for (const where of [scope, { ...scope, history }, {}]) {
          const value = evaluateExpression(expression, where);
          assert.ok(isJson(value), JSON.stringify(value));
          assert.equal(typeof holdsIn(expression, where), "boolean");
        }
      }),
      { numRuns: 500 },
    );
  });
});
