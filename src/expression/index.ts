export {
  type ArithmeticOperator,
  type BinaryExpression,
  type BinaryOperator,
  type CallExpression,
  type ComparisonOperator,
  type Expression,
  type FunctionName,
  forEachNode,
  type HistoryFunctionName,
  isHistoryFunctionName,
  type ListExpression,
  type LiteralExpression,
  type LogicalOperator,
  type MemberExpression,
  type MethodExpression,
  type MethodName,
  type PathSegment,
  type ReferenceExpression,
  type ReferenceRoot,
  type Span,
  sameExpression,
  type UnaryExpression,
  type UnaryOperator,
  type Value,
  withoutSpans,
} from "./ast.js";
export {
  assertExpressionChecks,
  type CheckEnvironment,
  type CheckOptions,
  checkExpression,
  type ExpressionProblem,
  type FieldType,
  type ProblemKind,
} from "./check.js";
export {
  compareValues,
  evaluateExpression,
  groupMembers,
  type HistoryFunctions,
  holdsIn,
  type Scope,
  valuesEqual,
} from "./evaluate.js";
export { formatExpression } from "./format.js";
export { lineAndColumn, type ParseOptions, parseExpression } from "./parser.js";
export { type Reference, referencesOf } from "./references.js";
