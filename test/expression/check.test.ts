import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { MentorError } from "../../src/errors/index.js";
import {
  assertExpressionChecks,
  type CheckEnvironment,
  checkExpression,
  type Expression,
  formatExpression,
  type ProblemKind,
  parseExpression,
} from "../../src/expression/index.js";
import { expressionArbitrary } from "../support/random-expressions.js";

const environment: CheckEnvironment = {
  arguments: {
    origin: "string",
    destination: "string",
    travel_class: { enum: ["economy", "business"] },
    seats: "integer",
    price: "number",
    direct: "boolean",
    passengers: "array",
    options: "object",
    extra: "any",
  },
  outcome: { label: { enum: ["short", "long"] }, status: "string", km: "number" },
  variables: { x: "string", y: "string", route: "object" },
  task: { request_travel: { origin: "string", destination: "string", urgent: "boolean" } },
  tools: {
    check_distance: { arguments: { origin: "string", destination: "string" } },
    book_flight: { arguments: { origin: "string", destination: "string", travel_class: "string" } },
  },
  propositions: ["checked", "short"],
};

/** The problems of `text`, each as [offending text, message, kind]. */
function problems(text: string, where: CheckEnvironment = environment): [string, string, ProblemKind][] {
  return checkExpression(parseExpression(text), where).map((problem) => [
    text.slice(problem.offset, problem.offset + problem.length),
    problem.message,
    problem.kind,
  ]);
}

/** Asserts exactly one problem, of this kind, at `offending`, with a message matching `message`. */
function assertProblem(
  kind: ProblemKind,
  text: string,
  offending: string,
  message: RegExp,
  where = environment,
): void {
  const found = problems(text, where);
  assert.equal(found.length, 1, `${text}: ${JSON.stringify(found)}`);
  const [[at, said, reported]] = found as [[string, string, ProblemKind]];
  assert.equal(at, offending, text);
  assert.equal(reported, kind, text);
  assert.match(said, message, text);
}

const span = { offset: 0, length: 0 };

describe("checkExpression", () => {
  test("accepts well-formed expressions", () => {
    for (const text of [
      "a.origin == x && a.destination == y",
      "o.label == 'short'",
      "a.travel_class == 'economy' || task.request_travel.urgent == true",
      "a.travel_class in ['economy', 'business']",
      "a.price <= last('book_flight').paid_amount",
      "len(a.passengers) > 0 && a.price - a.seats >= 10.5",
      "held('checked') && count('book_flight') < 2 && a.origin in values('check_distance', 'origin')",
      "a.options.window.seat[0] == 'A' && a.extra.anything == 1 && route.origin == a.origin",
      "a.passengers[0].name == 'Ada' && a.origin.lower().contains('par')",
      "a.origin == null && o.km != null && a.seats + 1 > 2 && a.origin + '-' + a.destination == 'x'",
      "a.direct == true && !a.direct && 'a' in a.origin && a == a && o == o && task.request_travel == null",
    ]) {
      assert.deepEqual(problems(text), [], text);
    }
  });

  test("fields after last(): checked where the tool declares its output (labels), free for JSON", () => {
    const declared: CheckEnvironment = {
      ...environment,
      tools: {
        ...environment.tools,
        check_distance: {
          ...environment.tools.check_distance,
          outcome: { label: { enum: ["short", "long"] } },
        },
        book_flight: { ...environment.tools.book_flight, outcome: "any" },
      } as CheckEnvironment["tools"],
    };
    assertProblem(
      "unknown-field",
      "last('check_distance').lable == 'short'",
      "last('check_distance').lable",
      /unknown field 'lable' of last\('check_distance'\) \(what check_distance returned\); its fields are: label/,
      declared,
    );
    assertProblem(
      "not-a-member",
      "last('check_distance').label == 'near'",
      "'near'",
      /'near' is not one of the values of last\('check_distance'\).label: 'short', 'long'/,
      declared,
    );
    assertProblem(
      "no-field",
      "last('check_distance').label.x == 1",
      "last('check_distance').label.x",
      /has no field 'x'/,
      declared,
    );
    for (const text of [
      "last('check_distance').label == 'short' && last('check_distance') == null",
      "last('check_distance')['label'] in ['short', 'long'] && last('check_distance').label == null",
      "last('book_flight').stauts == 'ok' && last('book_flight').a.b[0] == 1",
    ]) {
      assert.deepEqual(problems(text, declared), [], text);
    }
  });

  test("unknown variable", () => {
    assertProblem(
      "unknown-variable",
      "a.origin == z",
      "z",
      /unknown variable 'z'; the variables are: x, y, route/,
    );
    assertProblem("unknown-variable", "z.origin == x", "z.origin", /unknown variable 'z'/);
  });

  test("a and o where they are not available", () => {
    const taskPredicate = { ...environment, arguments: undefined, outcome: undefined };
    assertProblem(
      "unavailable",
      "task.request_travel.urgent && a.origin == x",
      "a.origin",
      /'a' .* is not available here/,
      taskPredicate,
    );
    assertProblem(
      "unavailable",
      "x == 'Paris' || o.label == 'short'",
      "o.label",
      /'o' .* is not available here/,
      taskPredicate,
    );
    assert.deepEqual(problems("o.anything.at.all == 1", { ...environment, outcome: "any" }), []);
  });

  test("unknown argument, outcome and task fields", () => {
    assertProblem(
      "unknown-field",
      "a.origin == x && a.orign == y",
      "a.orign",
      /unknown argument 'orign'; .*: origin, destination,/,
    );
    assertProblem("unknown-field", "a[0] == x", "a[0]", /unknown argument \[0\]/);
    assertProblem(
      "unknown-field",
      "o.lable == 'short'",
      "o.lable",
      /unknown outcome field 'lable'; .*: label, status, km/,
    );
    assertProblem(
      "unknown-field",
      "task.request_travel.urgnt == true",
      "task.request_travel.urgnt",
      /unknown field 'urgnt'; the fields of task call 'request_travel' are: origin, destination, urgent/,
    );
  });

  test("unknown task call, and task without a call", () => {
    assertProblem(
      "unknown-task-call",
      "task.request_trip.urgent",
      "task.request_trip.urgent",
      /unknown task call 'request_trip'; .*: request_travel/,
    );
    assertProblem("unknown-task-call", "task == null", "task", /'task' needs a task call and field/);
  });

  test("paths into values that have no fields", () => {
    assertProblem(
      "no-field",
      "a.origin.city == x",
      "a.origin.city",
      /'origin' is a string; it has no field 'city'/,
    );
    assertProblem(
      "no-field",
      "o.label.text == 'x'",
      "o.label.text",
      /'label' is a string; it has no field 'text'/,
    );
    assertProblem("no-field", "x.name == 'x'", "x.name", /'x' is a string; it has no field 'name'/);
    assertProblem("no-field", "len(a.origin)[0] == 1", "len(a.origin)[0]", /a number has no field \[0\]/);
  });

  test("unknown tool, tool argument and proposition in history functions", () => {
    assertProblem(
      "unknown-tool",
      "count('book_train') < 2",
      "'book_train'",
      /unknown tool 'book_train'; .*: check_distance, book_flight/,
    );
    assertProblem("unknown-tool", 'last("book_train").x == 1', '"book_train"', /unknown tool 'book_train'/);
    assertProblem(
      "unknown-tool-argument",
      "a.origin in values('check_distance', 'seat')",
      "'seat'",
      /unknown argument 'seat' of tool 'check_distance'; its arguments are: origin, destination/,
    );
    assertProblem(
      "unknown-tool",
      "x in values('check_seat', 'seat')",
      "'check_seat'",
      /unknown tool 'check_seat'/,
    );
    assertProblem(
      "unknown-proposition",
      "held('booked')",
      "'booked'",
      /unknown proposition 'booked'; the propositions are: checked, short/,
    );
  });

  test("wrong number of function and method arguments (built by code, not parsed)", () => {
    const tool: Expression = { kind: "literal", value: "check_distance", offset: 6, length: 16 };
    const call: Expression = { kind: "call", name: "count", arguments: [tool, tool], offset: 0, length: 40 };
    const found = checkExpression(call, environment);
    assert.equal(found.length, 1);
    assert.match(found[0]?.message ?? "", /count takes 1 argument, not 2/);
    assert.equal(found[0]?.kind, "arity");
    assert.deepEqual([found[0]?.offset, found[0]?.length], [0, 40]);
    const method: Expression = {
      kind: "method",
      name: "lower",
      target: { kind: "literal", value: "x", ...span },
      arguments: [{ kind: "literal", value: "y", ...span }],
      offset: 3,
      length: 9,
    };
    assert.deepEqual(
      checkExpression(method, environment).map((problem) => [problem.kind, problem.message, problem.offset]),
      [["arity", "lower takes 0 arguments, not 1", 3]],
    );
  });

  test("a tool or proposition name that is not a string literal (built by code)", () => {
    const name: Expression = { kind: "reference", root: "variable", path: ["x"], offset: 5, length: 1 };
    const call: Expression = { kind: "call", name: "held", arguments: [name], offset: 0, length: 7 };
    assert.deepEqual(checkExpression(call, environment), [
      {
        kind: "non-literal-name",
        message: "held() needs the proposition name as a quoted string",
        offset: 5,
        length: 1,
      },
    ]);
  });

  test("unknown function or method name (built by code)", () => {
    const call = { kind: "call", name: "sum", arguments: [], offset: 2, length: 5 } as unknown as Expression;
    assert.deepEqual(
      checkExpression(call, environment).map((problem) => [problem.kind, problem.message, problem.offset]),
      [
        [
          "unknown-function",
          "unknown function 'sum'; the functions are len, subset, submultiset, same_group, except, pluck, where, flat, named, named_changes, last, outcomes, held, count, values",
          2,
        ],
      ],
    );
    const method = {
      kind: "method",
      name: "trim",
      target: { kind: "literal", value: "x", ...span },
      arguments: [],
      offset: 1,
      length: 8,
    } as unknown as Expression;
    assert.deepEqual(
      checkExpression(method, environment).map((problem) => [problem.kind, problem.message, problem.offset]),
      [["unknown-function", "unknown method 'trim'", 1]],
    );
  });

  test("comparisons between known, different types", () => {
    assertProblem(
      "type-mismatch",
      "a.origin < a.seats",
      "a.origin < a.seats",
      /'<' compares a string with a number; it is always false/,
    );
    assertProblem(
      "type-mismatch",
      "a.price == 'cheap'",
      "a.price == 'cheap'",
      /'==' compares a number with a string; they are never equal/,
    );
    assertProblem("type-mismatch", "x != 3", "x != 3", /'!=' compares a string with a number/);
    assertProblem(
      "type-mismatch",
      "a.direct == 'yes'",
      "a.direct == 'yes'",
      /compares a boolean with a string/,
    );
    assertProblem(
      "type-mismatch",
      "a.passengers == 'x'",
      "a.passengers == 'x'",
      /compares a list with a string/,
    );
    assertProblem(
      "type-mismatch",
      "a.direct > false",
      "a.direct > false",
      /'>' orders numbers or strings, not a boolean/,
    );
    assertProblem("type-mismatch", "a.seats >= null", "a.seats >= null", /not null; it is always false/);
    assertProblem("type-mismatch", "held('checked') <= 1", "held('checked') <= 1", /not a boolean/);
    assertProblem(
      "type-mismatch",
      "count('book_flight') == '2'",
      "count('book_flight') == '2'",
      /compares a number with a string/,
    );
    assertProblem(
      "type-mismatch",
      "a.seats in 3",
      "a.seats in 3",
      /'in' needs a list or a string on the right, not a number/,
    );
    assertProblem(
      "type-mismatch",
      "a.seats in a.origin",
      "a.seats in a.origin",
      /'in' looks for a string in a string, not a number/,
    );
    assertProblem("type-mismatch", "a.seats in [1, '2', null]", "'2'", /a string is never equal to a number/);
    assertProblem("type-mismatch", "'a' * 'b' == 1", "'a' * 'b'", /'\*' needs numbers, not a string/);
    // Two fields of different types are both null when absent, so they may be equal.
    assert.deepEqual(problems("a.price == a.origin || len(a.origin) != x"), []);
    assertProblem("type-mismatch", "a.price == held('checked')", "a.price == held('checked')", /never equal/);
    // Unknown types and null are never reported for == and !=.
    assert.deepEqual(
      problems("a.extra == 'x' && a.extra < 2 && a.seats == null && last('book_flight') == 1"),
      [],
    );
  });

  test("an enum compared with a literal that is not one of its members lists the members", () => {
    assertProblem(
      "not-a-member",
      "a.travel_class == 'first'",
      "'first'",
      /'first' is not one of the values of a.travel_class: 'economy', 'business'/,
    );
    assertProblem(
      "not-a-member",
      "'premium' != a.travel_class",
      "'premium'",
      /'premium' is not one of .*'economy', 'business'/,
    );
    assertProblem(
      "not-a-member",
      "o.label == 'medium'",
      "'medium'",
      /not one of the values of o.label: 'short', 'long'/,
    );
    assertProblem(
      "not-a-member",
      "a.travel_class in ['economy', 'frist']",
      "'frist'",
      /'frist' is not one of the values/,
    );
    assertProblem("not-a-member", "a.travel_class == 1", "1", /1 is not one of the values of a.travel_class/);
    assert.deepEqual(problems("a.travel_class == 'economy' && a.travel_class != null"), []);
  });

  test("arithmetic, methods and len on known wrong types", () => {
    assertProblem(
      "type-mismatch",
      "a.origin - 1 == 2",
      "a.origin - 1",
      /'-' needs numbers, not a string; it gives null/,
    );
    assertProblem(
      "type-mismatch",
      "a.origin + 1 == x",
      "a.origin + 1",
      /'\+' adds two numbers or joins two strings, not a string and a number/,
    );
    assertProblem("type-mismatch", "-a.origin == 1", "-a.origin", /unary '-' needs numbers, not a string/);
    assertProblem(
      "type-mismatch",
      "a.seats.contains('1')",
      "a.seats.contains('1')",
      /contains\(\) works on strings, not a number/,
    );
    assertProblem(
      "type-mismatch",
      "a.origin.startsWith(1)",
      "1",
      /startsWith\(\) needs a string argument, not a number/,
    );
    assertProblem(
      "type-mismatch",
      "len(a.seats) > 0",
      "a.seats",
      /len\(\) measures strings and lists, not a number/,
    );
    assertProblem(
      "type-mismatch",
      "subset(a.seats, a.passengers)",
      "a.seats",
      /subset\(\) takes lists, not a number; it gives false/,
    );
    assertProblem(
      "type-mismatch",
      "pluck(a.origin, 'x') == []",
      "a.origin",
      /pluck\(\) takes lists, not a string; it gives null/,
    );
    assertProblem(
      "type-mismatch",
      "flat(a.seats) == []",
      "a.seats",
      /flat\(\) takes lists and objects, not a number; it gives null/,
    );
    assertProblem(
      "type-mismatch",
      "where(a.passengers, 'id', a.origin) == []",
      "a.origin",
      /where\(\) takes lists, not a string; it gives null/,
    );
    assertProblem(
      "type-mismatch",
      "same_group(a.passengers, a.passengers, a.seats)",
      "a.seats",
      /same_group\(\) takes lists, not a number; it gives false/,
    );
    assertProblem(
      "type-mismatch",
      "named(a.seats, a.passengers) == []",
      "a.seats",
      /named\(\) reads a text first, not a number; it gives null/,
    );
    assertProblem(
      "type-mismatch",
      "named_changes(a.origin, a.passengers, a.seats, 'id', 'options') == []",
      "a.seats",
      /named_changes\(\) takes lists, not a number; it gives null/,
    );
    assert.deepEqual(problems("len(named(a.origin, pluck(a.passengers, 'name'))) > 0"), []);
    assert.deepEqual(problems("submultiset(a.passengers, values('book_flight', 'origin'))"), []);
    assert.deepEqual(problems("subset(pluck(a.passengers, 'id'), a.passengers)"), []);
    assert.deepEqual(
      problems("subset(a.passengers, pluck(where(flat(outcomes('book_flight')), 'ok', [true]), 'id'))"),
      [],
    );
  });

  test("reports every problem, in text order", () => {
    const text = "a.orign == z && held('booked') && count('nope') < 'x'";
    assert.deepEqual(
      problems(text).map(([at]) => at),
      ["a.orign", "z", "'booked'", "count('nope') < 'x'", "'nope'"],
    );
  });

  test("never throws, and every problem lies inside the text (random expressions)", () => {
    fc.assert(
      fc.property(expressionArbitrary(4), fc.boolean(), (generated, withCall) => {
        const text = formatExpression(generated);
        const expression = parseExpression(text);
        const where = withCall
          ? environment
          : { ...environment, arguments: undefined, outcome: "any" as const };
        for (const problem of checkExpression(expression, where)) {
          assert.ok(problem.offset >= 0 && problem.length > 0, JSON.stringify(problem));
          assert.ok(problem.offset + problem.length <= text.length, `${JSON.stringify(problem)} in ${text}`);
          assert.ok(problem.message.length > 0);
        }
      }),
      { numRuns: 500 },
    );
  });

  test("assertExpressionChecks throws MNT_ERR_EXPRESSION_TYPE at the first problem", () => {
    const text = "a.origin == x &&\n  a.orign == z";
    assert.doesNotThrow(() => assertExpressionChecks(parseExpression("a.origin == x"), environment));
    try {
      assertExpressionChecks(parseExpression(text), environment, { text, source: "rule P1" });
      assert.fail("expected an error");
    } catch (error) {
      assert.ok(error instanceof MentorError);
      assert.equal(error.code, "MNT_ERR_EXPRESSION_TYPE");
      assert.deepEqual(error.location, { line: 2, column: 3 });
      assert.match(error.message, /rule P1: unknown argument 'orign'.*; unknown variable 'z'/);
    }
  });
});
