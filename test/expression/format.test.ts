import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  type Expression,
  forEachNode,
  formatExpression,
  parseExpression,
  sameExpression,
  withoutSpans,
} from "../../src/expression/index.js";
import { expressionArbitrary } from "../support/random-expressions.js";

const span = { offset: 0, length: 0 };
const lit = (value: null | boolean | number | string): Expression => ({ kind: "literal", value, ...span });

function reformat(text: string): string {
  return formatExpression(parseExpression(text));
}

describe("formatExpression", () => {
  test("prints the fewest parentheses", () => {
    const cases: [string, string][] = [
      ["(a.x == 1) && (a.y == 2)", "a.x == 1 && a.y == 2"],
      ["(p || q) && r", "(p || q) && r"],
      ["p || (q && r)", "p || q && r"],
      ["(p || q) || r", "p || q || r"],
      ["p || (q || r)", "p || (q || r)"],
      ["(p - q) - r", "p - q - r"],
      ["p - (q - r)", "p - (q - r)"],
      ["p - (q + r)", "p - (q + r)"],
      ["(p * q) + r", "p * q + r"],
      ["(p + q) * r", "(p + q) * r"],
      ["(p < q) == r", "(p < q) == r"],
      ["p == (q in r)", "p == (q in r)"],
      ["!(p == q)", "!(p == q)"],
      ["(!p) == q", "!p == q"],
      ["-(p + q)", "-(p + q)"],
      ["(-p).x", "(-p).x"],
      ["(p + q).lower()", "(p + q).lower()"],
      ["(a.x).y", "a.x.y"],
      ["(last('t')).x", "last('t').x"],
      ["- 5", "-5"],
      ["-(5)", "-(5)"],
      ["- - 5", "--5"],
      ["(-5)[0]", "(-5)[0]"],
      ["p - -5", "p - -5"],
      ["!(!p)", "!!p"],
    ];
    for (const [text, expected] of cases) assert.equal(reformat(text), expected, text);
  });

  test("prints literals, paths and calls in one canonical style", () => {
    assert.equal(reformat(`"it's" + 'a\\\\b\\n\\u0001'`), String.raw`'it\'s' + 'a\\b\n\u0001'`);
    assert.equal(reformat("a['origin'][0]['first name']"), "a.origin[0]['first name']");
    assert.equal(reformat("[ 1 ,2.50, null,true ]"), "[1, 2.5, null, true]");
    assert.equal(reformat("values( \"t\" , 'arg' )"), "values('t', 'arg')");
    assert.equal(reformat("task . request_travel . urgent"), "task.request_travel.urgent");
    assert.equal(reformat("1e21 + 1e-7"), "1e+21 + 1e-7");
    assert.equal(formatExpression(lit(-0)), "-0");
    assert.equal(formatExpression(lit("\r\t\u007f😀")), String.raw`'\r\t\u007f😀'`);
  });

  test("round-trips: parse(format(e)) has the structure of e", () => {
    fc.assert(
      fc.property(expressionArbitrary(4), (expression) => {
        const text = formatExpression(expression);
        const parsed = parseExpression(text);
        assert.deepEqual(withoutSpans(parsed), withoutSpans(expression), text);
        assert.ok(sameExpression(parsed, expression));
        assert.equal(formatExpression(parsed), text);
      }),
      { numRuns: 1500 },
    );
  });

  test("every node's span is the text of that node", () => {
    fc.assert(
      fc.property(expressionArbitrary(3), (expression) => {
        const text = formatExpression(expression);
        forEachNode(parseExpression(text), (node) => {
          const slice = text.slice(node.offset, node.offset + node.length);
          assert.ok(sameExpression(parseExpression(slice), node), `${slice} in ${text}`);
        });
      }),
      { numRuns: 500 },
    );
  });

  test("sameExpression ignores spans but not structure", () => {
    assert.ok(sameExpression(parseExpression("a.x+1"), parseExpression("  a.x + 1")));
    assert.ok(!sameExpression(parseExpression("a.x + 1"), parseExpression("a.x + 2")));
    assert.ok(!sameExpression(lit(0), lit(-0)));
    assert.ok(!sameExpression(parseExpression("a.x"), parseExpression("a.y")));
    assert.ok(!sameExpression(parseExpression("a[0]"), parseExpression("a['0']")));
  });
});
