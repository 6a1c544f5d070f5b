export { readTextCalls, type TextCall, withoutCallWrappers } from "./calls.js";
export {
  type CallSyntax,
  hermesSyntax,
  literal as gbnfLiteral,
  type ToolCallGrammarOptions,
  toolCallGrammar,
} from "./grammar.js";
export {
  plainToolChoice,
  type UpstreamShield,
  type UpstreamShieldOptions,
  upstreamShield,
} from "./request.js";
