export { shieldAiModel, shieldAiTools } from "./ai-sdk.js";
export { callOf, type Guarded, type GuardOptions, outcomeOf, ToolGuard } from "./guard.js";
export { shieldLangChainTools } from "./langchain.js";
