import fc from "fast-check";
import type {
  BinaryOperator,
  Expression,
  HistoryFunctionName,
  MethodName,
  PathSegment,
  ReferenceRoot,
} from "../../src/expression/index.js";

const span = { offset: 0, length: 0 };
const binaryOperators: BinaryOperator[] = [
  "||",
  "&&",
  "==",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "in",
  "+",
  "-",
  "*",
  "/",
  "%",
];
const methods: [MethodName, number][] = [
  ["contains", 1],
  ["startsWith", 1],
  ["endsWith", 1],
  ["lower", 0],
  ["upper", 0],
];
const reserved = new Set(["a", "o", "task", "true", "false", "null", "in"]);

const identifier = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/).filter((name) => !reserved.has(name));
/** Any text, including quotes, backslashes, control characters and astral code points. */
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: "binary", maxLength: 4 }));
const segment: fc.Arbitrary<PathSegment> = fc.oneof(
  { weight: 3, arbitrary: identifier },
  { weight: 1, arbitrary: text },
  { weight: 1, arbitrary: fc.nat({ max: 20 }) },
);
const path = fc.array(segment, { maxLength: 3 });

const literal: fc.Arbitrary<Expression> = fc
  .oneof(
    fc.constant(null),
    fc.boolean(),
    fc.nat({ max: 1000 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    text,
  )
  .map((value) => ({ kind: "literal", value, ...span }));

const reference: fc.Arbitrary<Expression> = fc.oneof(
  fc
    .tuple(fc.constantFrom<ReferenceRoot>("arguments", "outcome", "task"), path)
    .map(([root, segments]): Expression => ({ kind: "reference", root, path: segments, ...span })),
  fc.tuple(identifier, path).map(
    ([name, segments]): Expression => ({
      kind: "reference",
      root: "variable",
      path: [name, ...segments],
      ...span,
    }),
  ),
);

const nameLiteral = text.map((value): Expression => ({ kind: "literal", value, ...span }));
const historyCall: fc.Arbitrary<Expression> = fc.oneof(
  fc
    .tuple(fc.constantFrom<HistoryFunctionName>("last", "held", "count"), nameLiteral)
    .map(([name, argument]): Expression => ({ kind: "call", name, arguments: [argument], ...span })),
  fc.tuple(nameLiteral, nameLiteral).map(
    ([tool, argument]): Expression => ({
      kind: "call",
      name: "values",
      arguments: [tool, argument],
      ...span,
    }),
  ),
);

/**
 * Random expressions in the canonical form the parser produces: paths after references are
 * part of the reference node, history functions take string literals, spans are zero.
 */
export function expressionArbitrary(maxDepth = 4): fc.Arbitrary<Expression> {
  const leaf = fc.oneof({ weight: 3, arbitrary: literal }, { weight: 3, arbitrary: reference }, historyCall);
  const of = (depth: number): fc.Arbitrary<Expression> => {
    if (depth <= 0) return leaf;
    const sub = of(depth - 1);
    const nonReference = sub.filter((expression) => expression.kind !== "reference");
    return fc.oneof(
      { weight: 4, arbitrary: leaf },
      {
        weight: 6,
        arbitrary: fc
          .tuple(fc.constantFrom(...binaryOperators), sub, sub)
          .map(([operator, left, right]): Expression => ({ kind: "binary", operator, left, right, ...span })),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom<"!" | "-">("!", "-"), sub)
          .map(([operator, operand]): Expression => ({ kind: "unary", operator, operand, ...span })),
      },
      {
        weight: 1,
        arbitrary: fc
          .array(sub, { maxLength: 3 })
          .map((elements): Expression => ({ kind: "list", elements, ...span })),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(nonReference, segment)
          .map(([object, key]): Expression => ({ kind: "member", object, key, ...span })),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(fc.constantFrom(...methods), sub, sub).map(
          ([[name, arity], target, argument]): Expression => ({
            kind: "method",
            name,
            target,
            arguments: arity === 1 ? [argument] : [],
            ...span,
          }),
        ),
      },
      {
        weight: 1,
        arbitrary: sub.map(
          (argument): Expression => ({ kind: "call", name: "len", arguments: [argument], ...span }),
        ),
      },
    );
  };
  return of(maxDepth);
}
