import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MentorError } from "../../src/errors/index.js";
import {
  type Expression,
  forEachNode,
  lineAndColumn,
  parseExpression,
  type ReferenceRoot,
  withoutSpans,
} from "../../src/expression/index.js";

const span = { offset: 0, length: 0 };
const lit = (value: null | boolean | number | string): Expression => ({ kind: "literal", value, ...span });
const ref = (root: ReferenceRoot, ...path: (string | number)[]): Expression => ({
  kind: "reference",
  root,
  path,
  ...span,
});
const arg = (...path: (string | number)[]) => ref("arguments", ...path);
const variable = (...path: (string | number)[]) => ref("variable", ...path);
const bin = (operator: string, left: Expression, right: Expression) =>
  ({ kind: "binary", operator, left, right, ...span }) as Expression;
const not = (operand: Expression): Expression => ({ kind: "unary", operator: "!", operand, ...span });
const neg = (operand: Expression): Expression => ({ kind: "unary", operator: "-", operand, ...span });

function shape(text: string): unknown {
  return withoutSpans(parseExpression(text));
}

function assertParses(text: string, expected: Expression): void {
  assert.deepEqual(shape(text), withoutSpans(expected), text);
}

function syntaxError(text: string): MentorError {
  try {
    parseExpression(text);
  } catch (error) {
    assert.ok(error instanceof MentorError);
    assert.equal(error.code, "MNT_ERR_EXPRESSION_SYNTAX");
    return error;
  }
  assert.fail(`expected a syntax error for ${JSON.stringify(text)}`);
}

describe("parseExpression", () => {
  test("reads literals", () => {
    assertParses("42", lit(42));
    assertParses("10.5", lit(10.5));
    assertParses("1e3", lit(1000));
    assertParses("2.5E-1", lit(0.25));
    assertParses("-7", lit(-7));
    assertParses("- 7.25", lit(-7.25));
    assertParses("true", lit(true));
    assertParses("false", lit(false));
    assertParses("null", lit(null));
    assertParses("'short'", lit("short"));
    assertParses('"short"', lit("short"));
    assertParses("''", lit(""));
  });

  test("decodes string escapes", () => {
    assertParses(String.raw`'it\'s'`, lit("it's"));
    assertParses(String.raw`"say \"hi\""`, lit('say "hi"'));
    assertParses(String.raw`'a\\b'`, lit("a\\b"));
    assertParses(String.raw`'1\n2\t3\r'`, lit("1\n2\t3\r"));
    assertParses(String.raw`'\u00e9\u20AC'`, lit("é€"));
    assertParses(`'say "hi"'`, lit('say "hi"'));
    assertParses(`"it's"`, lit("it's"));
    assertParses("'😀 ü'", lit("😀 ü"));
  });

  test("reads lists", () => {
    assertParses("[]", { kind: "list", elements: [], ...span });
    assertParses("['damaged', 'wrong item']", {
      kind: "list",
      elements: [lit("damaged"), lit("wrong item")],
      ...span,
    });
    assertParses("[1, [a.x, null], -2]", {
      kind: "list",
      elements: [lit(1), { kind: "list", elements: [arg("x"), lit(null)], ...span }, lit(-2)],
      ...span,
    });
  });

  test("reads references with fields and indexes", () => {
    assertParses("a", arg());
    assertParses("a.origin", arg("origin"));
    assertParses("a.items[0].sku", arg("items", 0, "sku"));
    assertParses("a['first name'][12]", arg("first name", 12));
    assertParses("o.label", ref("outcome", "label"));
    assertParses("o", ref("outcome"));
    assertParses("x", variable("x"));
    assertParses("route.origin", variable("route", "origin"));
    assertParses("task.request_travel.urgent", ref("task", "request_travel", "urgent"));
    assertParses("(a.items)[1]", arg("items", 1));
    // Keywords and method names are ordinary field names after a dot.
    assertParses("a.in.null.contains", arg("in", "null", "contains"));
  });

  test("reads member access on other expressions, methods and functions", () => {
    assertParses("last('get_order').paid_amount", {
      kind: "member",
      object: { kind: "call", name: "last", arguments: [lit("get_order")], ...span },
      key: "paid_amount",
      ...span,
    });
    assertParses("[1, 2][0]", {
      kind: "member",
      object: { kind: "list", elements: [lit(1), lit(2)], ...span },
      key: 0,
      ...span,
    });
    assertParses("a.email.lower().startsWith('admin')", {
      kind: "method",
      name: "startsWith",
      target: { kind: "method", name: "lower", target: arg("email"), arguments: [], ...span },
      arguments: [lit("admin")],
      ...span,
    });
    for (const name of ["contains", "endsWith"]) {
      assertParses(`a.note.${name}('x')`, {
        kind: "method",
        name,
        target: arg("note"),
        arguments: [lit("x")],
        ...span,
      } as Expression);
    }
    assertParses("a.name.upper()", {
      kind: "method",
      name: "upper",
      target: arg("name"),
      arguments: [],
      ...span,
    });
    assertParses("len(a.items)", { kind: "call", name: "len", arguments: [arg("items")], ...span });
    assertParses("held('checked')", { kind: "call", name: "held", arguments: [lit("checked")], ...span });
    assertParses("count('book_flight')", {
      kind: "call",
      name: "count",
      arguments: [lit("book_flight")],
      ...span,
    });
    assertParses('values("check_seat", "seat")', {
      kind: "call",
      name: "values",
      arguments: [lit("check_seat"), lit("seat")],
      ...span,
    });
    // Names of Object.prototype members are ordinary variables and fields.
    assertParses("constructor.toString", variable("constructor", "toString"));
    assertParses("__proto__", variable("__proto__"));
    // A function name without parentheses is a variable.
    assertParses("count", variable("count"));
  });

  test("reads every binary operator", () => {
    for (const operator of ["||", "&&", "==", "!=", "<", "<=", ">", ">=", "in", "+", "-", "*", "/", "%"]) {
      assertParses(`a.x ${operator} y`, bin(operator, arg("x"), variable("y")));
    }
    assertParses("!a.ok", not(arg("ok")));
    assertParses("-a.amount", neg(arg("amount")));
    assertParses("-(5)", neg(lit(5)));
    assertParses("--5", neg(lit(-5)));
    assertParses("!!a.ok", not(not(arg("ok"))));
  });

  test("binds operators loosest first: || && comparisons + * unary postfix", () => {
    const [p, q, r] = [variable("p"), variable("q"), variable("r")];
    assertParses("p || q && r", bin("||", p, bin("&&", q, r)));
    assertParses("p && q || r", bin("||", bin("&&", p, q), r));
    assertParses("p && q == r", bin("&&", p, bin("==", q, r)));
    assertParses("p == q && r", bin("&&", bin("==", p, q), r));
    assertParses("p < q + r", bin("<", p, bin("+", q, r)));
    assertParses("p in q + r", bin("in", p, bin("+", q, r)));
    assertParses("p + q * r", bin("+", p, bin("*", q, r)));
    assertParses("p * q - r % p", bin("-", bin("*", p, q), bin("%", r, p)));
    assertParses("-p * q", bin("*", neg(p), q));
    assertParses("-p.x", neg(variable("p", "x")));
    assertParses("!p == q", bin("==", not(p), q));
    assertParses("!p && q", bin("&&", not(p), q));
    assertParses("!(p == q)", not(bin("==", p, q)));
    assertParses("(p || q) && r", bin("&&", bin("||", p, q), r));
  });

  test("associates binary operators to the left", () => {
    const [p, q, r] = [variable("p"), variable("q"), variable("r")];
    assertParses("p - q - r", bin("-", bin("-", p, q), r));
    assertParses("p / q / r", bin("/", bin("/", p, q), r));
    assertParses("p || q || r", bin("||", bin("||", p, q), r));
    assertParses("p - q + r", bin("+", bin("-", p, q), r));
    assertParses("p - -1", bin("-", p, lit(-1)));
  });

  test("records the span of every node, parentheses included", () => {
    const text = "a.amount <= (last('get_order').paid_amount + 1) && !a.note.contains('x')";
    const expression = parseExpression(text);
    const spans: string[] = [];
    forEachNode(expression, (node) => {
      spans.push(text.slice(node.offset, node.offset + node.length));
    });
    assert.deepEqual(spans, [
      text,
      "a.amount <= (last('get_order').paid_amount + 1)",
      "a.amount",
      "(last('get_order').paid_amount + 1)",
      "last('get_order').paid_amount",
      "last('get_order')",
      "'get_order'",
      "1",
      "!a.note.contains('x')",
      "a.note.contains('x')",
      "a.note",
      "'x'",
    ]);
    const negative = parseExpression("x > -  3");
    assert.equal(negative.kind === "binary" && negative.right.offset, 4);
    assert.equal(negative.kind === "binary" && negative.right.length, 4);
  });

  test("accepts every example of the design", () => {
    for (const text of [
      "a.origin == x && a.destination == y",
      "o.label == 'short'",
      "a.travel_class == 'economy' || task.request_travel.urgent == true",
      "a.amount <= last('get_order').paid_amount",
      "a.reason in ['damaged', 'wrong item'] && !(a.note.contains('ignore'))",
      "a.email.startsWith('admin') || a.email.endsWith('@corp.example')",
      "len(a.items) > 0 && a.total - a.discount >= 10.5",
      "held('checked') && count('book_flight') < 2 && a.seat in values('check_seat', 'seat')",
    ]) {
      assert.doesNotThrow(() => parseExpression(text), text);
    }
  });

  test("reports the line, column and what was expected", () => {
    const cases: [string, number, RegExp][] = [
      ["(a.x == 1", 10, /expected '\)' to close the '\(' at column 1, found the end of the expression/],
      ["a.x == 'abc", 8, /expected ' to close the string that starts here, found the end of the expression/],
      ['a.x == "abc', 8, /expected " to close the string/],
      ["a.x in [1, 2", 13, /expected ',' or '\]' to close the '\[' at column 8, found the end/],
      ["a.x in [1 2]", 11, /expected ',' or '\]'.*found '2'/],
      ["a.x ==", 7, /expected a value .*found the end of the expression/],
      ["a.x && || y", 8, /expected a value .*found '\|\|'/],
      ["a.x == 1 y", 10, /expected an operator or the end of the expression, found 'y'/],
      ["a < b < c", 7, /comparisons do not chain.*found '<'/],
      ["a == b in c", 8, /comparisons do not chain.*found 'in'/],
      [
        "foo(a.x)",
        1,
        /expected a function \(len, subset, submultiset, same_group, except, pluck, where, flat, named, named_changes, last, outcomes, held, count, values\).*found 'foo'/,
      ],
      ["a.x.trim()", 5, /expected a method \(contains, startsWith, endsWith, lower, upper\), found 'trim'/],
      ["last(a.tool)", 6, /expected the tool name as a quoted string, found 'a'/],
      ["held(checked)", 6, /expected the proposition name as a quoted string, found 'checked'/],
      ["values('t', seat)", 13, /expected the argument name as a quoted string, found 'seat'/],
      ["values('t')", 11, /expected ',' \(values takes 2 arguments\), found '\)'/],
      ["len(a, b)", 6, /expected '\)' to close the '\(' at column 4 \(len takes 1 argument\), found ','/],
      ["a.x.lower(1)", 11, /expected '\)'.*\(lower takes 0 arguments\), found '1'/],
      ["a.items[i]", 9, /expected an index \(a non-negative integer or a quoted string\), found 'i'/],
      ["a.items[1.5]", 9, /expected an index/],
      ["a.x.", 5, /expected a field or method name after '.', found the end/],
      ["a.x = 1", 5, /expected '==', found '='/],
      ["a & b", 3, /expected '&&', found '&'/],
      ["a | b", 3, /expected '\|\|', found '\|'/],
      ["a # b", 3, /expected an expression, found '#'/],
      [String.raw`'a\qb'`, 3, /expected an escape .*found '\\q'/],
      [String.raw`'\u12'`, 2, /expected an escape/],
      ["1e999", 1, /expected a finite number, found '1e999'/],
      ["", 1, /expected a value .*found the end of the expression/],
      ["a.x == (1", 10, /expected '\)' to close the '\(' at column 8/],
      ["in", 1, /expected a value .*found 'in'/],
      ["a.x 'abc'", 5, /expected an operator or the end of the expression, found the string 'abc'/],
      ["a.x == 1 2", 10, /found '2'/],
    ];
    for (const [text, column, message] of cases) {
      const error = syntaxError(text);
      assert.deepEqual(error.location, { line: 1, column }, text);
      assert.match(error.message, message, text);
    }
  });

  test("reports lines and columns in multi-line text", () => {
    assert.deepEqual(syntaxError("a.x == 1 &&\n  a.y ==\n").location, { line: 3, column: 1 });
    assert.deepEqual(syntaxError("a.x == 1 &&\n  foo(1)").location, { line: 2, column: 3 });
    assert.deepEqual(syntaxError("a.x == 1 &&\n  a.y == 'abc\n  'x'").location, { line: 2, column: 10 });
    const unclosed = syntaxError("(\n  a.x == 1\n");
    assert.deepEqual(unclosed.location, { line: 3, column: 1 });
    assert.match(unclosed.message, /to close the '\(' at line 1, column 1/);
  });

  test("lineAndColumn locates offsets the way errors do", () => {
    const text = "a.x == 1 &&\n  foo(1)";
    assert.deepEqual(lineAndColumn(text, 0), { line: 1, column: 1 });
    assert.deepEqual(lineAndColumn(text, 11), { line: 1, column: 12 });
    assert.deepEqual(lineAndColumn(text, 14), { line: 2, column: 3 });
    assert.deepEqual(syntaxError(text).location, lineAndColumn(text, 14));
  });

  test("names the source in errors", () => {
    assert.throws(
      () => parseExpression("a.x ==", { source: "policy.yaml rule P3" }),
      /policy.yaml rule P3: expected/,
    );
  });

  test("refuses deep nesting instead of overflowing the stack", () => {
    assert.doesNotThrow(() => parseExpression(`${"(".repeat(150)}1${")".repeat(150)}`));
    assert.match(
      syntaxError(`${"(".repeat(5000)}1${")".repeat(5000)}`).message,
      /at most 200 levels of nesting/,
    );
    assert.match(syntaxError(`${"!".repeat(5000)}true`).message, /at most 200 levels of nesting/);
    assert.match(syntaxError(`${"[".repeat(5000)}`).message, /at most 200 levels of nesting/);
    // Chains without parentheses build deep trees too; they are limited to 1000 levels.
    assert.doesNotThrow(() => parseExpression(Array(1000).fill("1").join(" + ")));
    assert.match(syntaxError(Array(1001).fill("1").join(" + ")).message, /at most 1000 operations deep/);
    assert.match(syntaxError(`x${".lower()".repeat(1500)}`).message, /at most 1000 operations deep/);
    assert.match(syntaxError(`last('t')${"[0]".repeat(1500)}`).message, /at most 1000 operations deep/);
    // A long path is one reference node, however long.
    assert.doesNotThrow(() => parseExpression(`a${".b".repeat(5000)}`));
  });
});
