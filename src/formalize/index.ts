export { contests, fencedBlocks, jsonValue, policyText } from "./answers.js";
export { type CandidateCheck, checkCandidate } from "./candidate.js";
export {
  type CheckOptions,
  type CheckResult,
  checkSuite,
  type Disagreement,
  disagreementText,
  type Verdict,
} from "./checker.js";
export {
  conversationText,
  type Label,
  labelText,
  readConversations,
  type TestConversation,
} from "./conversation.js";
export { AgentEndpoint, type AgentName, type EndpointOptions, type Exchange } from "./endpoint.js";
export {
  type FormalizeOptions,
  type FormalizeResult,
  formalize,
  type RoundRecord,
  type Ruling,
} from "./loop.js";
export {
  type ManualSentence,
  manualText,
  overlap,
  quotesManual,
  readTools,
  sentenceOf,
  sentencesOfPolicy,
  splitManual,
  toolsSection,
} from "./manual.js";
export { formatExample, policyFormat } from "./prompts.js";
export { reportData, reportMarkdown, type SuiteFile, suiteFile } from "./report.js";
export { type ReviewEntry, reviewPolicy, ruleForReview } from "./review.js";
export { policySkeleton } from "./skeleton.js";
